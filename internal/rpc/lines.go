package rpc

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/accounts"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/problem"
	"github.com/fairplay/fairplay/internal/turns"
)

// playerSlots, playerLimit, sessionLimit and lineWait bound a signed-in
// player's calls on one server: playerSlots run at once, the others wait
// their turn in the server (holding no connection); past playerLimit of the
// player's running or waiting, or sessionLimit of one session's, or after
// lineWait in the line, the next is refused with 429.
//
// A player's own requests can wait for their own rows: a top-up, a seed
// rotation, a client seed, their limits or preferences lock the player's
// row; a game action, the game's. Each waited on a connection of the pool
// (8 on two cores), so a dozen of one player's requests sent at once,
// while any of their rows was held (by another of their requests, another
// replica, a slow disk), took the whole pool: every other player's bets,
// sign-ins and reads waited behind them, and the readiness check too, which
// took the replica out of its Service (found by reviews playing a hostile
// player; test/security's TestNoPlayerTakesThePool). Two at a time keeps a
// page that loads several things at once, or a bet and a game action, side
// by side. A session may have 64 running or waiting, far above what a
// browser sends (the race tests of test/api send 50 at once), and a player
// 128 in all: they bound the requests one player keeps waiting. A session
// has at most half of the player's, so whoever holds another session's
// token (stolen, or revoked but not yet expired: an ACCESS_PLAYER call
// checks only the token before its line) cannot fill the owner's line and
// keep them from revoking it (TestAnotherSessionCannotFillTheLine).
const (
	playerSlots  = 2
	playerLimit  = 128
	sessionLimit = playerLimit / 2
	lineWait     = 10 * time.Second
)

// linesOf lets each signed-in player's unary calls (ACCESS_USER,
// ACCESS_PLAYER and ACCESS_ADMIN procedures) through playerSlots at a time
// (turns.Lines),
// before accessOf: the token's claims (its signature, checked in memory)
// name the player and the session, and an ACCESS_USER call's session is
// looked up in Postgres only once the call has its turn. It was looked up
// before the line, so a player's flood of calls, each refused 429 by the
// line, still cost a query apiece on the shared pool (found by a review
// playing a hostile player; TestUserCallsQueryNothingBeforeTheirTurn). A
// token that does not verify passes to accessOf, which refuses it without a
// query. An administrator's calls take the same line: accessOf reads the
// caller's role in Postgres, so a player's flood of admin calls, each then
// refused 403, took the pool as the user calls' lookups had (review of the
// admin API; TestUserCallsQueryNothingBeforeTheirTurn's admin case), and
// an administrator's own searches are two at a time. Public calls pass as
// they are. A refusal depends on nothing but the player's own calls.
func linesOf(svc *accounts.Service) callMiddleware {
	policies := accessPolicies()
	// sessions only counts (as many slots as places): it never makes a
	// call wait.
	sessions := &turns.Lines{Slots: sessionLimit, Limit: sessionLimit}
	players := &turns.Lines{Slots: playerSlots, Limit: playerLimit, MaxWait: lineWait}
	return func(next unaryCall) unaryCall {
		return func(ctx context.Context, c *call) (connect.AnyResponse, error) {
			switch policies[c.procedure] {
			case fairplayv1.Access_ACCESS_USER, fairplayv1.Access_ACCESS_PLAYER, fairplayv1.Access_ACCESS_ADMIN:
			default:
				return next(ctx, c)
			}
			p, err := svc.Claims(bearer(c.header))
			if err != nil {
				return next(ctx, c) // accessOf answers it
			}
			c.claims, c.hasClaims = p, true
			st, err := sessions.Wait(ctx, p.SessionID)
			if err != nil {
				return nil, lineRefusal(err)
			}
			defer sessions.Done(p.SessionID, st)
			tu, err := players.Wait(ctx, p.UserID)
			if err != nil {
				return nil, lineRefusal(err)
			}
			defer players.Done(p.UserID, tu)
			return next(ctx, c)
		}
	}
}

// lineRefusal is what a call refused its place in a line hears.
func lineRefusal(err error) error {
	if errors.Is(err, turns.ErrTooMany) {
		return problem.TooManyRequests(accounts.ErrRateLimited, time.Second)
	}
	return err
}
