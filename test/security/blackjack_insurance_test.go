package security_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/test/apitest"
)

// TestInsuranceOfferRevealsNothing: with the dealer showing an ace, nothing
// the player can get before the insurance decision depends on the hole card.
// Two players are dealt the same-looking hand against an ace — one over a
// ten-valued hole card (a dealer natural), one over anything else — and every
// answer before the decision is compared: the deal, the running game, each
// action refused while the decision is pending and an insurance refused for
// want of balance. Only the decision reveals the difference (the dealer
// peeks), as the rules say.
func TestInsuranceOfferRevealsNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	type dealt struct {
		p      *player
		seed   string
		replay *games.BlackjackReplay
	}
	// hand is what the player sees of a deal: its value and shape, which the
	// second player's deal must match.
	hand := func(r *games.BlackjackReplay) string {
		f := strings.Fields(r.Player)
		return strings.Join(f[2:], " ") // "(15)" or "(17, soft)"; the cards differ by suit and rank
	}
	var deals []dealt
	for _, natural := range []bool{true, false} {
		p := newPlayer(t, env)
		server, _, nonce := p.pair(t)
		found := false
		for i := range 100_000 {
			seed := fmt.Sprintf("peek-%d", i)
			o, err := games.Replay(games.Blackjack, fair.NewStream(server, seed, uint64(nonce+1)), games.Params{Rules: 1})
			if err != nil || o.Blackjack.Insurance != "offered" || strings.Contains(o.Blackjack.Player, "(21") {
				continue
			}
			f := strings.Fields(o.Blackjack.Player)
			if f[0][:len(f[0])-len("♠")] == f[1][:len(f[1])-len("♠")] {
				continue // a pair could split: keep both deals alike
			}
			declined, err := games.Replay(games.Blackjack, fair.NewStream(server, seed, uint64(nonce+1)), games.Params{Rules: 1, Actions: "n"})
			if err != nil || (declined.Blackjack.Result == "Dealer has Blackjack! Dealer wins") != natural {
				continue
			}
			if len(deals) > 0 && hand(o.Blackjack) != hand(deals[0].replay) {
				continue
			}
			deals = append(deals, dealt{p, seed, o.Blackjack})
			found = true
			break
		}
		if !found {
			t.Fatalf("no seed deals an ace up with natural=%v", natural)
		}
	}

	// strip removes what differs between any two games: ids, seeds, suits,
	// the cards' faces. What is left is what could carry the hole card.
	strip := func(raw []byte) string {
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			return string(raw)
		}
		for _, m := range []map[string]any{v, asMap(v["blackjack"])} {
			if m == nil {
				continue
			}
			delete(m, "gameId")
			delete(m, "fairness")
			delete(m, "playerHand")
			if d, ok := m["dealerHand"].([]any); ok && len(d) == 2 {
				m["dealerHand"] = d[1] // the hole card only; the up card is an ace of some suit
			}
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	var answers [2][]string
	for i, d := range deals {
		p := d.p
		mustOK(t, "client seed", p.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": d.seed}))
		start := mustOK(t, "deal", p.Do("POST", "/api/games/blackjack/start", map[string]any{"betAmount": 900}))
		id := start.Str("gameId")
		if start.Get("hands.insurance") != "offered" {
			t.Fatalf("no insurance offer: %s", start.Raw)
		}
		answers[i] = append(answers[i], strip(start.Raw))
		for _, a := range []string{"hit", "stand", "double", "split"} {
			r := p.Do("POST", "/api/games/blackjack/"+a, map[string]any{"gameId": id})
			answers[i] = append(answers[i], fmt.Sprintf("%s %d %s", a, r.Status, r.Raw))
		}
		// 100 left of 1000: half of 900 cannot be covered.
		r := p.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": true})
		answers[i] = append(answers[i], fmt.Sprintf("insurance %d %s", r.Status, r.Raw))
		answers[i] = append(answers[i], strip(p.Do("GET", "/api/games/active", nil).Raw))
		// The decision: now the peek shows.
		dec := mustOK(t, "decline", p.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": false}))
		if over := dec.Get("gameOver") == true; over != (i == 0) {
			t.Fatalf("deal %d: declined answer %s", i, dec.Raw)
		}
		if dec.Get("gameOver") != true {
			mustOK(t, "stand", p.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
		}
	}
	for k := range answers[0] {
		if answers[0][k] != answers[1][k] {
			t.Errorf("answer %d depends on the hole card:\n natural: %s\n   other: %s", k, answers[0][k], answers[1][k])
		}
	}
	env.LedgerClean(t)
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
