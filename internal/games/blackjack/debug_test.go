package blackjack_test

import (
	"testing"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games/blackjack"
)

func TestDebugDist(t *testing.T) {
	m := newModel()
	s := fair.NewStream("a", "b", 0)
	counts := map[blackjack.Outcome]int{}
	acts := map[action]int{}
	doubled := 0
	for nonce := range uint64(200000) {
		s.SetNonce(nonce)
		g, _ := blackjack.New(blackjack.NewDeck(s))
		up := rankOf(g.Dealer[0])
		for !g.Over() {
			hard, ace := 0, false
			for _, c := range g.Player {
				hard += hardValue(rankOf(c))
				ace = ace || rankOf(c) == aceRank
			}
			a := m.decide(hard, ace, len(g.Player), up)
			acts[a]++
			switch a {
			case stand:
				g.Stand()
			case hit:
				g.Hit()
			case double:
				g.Double()
			}
		}
		if g.Doubled {
			doubled++
		}
		counts[g.Outcome]++
	}
	t.Log(counts, acts, doubled)
	for u := range 10 {
		t.Log(u, m.dealer[u], m.bj[u])
	}
}
