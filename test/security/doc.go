// Package security is Fairplay's attacker's test suite. Each test plays a
// hostile player (or a stranger) against the real server — in-process on a
// fresh Postgres database and a private Redis prefix, through the same /api
// and Connect routes a browser uses — and asks what the answer, its status,
// its timing or its refusal gives away or lets the attacker gain. Every
// finding of a review against the house becomes a test here that failed
// before its fix. It runs in make test with the race detector; the fuzz
// target FuzzRefusalsIgnoreOutcome runs in the short fuzz pass. The rules'
// side of the stateful games (a refusal decided by the player's view alone,
// a settlement that cannot fail) is tested without a server, in
// internal/play's stateful_test.go, and so are an instant bet's draw doing
// the same work whatever it draws (instant_test.go), a Mines or Pump start
// doing the same work whatever its layout (start_test.go), and an extra stake
// the player's limits refuse being refused before its card is drawn
// (blackjack_test.go); internal/postgres tests the store's side: a staked
// action decided on the locked player (TestStakingActionDecidedOnTheLocked
// Player) and a gone session's refusal held to a fixed time
// (TestRefusalOfAGoneSessionIsHeld), also after a copy that proved stale
// (TestRefusalAfterAStaleCopyIsHeld).
package security
