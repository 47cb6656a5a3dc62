package games_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
)

const pumpSeed = "564e967b90f03d0153fdcb2d2d1cc5a5057e0df78163611fe3801d6498e681ca"

func TestReplay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		server, client string
		nonce          uint64
		game           games.Name
		params         games.Params
		want           []string // lines String must contain
	}{
		{
			name: "dice vector", server: "server seed", client: "client seed", nonce: 1,
			game: games.Dice, params: games.Params{Target: "80"},
			want: []string{"roll: 74.67", "target: under 80", "win: true", "multiplier: 1.24x"},
		},
		{
			name: "dice loses on higher roll", server: "server seed", client: "client seed", nonce: 2,
			game: games.Dice, params: games.Params{Target: "50"},
			want: []string{"roll: 53.86", "win: false", "multiplier: 0x"},
		},
		{
			name: "plinko vector", server: "server seed", client: "client seed", nonce: 1,
			game: games.Plinko, params: games.Params{Rows: 8, Risk: "medium"},
			want: []string{"bucket: 7", "multiplier: 3x"},
		},
		{
			name: "keno vector", server: "server seed", client: "client seed", nonce: 1,
			game: games.Keno, params: games.Params{Risk: "classic", Picks: []int{30, 26, 1}},
			want: []string{"drawn: 30 26 10 37 22 35 25 24 39 4", "matches: 30 26", "multiplier: 3.1x"},
		},
		{
			name: "mines vector", server: "server seed", client: "client seed", nonce: 1,
			game: games.Mines, params: games.Params{Mines: 3},
			want: []string{"mine tiles: 18 15 5", "mine positions (row,col): 3,3 3,0 1,0"},
		},
		{
			name: "mines with reveals cashed out", server: "server seed", client: "client seed", nonce: 1,
			game: games.Mines, params: games.Params{Mines: 3, Reveals: []int{0, 1}},
			want: []string{"revealed: 0 1", "status: won", "multiplier: 1.29x"},
		},
		{
			name: "mines with a mine revealed", server: "server seed", client: "client seed", nonce: 1,
			game: games.Mines, params: games.Params{Mines: 3, Reveals: []int{0, 18}},
			want: []string{"status: lost", "multiplier: 0x"},
		},
		{
			name: "pump vector", server: pumpSeed, client: "zXv1upuFns", nonce: 5663,
			game: games.Pump, params: games.Params{Difficulty: "expert"},
			want: []string{"pops: 16 25 20 13 15 14 23 18 19 17", "bursts on pump: 13", "safe pumps: 12 (11200.65x)"},
		},
		{
			name: "pump cashed out", server: pumpSeed, client: "zXv1upuFns", nonce: 5663,
			game: games.Pump, params: games.Params{Difficulty: "expert", Pumps: 3},
			want: []string{"status: won", "multiplier: 4.95x"},
		},
		{
			name: "pump burst", server: pumpSeed, client: "zXv1upuFns", nonce: 5663,
			game: games.Pump, params: games.Params{Difficulty: "expert", Pumps: 13},
			want: []string{"status: burst", "multiplier: 0x"},
		},
		{
			name: "blackjack deal", server: "server seed", client: "client seed", nonce: 1,
			game: games.Blackjack,
			want: []string{"cards: J♠ 10♥ 5♥ K♣ ", "player: J♠ 5♥ (15)", "dealer: 10♥ K♣ (20)"},
		},
		{
			name: "blackjack stand", server: "server seed", client: "client seed", nonce: 1,
			game: games.Blackjack, params: games.Params{Actions: "s"},
			want: []string{"result: Dealer wins", "stakes: 1", "multiplier: 0x"},
		},
		// The split rules (rules 1). Nonce 5 deals 8♦ 8♠ against 6♦ (hole 6♣): the split
		// gives hand 1 the fifth card (Q♦) and hand 2 the sixth (8♣); hand 2 doubles (K♣).
		{
			name: "blackjack split and double after split", server: "server seed", client: "client seed", nonce: 5,
			game: games.Blackjack, params: games.Params{Actions: "psd", Rules: 1},
			want: []string{"player: 8♦ Q♦ (18)", "second hand: 8♠ 8♣ K♣ (26)", "dealer: 6♦ 6♣ 2♣ 8♣ (22)",
				"result: Hand 1: Dealer busts! You win. Hand 2: Bust! Dealer wins", "stakes: 3", "return per base stake: 2x"},
		},
		{
			name: "blackjack insurance taken, dealer natural", server: "server seed", client: "client seed", nonce: 26,
			game: games.Blackjack, params: games.Params{Actions: "i", Rules: 1},
			want: []string{"dealer: A♦ J♦ (21, soft)", "insurance: taken",
				"result: Dealer has Blackjack! Dealer wins. Insurance pays 2:1", "stakes: 1.5", "return per base stake: 1.5x"},
		},
		{
			name: "blackjack insurance declined, then split", server: "server seed", client: "client seed", nonce: 53,
			game: games.Blackjack, params: games.Params{Actions: "npss", Rules: 1},
			want: []string{"player: 8♦ 4♦ (12)", "second hand: 8♣ 10♥ (18)", "dealer: A♥ 9♣ (20, soft)",
				"insurance: declined", "result: Hand 1: Dealer wins. Hand 2: Dealer wins", "stakes: 2", "return per base stake: 0x"},
		},
		{
			name: "blackjack classic rules: no insurance offer", server: "server seed", client: "client seed", nonce: 26,
			game: games.Blackjack,
			want: []string{"result: Dealer has Blackjack! Dealer wins", "stakes: 1", "multiplier: 0x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, err := games.Replay(tt.game, fair.NewStream(tt.server, tt.client, tt.nonce), tt.params)
			if err != nil {
				t.Fatal(err)
			}
			text := o.String()
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			data, err := json.Marshal(o)
			if err != nil || !strings.Contains(string(data), `"game":"`+string(tt.game)+`"`) {
				t.Errorf("JSON %s, %v", data, err)
			}
		})
	}
}

func TestReplayErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		game   games.Name
		params games.Params
		err    error
	}{
		{"unknown game", "roulette", games.Params{}, games.ErrUnknownGame},
		{"dice without target", games.Dice, games.Params{}, games.ErrInvalidParams},
		{"plinko bad rows", games.Plinko, games.Params{Rows: 20, Risk: "low"}, games.ErrInvalidParams},
		{"plinko no risk", games.Plinko, games.Params{Rows: 8}, games.ErrInvalidParams},
		{"keno no picks", games.Keno, games.Params{Risk: "low"}, games.ErrInvalidParams},
		{"mines none", games.Mines, games.Params{}, games.ErrInvalidParams},
		{"mines reveal after loss", games.Mines, games.Params{Mines: 3, Reveals: []int{18, 0}}, games.ErrInvalidParams},
		{"pump bad difficulty", games.Pump, games.Params{Difficulty: "extreme"}, games.ErrInvalidParams},
		{"pump past burst", games.Pump, games.Params{Difficulty: "expert", Pumps: 14}, games.ErrInvalidParams},
		{"blackjack bad action", games.Blackjack, games.Params{Actions: "x"}, games.ErrInvalidParams},
		{"blackjack action after end", games.Blackjack, games.Params{Actions: "ss"}, games.ErrInvalidParams},
		{"blackjack split under the classic rules", games.Blackjack, games.Params{Actions: "p"}, games.ErrInvalidParams},
		{"blackjack insurance under the classic rules", games.Blackjack, games.Params{Actions: "n"}, games.ErrInvalidParams},
		{"blackjack unknown rules", games.Blackjack, games.Params{Rules: 2}, games.ErrInvalidParams},
		{"blackjack bad action, split rules", games.Blackjack, games.Params{Actions: "x", Rules: 1}, games.ErrInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := fair.NewStream("server seed", "client seed", 1)
			if tt.game == games.Pump {
				src = fair.NewStream(pumpSeed, "zXv1upuFns", 5663)
			}
			if _, err := games.Replay(tt.game, src, tt.params); !errors.Is(err, tt.err) {
				t.Fatalf("Replay error = %v, want %v", err, tt.err)
			}
		})
	}
}

func TestParseName(t *testing.T) {
	t.Parallel()
	for _, n := range games.Names {
		if got, err := games.ParseName(string(n)); err != nil || got != n {
			t.Errorf("ParseName(%q) = %q, %v", n, got, err)
		}
	}
	if _, err := games.ParseName("Dice"); !errors.Is(err, games.ErrUnknownGame) {
		t.Errorf("ParseName(Dice) error = %v", err)
	}
}

// TestParamsAppendJSONIsMarshal: each game's parameters, every field alone
// and all together, empty and nil lists, and texts Marshal escapes.
func TestParamsAppendJSONIsMarshal(t *testing.T) {
	t.Parallel()
	for _, p := range []games.Params{
		{},
		{Target: "50.5"},
		{Rows: 16, Risk: "high"},
		{Picks: []int{1, 40}, Risk: "classic"},
		{Mines: 3, Reveals: []int{0, 24}},
		{Mines: 24, Reveals: []int{}},
		{Difficulty: "expert", Pumps: 7},
		{Actions: "hsdpin", Rules: 1},
		{Picks: []int{}},
		{Target: "<&>\"\\é\u2028\x01\xff", Rows: -1, Risk: "x", Picks: []int{-3}, Mines: 1, Reveals: []int{2},
			Difficulty: "d", Pumps: -2, Actions: "a", Rules: 9},
	} {
		assertParamsJSON(t, p)
	}
}

func FuzzParamsAppendJSON(f *testing.F) {
	f.Add("50.5", 8, "low", 3, "easy", 2, "hs", 1, byte(2))
	f.Fuzz(func(t *testing.T, target string, rows int, risk string, mines int, difficulty string, pumps int,
		actions string, rules int, lists byte) {
		p := games.Params{Target: target, Rows: rows, Risk: risk, Mines: mines, Difficulty: difficulty, Pumps: pumps,
			Actions: actions, Rules: rules}
		switch lists % 3 {
		case 1:
			p.Picks, p.Reveals = []int{}, []int{}
		case 2:
			p.Picks, p.Reveals = []int{rows, mines}, []int{pumps}
		}
		assertParamsJSON(t, p)
	})
}

func assertParamsJSON(t *testing.T, p games.Params) {
	t.Helper()
	want, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.AppendJSON([]byte("x")); string(got) != "x"+string(want) {
		t.Fatalf("%+v: %s, want x%s", p, got, want)
	}
}

// BenchmarkParamsJSON: a dice bet's parameters written by json.Marshal and
// by AppendJSON, as every bet's are.
func BenchmarkParamsJSON(b *testing.B) {
	p := games.Params{Target: "50.5"}
	b.Run("Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = p.AppendJSON(make([]byte, 0, 64))
		}
	})
}

// TestBlackjackAppendJSONIsMarshal: replayed games under both rule sets,
// with every kind of action a game allows at each point (hits until bust,
// doubles, splits, insurance and even money taken or declined), written as
// json.Marshal writes them; and the zero value and texts Marshal escapes.
func TestBlackjackAppendJSONIsMarshal(t *testing.T) {
	t.Parallel()
	check := func(r *games.BlackjackReplay) {
		t.Helper()
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.AppendJSON([]byte("x")); string(got) != "x"+string(want) {
			t.Fatalf("%+v:\n%s\nwant x%s", r, got, want)
		}
	}
	seen := map[string]bool{}
	for nonce := range uint64(400) {
		for _, rules := range []int{0, 1} {
			for _, actions := range []string{"", "s", "h", "hh", "hhh", "d", "ps", "pss", "pds", "psd", "i", "n",
				"is", "ns", "ih", "nd", "ipss", "npds"} {
				o, err := games.Replay(games.Blackjack, fair.NewStream("server", "client", nonce),
					games.Params{Actions: actions, Rules: rules})
				if err != nil {
					continue // an action this deal does not allow
				}
				r := o.Blackjack
				check(r)
				seen[fmt.Sprintf("rules %d, second %v, insurance %q, return %v, result %v", r.Rules, r.Second != "",
					r.Insurance, r.Return != 0, r.Result != "")] = true
			}
		}
	}
	if len(seen) < 15 {
		t.Fatalf("only %d kinds of outcome replayed: %v", len(seen), seen)
	}
	check(&games.BlackjackReplay{})
	check(&games.BlackjackReplay{Deck: []string{}, Player: `<a&"b">`, Dealer: "\u2028\x00", Result: "é",
		Second: "\xff", Insurance: "x<y", Rules: -3, Return: 1, Stakes: -1, Multiplier: 25000})
}
