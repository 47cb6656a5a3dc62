package security_test

import (
	"context"
	"testing"

	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/test/apitest"
)

// TestCountsAtTheEndOfBigintCostNothing: a player's wager and loss counts
// for the day, week and month are bigints a bet adds to. A player who had
// carried one to its end (a month of maximum bets, or a winner's net loss
// as far below zero) made every statement holding one of their bets fail:
// their own bets answered 500 for the rest of the period, and every batch
// they were in was placed again bet by bet, which cost every other player
// in it a statement. Now the counts stop at the ends (migration 00027): the
// player's bets and games are answered as anyone's, the counts stay at the
// end, and a limit still refuses.
func TestCountsAtTheEndOfBigintCostNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ctx := context.Background()
	const most = int64(9223372036854775807)
	for _, c := range []struct {
		name string
		lost int64
	}{{"a loser's", most}, {"a winner's", -most}} {
		p := newPlayer(t, env)
		if _, err := p.db.Exec(ctx, `UPDATE users SET
			play_day = date_trunc('day', now(), 'UTC'), play_week = date_trunc('week', now(), 'UTC'),
			play_month = date_trunc('month', now(), 'UTC'),
			play_day_wagered = $2, play_week_wagered = $2, play_month_wagered = $2,
			play_day_lost = $3, play_week_lost = $3, play_month_lost = $3 WHERE id = $1`, p.id, most, c.lost); err != nil {
			t.Fatal(err)
		}
		for _, g := range allGames {
			res := mustOK(t, c.name+" counts, "+string(g.name), p.Do("POST", g.path, g.body("1")))
			id := res.Str("gameId")
			switch g.name {
			case games.Mines:
				if r := mustOK(t, "click", p.Do("POST", "/api/games/mines/click",
					map[string]any{"gameId": id, "row": 0, "col": 0})); r.Get("hitMine") != true {
					mustOK(t, "cash out", p.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": id}))
				}
			case games.Pump:
				if r := mustOK(t, "pump", p.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": id})); r.Get("burst") != true {
					mustOK(t, "cash out", p.Do("POST", "/api/games/pump/cashout", map[string]any{"gameId": id}))
				}
			case games.Blackjack:
				if res.Get("hands.insurance") == "offered" {
					res = mustOK(t, "insurance", p.Do("POST", "/api/games/blackjack/insurance",
						map[string]any{"gameId": id, "accept": false}))
				}
				if res.Get("gameOver") != true {
					mustOK(t, "stand", p.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
				}
			}
		}
		var wagered, lost int64
		if err := p.db.QueryRow(ctx, `SELECT play_month_wagered, play_month_lost FROM users WHERE id = $1`, p.id).
			Scan(&wagered, &lost); err != nil {
			t.Fatal(err)
		}
		if wagered != most {
			t.Errorf("%s counts: the month's wagers %d, want them at the end %d", c.name, wagered, most)
		}
		// Six one-dollar stakes moved the net loss by their losses or wins.
		if moved := c.lost - lost; (c.lost > 0 && (moved < 0 || moved > int64(play.DefaultMaxPayout))) ||
			(c.lost < 0 && (moved > 0 || moved < -int64(money.Dollars(6)))) {
			t.Errorf("%s counts: the month's net loss %d from %d", c.name, lost, c.lost)
		}
		// A limit still refuses: the day's wagers are past any.
		mustOK(t, "wager limit", p.Do("POST", "/api/limits", map[string]any{"wager": map[string]any{"day": 1000}}))
		if r := p.Do("POST", allGames[0].path, allGames[0].body("1")); r.Status != 400 {
			t.Errorf("%s counts, over a wager limit: %d %s, want the limit's refusal", c.name, r.Status, r.Raw)
		}
	}
}
