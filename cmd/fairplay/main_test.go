package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/settings"
)

// TestMain lets a test run this package's main in a child process (the
// test binary re-executed with FAIRPLAY_TEST_RUN_MAIN=1) to see its exit
// codes.
func TestMain(m *testing.M) {
	if os.Getenv("FAIRPLAY_TEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// brokenConfig makes every configuration load fail and removes the database,
// so a command that reads its configuration before its flags fails loudly.
// It sets environment variables: the tests using it are not parallel.
func brokenConfig(t *testing.T) {
	t.Helper()
	t.Setenv("DATABASE_URL", "")
	t.Setenv("REDIS_URL", "")
	t.Setenv("FAIRPLAY_LOG_FORMAT", "neither-json-nor-text")
}

func runOut(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, &out)
	return out.String(), err
}

// TestEveryCommandHasHelp: `fairplay <command> --help` (and -h, and
// `fairplay help <command>`) prints the command's usage, flags and
// variables and succeeds, with no configuration at all.
func TestEveryCommandHasHelp(t *testing.T) {
	brokenConfig(t)
	for _, c := range commands {
		words := strings.Fields(c.name)
		for _, args := range [][]string{
			append(slices.Clone(words), "--help"),
			append(slices.Clone(words), "-h"),
			append([]string{"help"}, words...),
		} {
			out, err := runOut(t, args...)
			if err != nil {
				t.Errorf("fairplay %s: %v", strings.Join(args, " "), err)
				continue
			}
			if !strings.HasPrefix(out, "usage: fairplay "+c.name+" ") {
				t.Errorf("fairplay %s printed %q, want the usage of %s", strings.Join(args, " "), out, c.name)
			}
			fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
			c.setup(fs)
			fs.VisitAll(func(f *flag.Flag) {
				if !strings.Contains(out, "-"+f.Name) {
					t.Errorf("fairplay %s --help lacks the flag -%s", c.name, f.Name)
				}
			})
			env := c.env
			if len(env) == 1 && env[0] == "*" {
				env = nil
				for _, v := range settings.Variables {
					env = append(env, v.Name)
				}
			}
			for _, name := range env {
				if !strings.Contains(out, "\n  "+name+" ") {
					t.Errorf("fairplay %s --help lacks the variable %s", c.name, name)
				}
			}
		}
	}
}

// TestGroupsAndMainUsage: the program's and the groups' help succeed and
// list what they hold; the program's lists every variable of the settings
// package with its default.
func TestGroupsAndMainUsage(t *testing.T) {
	brokenConfig(t)
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, err := runOut(t, args...)
		if err != nil || !strings.HasPrefix(out, "usage: fairplay <command>") {
			t.Fatalf("fairplay %s: %q %v", args[0], out, err)
		}
		for _, c := range commands {
			if !strings.Contains(out, "\n  "+c.name+" ") {
				t.Errorf("fairplay %s lacks the command %s", args[0], c.name)
			}
		}
		for _, v := range settings.Variables {
			def := ""
			if v.Default != "" {
				def = regexp.QuoteMeta(" (default " + v.Default + ")")
			}
			if !regexp.MustCompile(`\n  ` + regexp.QuoteMeta(v.Name) + ` +` + regexp.QuoteMeta(v.Usage) + def + `\n`).MatchString(out) {
				t.Errorf("fairplay %s does not list %s with its default %q", args[0], v.Name, def)
			}
		}
	}
	for _, args := range [][]string{{"admin", "--help"}, {"help", "admin"}, {"keys", "-h"}, {"ledger", "help"}, {"fair", "--help"}} {
		out, err := runOut(t, args...)
		if err != nil || !strings.HasPrefix(out, "usage: fairplay "+args[len(args)-1]) && !strings.HasPrefix(out, "usage: fairplay "+args[0]) {
			t.Errorf("fairplay %s: %q %v", strings.Join(args, " "), out, err)
		}
	}
	out, _ := runOut(t, "admin", "--help")
	if !strings.Contains(out, "admin create") || !strings.Contains(out, "admin promote") {
		t.Errorf("fairplay admin --help: %q", out)
	}
}

// TestBadCommandLines are usage errors (exit 2), found before the
// configuration is read.
func TestBadCommandLines(t *testing.T) {
	brokenConfig(t)
	for _, args := range [][]string{
		{},
		{"serve", "--no-such-flag"},
		{"serve", "extra"},
		{"migrate", "--addr", ":1"},
		{"ledger", "verify", "--fix"},
		{"admin"},
		{"admin", "demote"},
		{"keys", "rotate"},
		{"nonsense"},
		{"fair", "verify", "--nonce", "minus one"},
		{"admin", "promote"},
	} {
		var ue usageError
		if _, err := runOut(t, args...); !errors.As(err, &ue) {
			t.Errorf("fairplay %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
	// Well-formed, so the configuration is read and refused.
	var ue usageError
	if _, err := runOut(t, "migrate"); err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "FAIRPLAY_LOG_FORMAT") {
		t.Errorf("fairplay migrate with a bad FAIRPLAY_LOG_FORMAT: %v", err)
	}
}

// TestExitCodes runs main in a child process: help exits 0 on stdout, a
// usage error 2 on stderr, a failure 1.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"serve", "--help"}, 0, "usage: fairplay serve", ""},
		{[]string{"admin", "create", "-h"}, 0, "usage: fairplay admin create", ""},
		{[]string{"version"}, 0, "dev\n", ""},
		{[]string{"serve", "--bogus"}, 2, "", "flag provided but not defined: -bogus"},
		{[]string{}, 2, "", "usage: fairplay <command>"},
		{[]string{"ledger", "verify"}, 1, "", "fairplay: DATABASE_URL is not set"},
	} {
		cmd := exec.Command(os.Args[0], tc.args...)
		cmd.Env = []string{"FAIRPLAY_TEST_RUN_MAIN=1", "PATH=" + os.Getenv("PATH")}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.HasPrefix(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) ||
			(tc.stdout == "" && stdout.Len() > 0) {
			t.Errorf("fairplay %s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q…, stderr with %q",
				strings.Join(tc.args, " "), code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	info := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/fairplay/fairplay", Version: "v0.0.0-20250101000000-abcdef123456+dirty"},
		Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs.revision", Value: "abcdef1234567890"}, {Key: "vcs.time", Value: "2025-01-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		set  string
		info *debug.BuildInfo
		want string
	}{
		{"v1.2.3", info, "v1.2.3"},
		{"dev", info, "v0.0.0-20250101000000-abcdef123456+dirty"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"dev", nil, "dev"},
	} {
		if got := formatVersion(tc.set, tc.info, false); got != tc.want+"\n" {
			t.Errorf("version %q with %v: %q, want %q", tc.set, tc.info, got, tc.want)
		}
	}
	long := formatVersion("v1.2.3", info, true)
	for _, want := range []string{"v1.2.3\n", "module:   github.com/fairplay/fairplay v0.0.0-20250101000000-abcdef123456+dirty\n",
		"revision: abcdef1234567890 (modified)\n", "time:     2025-01-01T00:00:00Z\n", "go:       go1.99.1 linux/arm64\n"} {
		if !strings.Contains(long, want) {
			t.Errorf("version -v: %q lacks %q", long, want)
		}
	}
	out, err := runOut(t, "version", "-v")
	if err != nil || !strings.Contains(out, "\ngo:       go") {
		t.Errorf("fairplay version -v: %q %v", out, err)
	}
}

// TestFairVerifyBlackjackSplitRules: the offline verifier replays a split
// and an insurance decision under the split rules (--rules 1), the vectors
// of internal/games/verify_test.go, and refuses a split under the classic rules.
func TestFairVerifyBlackjackSplitRules(t *testing.T) {
	t.Parallel()
	out, err := runOut(t, "fair", "verify", "--game", "blackjack", "--server-seed", "server seed", "--client-seed", "client seed",
		"--nonce", "5", "--rules", "1", "--actions", "psd")
	if err != nil || !strings.Contains(out, "second hand: 8♠ 8♣ K♣ (26)") || !strings.Contains(out, "return per base stake: 2x") {
		t.Fatalf("split: %v\n%s", err, out)
	}
	out, err = runOut(t, "fair", "verify", "--game", "blackjack", "--server-seed", "server seed", "--client-seed", "client seed",
		"--nonce", "26", "--rules", "1", "--actions", "i")
	if err != nil || !strings.Contains(out, "result: Dealer has Blackjack! Dealer wins. Insurance pays 2:1") {
		t.Fatalf("insurance: %v\n%s", err, out)
	}
	if _, err := runOut(t, "fair", "verify", "--game", "blackjack", "--server-seed", "server seed", "--client-seed", "client seed",
		"--nonce", "5", "--actions", "p"); err == nil {
		t.Fatal("a split under the classic rules verified")
	}
}
