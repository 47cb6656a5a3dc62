// Command fairplay is the Fairplay server and its operational tools:
//
//	fairplay serve                      serve the API, Connect-RPC and the web app
//	fairplay migrate                    apply the embedded database migrations
//	fairplay admin create|promote       bootstrap administrators
//	fairplay user reset-2fa             turn a user's two-factor sign-in off
//	fairplay keys generate --dir DIR    add an access-token signing key
//	fairplay ledger verify              audit balances against the ledger
//	fairplay fair verify ...            recompute a bet from its seeds
//	fairplay version                    print the version
//
// `fairplay <command> --help` prints a command's flags and the environment
// variables it reads. Configuration comes from the environment (see
// README.md); every command parses its flags before reading it.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/fairplay/fairplay/internal/settings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal starts a graceful stop (serve drains for
	// FAIRPLAY_DRAIN_DELAY); a second one ends the process at once.
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(os.Stderr, ue.Error())
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "fairplay:", err)
		os.Exit(1)
	}
}

// usageError is a command line the program cannot run; main prints it with
// the usage and exits 2.
type usageError string

func (u usageError) Error() string { return string(u) }

// command is one leaf command of the CLI.
type command struct {
	// name is the words that select it: "serve", "admin create".
	name string
	// args describes what follows the name in the usage line.
	args string
	// summary is the one line `fairplay --help` shows.
	summary string
	// env names the settings.Variables the command reads; allEnv for all.
	env []string
	// setup defines the command's flags on fs and returns the function
	// that runs it once they are parsed. It must not read the
	// configuration: `--help` works without any.
	setup func(fs *flag.FlagSet) func(ctx context.Context, stdout io.Writer) error
}

// allEnv marks a command that reads the whole configuration.
var allEnv = []string{"*"}

// serveExtraEnv are the variables serve reads outside the settings package.
var serveExtraEnv = [][3]string{
	{"GOMEMLIMIT", "80MiB", "the Go runtime's soft memory limit"},
	{"GOGC", "400", "the Go collector's heap growth between collections, bounded by GOMEMLIMIT"},
	{"OTEL_*", "", "standard OpenTelemetry variables: traces over OTLP/HTTP when an endpoint is set"},
}

// logEnv are the variables every command that loads the configuration uses
// for its logs.
var logEnv = []string{"FAIRPLAY_LOG_LEVEL", "FAIRPLAY_LOG_FORMAT"}

// commands is the CLI, in the order the usage lists it.
var commands = []command{
	{
		name: "serve", args: "[--addr ADDR]", summary: "serve the API, Connect-RPC and the web app", env: allEnv,
		setup: func(fs *flag.FlagSet) func(context.Context, io.Writer) error {
			addr := fs.String("addr", "", "listen address (overrides FAIRPLAY_HTTP_ADDR)")
			return func(ctx context.Context, _ io.Writer) error { return serve(ctx, *addr) }
		},
	},
	{
		name: "migrate", summary: "apply the embedded database migrations",
		env: append([]string{"DATABASE_URL"}, logEnv...),
		setup: func(*flag.FlagSet) func(context.Context, io.Writer) error {
			return func(ctx context.Context, _ io.Writer) error { return migrate(ctx) }
		},
	},
	{
		name: "admin create", args: "[--username U] [--email E] [--password P] [--if-missing] [--reset-password]",
		summary: "create an administrator (password: --password, FAIRPLAY_ADMIN_PASSWORD, or generated and printed)",
		env:     append([]string{"DATABASE_URL", "FAIRPLAY_ADMIN_PASSWORD"}, logEnv...),
		setup:   adminCreate,
	},
	{
		name: "admin promote", args: "--username U", summary: "make an existing user an administrator",
		env: append([]string{"DATABASE_URL"}, logEnv...), setup: adminPromote,
	},
	{
		name: "user reset-2fa", args: "--username U",
		summary: "turn a user's two-factor sign-in off and end their sessions (a lost authenticator and recovery codes)",
		env:     append([]string{"DATABASE_URL"}, logEnv...), setup: userResetTwoFactor,
	},
	{
		name: "keys generate", args: "--dir DIR [--if-empty]", summary: "write a new access-token signing key into DIR",
		env: []string{"FAIRPLAY_SIGNING_KEYS_DIR"}, setup: keysGenerate,
	},
	{
		name: "ledger verify", summary: "check every balance and bet against the ledger (exit 1 on drift)",
		env: append([]string{"DATABASE_URL"}, logEnv...),
		setup: func(*flag.FlagSet) func(context.Context, io.Writer) error {
			return ledgerVerify
		},
	},
	{
		name: "fair verify", args: "--game G --server-seed S --client-seed C --nonce N [game flags]",
		summary: "recompute a bet's outcome offline from its seeds", setup: fairVerify,
	},
	{
		name: "version", args: "[-v]", summary: "print the version (-v: module, VCS revision and Go version too)",
		setup: func(fs *flag.FlagSet) func(context.Context, io.Writer) error {
			verbose := fs.Bool("v", false, "also print the module, the VCS revision and the Go toolchain")
			return func(_ context.Context, stdout io.Writer) error { return printVersion(stdout, *verbose) }
		},
	},
}

// say prints a command's output. A write error (a closed pipe) is not worth
// failing a command that has done its work: say ignores it.
func say(w io.Writer, format string, a ...any) {
	_, _ = fmt.Fprintf(w, format, a...)
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// run runs the command line args (without the program name), writing
// output and help to stdout.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageError(mainUsage())
	}
	if isHelp(args[0]) {
		if len(args) == 1 {
			_, err := io.WriteString(stdout, mainUsage()+"\n")
			return err
		}
		// fairplay help admin create == fairplay admin create --help
		return run(ctx, append(slices.Clone(args[1:]), "--help"), stdout)
	}
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && slices.Equal(args[:len(words)], words) {
			return c.execute(ctx, args[len(words):], stdout)
		}
	}
	// A group such as `admin` with a missing or unknown subcommand.
	if group := groupUsage(args[0]); group != "" {
		if len(args) > 1 && isHelp(args[1]) {
			_, err := io.WriteString(stdout, group+"\n")
			return err
		}
		if len(args) == 1 {
			return usageError(group)
		}
		return usageError(fmt.Sprintf("unknown command %q\n\n%s", args[0]+" "+args[1], group))
	}
	return usageError(fmt.Sprintf("unknown command %q\n\n%s", args[0], mainUsage()))
}

// execute parses the command's flags, then runs it.
func (c command) execute(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("fairplay "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the errors and the usage are printed here
	runCmd := c.setup(fs)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		_, err := io.WriteString(stdout, c.usage(fs)+"\n")
		return err
	case err != nil:
		return usageError(fmt.Sprintf("fairplay %s: %v\n\n%s", c.name, err, c.usage(fs)))
	case fs.NArg() > 0:
		return usageError(fmt.Sprintf("fairplay %s: unexpected argument %q\n\n%s", c.name, fs.Arg(0), c.usage(fs)))
	}
	return runCmd(ctx, stdout)
}

// usage is the command's help: its usage line, flags and environment.
func (c command) usage(fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: fairplay %s %s\n\n%s\n", c.name, c.args, c.summary)
	var flags bytes.Buffer
	fs.SetOutput(&flags)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	if flags.Len() > 0 {
		fmt.Fprintf(&b, "\nflags:\n%s", flags.String())
	}
	names := c.env
	if slices.Equal(names, allEnv) {
		names = nil
		for _, v := range settings.Variables {
			names = append(names, v.Name)
		}
	}
	if len(names) > 0 {
		b.WriteString("\nenvironment:\n")
		if slices.Equal(c.env, allEnv) {
			writeEnv(&b, names, serveExtraEnv...)
		} else {
			writeEnv(&b, names)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// writeEnv lists variables of settings.Variables with their meanings and
// defaults, then the extra rows (name, default, meaning) of variables read
// elsewhere.
func writeEnv(w io.Writer, names []string, extra ...[3]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range names {
		v, ok := settings.Var(name)
		if !ok {
			panic("fairplay: " + name + " is not in settings.Variables")
		}
		writeVar(tw, v.Name, v.Default, v.Usage)
	}
	for _, row := range extra {
		writeVar(tw, row[0], row[1], row[2])
	}
	_ = tw.Flush()
}

func writeVar(w io.Writer, name, def, usage string) {
	if def != "" {
		usage += " (default " + def + ")"
	}
	say(w, "  %s\t%s\n", name, usage)
}

// groupUsage is the usage of a group of subcommands (`admin`), or "" when
// word names no group.
func groupUsage(word string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		if first, _, multi := strings.Cut(c.name, " "); multi && first == word {
			say(tw, "  %s\t%s\n", c.name, c.summary)
		}
	}
	_ = tw.Flush()
	if b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("usage: fairplay %s <command> [flags]\n\ncommands:\n%s\n`fairplay %s <command> --help` describes one.",
		word, b.String(), word)
}

// mainUsage lists the commands and every environment variable.
func mainUsage() string {
	var b strings.Builder
	b.WriteString("usage: fairplay <command> [flags]\n\ncommands:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		say(tw, "  %s\t%s\n", c.name, c.summary)
	}
	_ = tw.Flush()
	b.WriteString("\n`fairplay <command> --help` describes a command, its flags and the variables it reads.\n")
	b.WriteString("\nenvironment (README.md says more):\n")
	names := make([]string, 0, len(settings.Variables))
	for _, v := range settings.Variables {
		names = append(names, v.Name)
	}
	writeEnv(&b, names, serveExtraEnv...)
	return strings.TrimRight(b.String(), "\n")
}
