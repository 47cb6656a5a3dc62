package play

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/money"
)

// An instant bet is drawn before Postgres checks its stake, and one refused
// there moves no nonce: the player can have the same draw made again and
// again. Its work, counted in heap allocations (which, unlike time, do not
// depend on the machine's load), must be the same whatever is drawn: for
// Keno the number of hits (ten picks, and one pick hit or missed), for dice
// a win or a loss, for Plinko every bucket the nonces reach. Before the fix
// a Keno draw allocated 6 times with no hit and up to 10 with seven (one
// pick: 6 on a miss, 7 on a hit). A finding of a review against the house,
// tested here rather than in test/security: exact counts need no server.
func TestInstantDrawDoesTheSameWork(t *testing.T) {
	ten := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		name   string
		game   Game
		params games.Params
		class  func(games.Outcome) string
	}{
		{"keno, ten picks", Keno, games.Params{Picks: ten, Risk: "high"},
			func(o games.Outcome) string { return strconv.Itoa(len(o.Keno.Matches)) + " hits" }},
		{"keno, one pick", Keno, games.Params{Picks: []int{7}, Risk: "classic"},
			func(o games.Outcome) string { return strconv.Itoa(len(o.Keno.Matches)) + " hits" }},
		{"dice", Dice, games.Params{Target: "50"},
			func(o games.Outcome) string { return "win " + strconv.FormatBool(o.Dice.Win) }},
		{"plinko", Plinko, games.Params{Rows: 16, Risk: "high"},
			func(o games.Outcome) string { return "bucket " + strconv.Itoa(o.Plinko.Bucket) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.params.AppendJSON(nil)
			stake := money.Dollars(1)
			pair := SeedPair{ServerSeed: "a3f1c9e2b7d4e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70", ClientSeed: "hostile"}
			// One nonce per class of outcome, among the first 3,000.
			nonces := map[string]int64{}
			for n := int64(1); n <= 3000; n++ {
				pair.Nonce = n
				out, _, err := drawInstant(tc.game, pair, tc.params, raw, stake, DefaultLimits())
				if err != nil {
					t.Fatal(err)
				}
				if c := tc.class(out); nonces[c] == 0 {
					nonces[c] = n
				}
			}
			if len(nonces) < 2 {
				t.Fatalf("one class of outcome only: %v", nonces)
			}
			allocs := map[string]float64{}
			for c, n := range nonces {
				p := pair
				p.Nonce = n
				allocs[c] = testing.AllocsPerRun(50, func() {
					if _, _, err := drawInstant(tc.game, p, tc.params, raw, stake, DefaultLimits()); err != nil {
						t.Fatal(err)
					}
				})
			}
			first := -1.0
			for _, a := range allocs {
				if first >= 0 && a != first {
					t.Fatalf("the draw's allocations tell its outcomes apart: %v", fmt.Sprint(allocs))
				}
				first = a
			}
			t.Logf("%d classes, %v allocations each", len(allocs), first)
		})
	}
}
