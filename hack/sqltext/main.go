// Command sqltext prints one of the statements the server sends Postgres for
// a game action (postgres.Statement), for make bench-sql to run it as the
// server does.
//
//	go run ./hack/sqltext action
package main

import (
	"fmt"
	"os"

	"github.com/fairplay/fairplay/internal/postgres"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sqltext action|action-same|live-session|lock-game|save-game")
		os.Exit(2)
	}
	s, ok := postgres.Statement(os.Args[1])
	if !ok {
		fmt.Fprintf(os.Stderr, "sqltext: no statement %q\n", os.Args[1])
		os.Exit(2)
	}
	fmt.Println(s)
}
