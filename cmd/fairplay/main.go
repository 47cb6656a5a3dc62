// Command fairplay is the Fairplay server and its operational tools:
//
//	fairplay serve                      serve the API, Connect-RPC and the web app
//	fairplay migrate                    apply the embedded database migrations
//	fairplay admin create|promote       bootstrap administrators
//	fairplay keys generate --dir DIR    add an access-token signing key
//	fairplay ledger verify              audit balances against the ledger
//	fairplay fair verify ...            recompute a bet from its seeds
//
// Configuration comes from the environment (see README.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal starts a graceful stop (serve drains for
	// FAIRPLAY_DRAIN_DELAY); a second one ends the process at once.
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Args[1:])
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

type usageError string

func (u usageError) Error() string { return string(u) }

const usage = `usage: fairplay <command> [flags]

commands:
  serve                       serve the API, Connect-RPC and the web app
  migrate                     apply the embedded database migrations
  admin create                create an administrator (--username, --email, --password or FAIRPLAY_ADMIN_PASSWORD)
  admin promote --username U  make an existing user an administrator
  keys generate --dir DIR     write a new access-token signing key into DIR
  ledger verify               check every balance and bet against the ledger (exit 1 on drift)
  fair verify --game G ...    recompute a bet's outcome offline from its seeds
  version                     print the version`

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageError(usage)
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:])
	case "migrate":
		return migrate(ctx, args[1:])
	case "admin":
		return admin(ctx, args[1:])
	case "keys":
		return keys(args[1:])
	case "ledger":
		return ledger(ctx, args[1:])
	case "fair":
		return fairVerify(args[1:])
	case "version":
		fmt.Println(version)
		return nil
	case "help", "-h", "--help":
		fmt.Println(usage)
		return nil
	}
	return usageError(fmt.Sprintf("unknown command %q\n\n%s", args[0], usage))
}
