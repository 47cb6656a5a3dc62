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

// playerSlots and playerLimit bound a signed-in player's calls on one
// server: playerSlots run at once, the others wait their turn in the server
// (holding no connection), and past playerLimit running or waiting the next
// is refused at once with 429.
//
// A player's own requests can wait for their own rows: a top-up, a seed
// rotation, a client seed, their limits or preferences lock the player's
// row; a game action, the game's. Each waited on a connection of the pool
// (8 on two cores), so a few dozen of one player's requests sent at once,
// while any of their rows was held (by another of their requests, another
// replica, a slow disk), took the whole pool: every other player's bets,
// sign-ins and reads waited behind them, and the readiness check too, which
// took the replica out of its Service (found by reviews playing a hostile
// player; test/security's TestNoPlayerTakesThePool). Two at a time keeps a
// page that loads several things at once, or a bet and a game action, side
// by side; 64 is far above what a browser sends (the race tests of test/api
// send 50 at once) and bounds the requests one player keeps waiting.
const (
	playerSlots = 2
	playerLimit = 64
)

// linesOf lets each signed-in player's unary calls (ACCESS_USER and
// ACCESS_PLAYER procedures) through playerSlots at a time (turns.Lines):
// the rule after accessOf, which names the player. Administrators' calls
// and public ones pass as they are. The refusal depends on nothing but the
// count of the player's own calls.
func linesOf() callMiddleware {
	policies := accessPolicies()
	lines := &turns.Lines{Slots: playerSlots, Limit: playerLimit}
	return func(next unaryCall) unaryCall {
		return func(ctx context.Context, c *call) (connect.AnyResponse, error) {
			switch policies[c.procedure] {
			case fairplayv1.Access_ACCESS_USER, fairplayv1.Access_ACCESS_PLAYER:
			default:
				return next(ctx, c)
			}
			p := principal(ctx)
			tu, err := lines.Wait(ctx, p.UserID)
			if errors.Is(err, turns.ErrTooMany) {
				return nil, problem.TooManyRequests(accounts.ErrRateLimited, time.Second)
			}
			if err != nil {
				return nil, err
			}
			defer lines.Done(p.UserID, tu)
			return next(ctx, c)
		}
	}
}
