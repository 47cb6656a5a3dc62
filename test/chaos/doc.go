// Package chaos is the chaos suite: while eight players keep a mixed load
// going (dice, plinko and keno bets, whole Mines, Pump and Blackjack games,
// balance reads, each request with a 5-second deadline), it
//
//  1. kills `fairplay serve` with SIGKILL and starts it again on the same
//     port and signing keys;
//  2. crashes Postgres (an immediate shutdown, recovered from the WAL; every
//     other round a fast shutdown) and starts it again under the running
//     server;
//  3. kills Redis and starts it again under the running server;
//
// and requires that readiness turns false during the server and Postgres
// outages and true after them without anyone touching the server, that it
// stays true through the Redis outage (which the server notices, in
// fairplay_dependency_up), that bets succeed after each
// recovery (and during the Redis outage, since rate limits fail open), that
// no request hangs past its deadline, that every error is an honest one (a
// 503 with a JSON message, or no answer at all: never a 4xx or a 500), and
// at the end that
// `fairplay ledger verify` is clean, no bet is half applied (stake, nonce and
// payout all present or all absent), every running game could be finished,
// every bet a player saw settle exists on the server exactly as seen, no more
// bets exist than the requests that got no definite answer explain, and the
// admin dashboard's figures equal the bets.
//
// It runs its own Postgres (initdb into a temporary directory, as the
// postgres user when run as root) and redis-server on free ports, because it
// stops them: the shared instances of `make test` serve other packages at the
// same time. Missing binaries fail the test.
//
// TestFailover (failover_test.go) runs the same load and the same end-of-run
// checks through the loss of the database's primary: a primary and a
// streaming standby, the primary SIGKILLed, the standby promoted and the old
// primary rebuilt as the new standby, round after round, in synchronous and
// asynchronous replication (FAILOVER_ROUNDS, FAILOVER_REPLICATION,
// FAILOVER_PAUSE).
//
// The short form (one round, about 20 s plus the build) runs in `make test`.
// Knobs: CHAOS_ROUNDS (default 1) repeats the three drills; CHAOS_PAUSE
// (default 2s) is how long the load runs after each recovery before the next
// drill. A long run, with the per-phase table, the readiness transitions and
// the server's errors in the output:
//
//	CHAOS_ROUNDS=20 CHAOS_PAUSE=10s go test -race -count=1 -v -timeout 60m ./test/chaos/
package chaos
