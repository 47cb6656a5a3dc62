package play

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/blackjack"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/games/mines"
	"github.com/fairplay/fairplay/internal/games/pump"
	"github.com/fairplay/fairplay/internal/money"
)

// A Mines or Pump start is drawn and encoded before Postgres checks its
// stake, and a start refused there (a short balance, a limit, a game in
// progress) moves no nonce: the player can have the same layout drawn again
// and again. Its work must not depend on the layout, in allocations nor in
// bytes: the state was encoded by json.Marshal, whose copy is sized to the
// encoding, and a Mines tile from 10 on takes two digits, so the size class
// of a refused start told how many of the next mines lie in the lower rows
// (for 12 of the 24 mine counts; a finding of a review playing a hostile
// player). The state is now encoded into a buffer of the kind's stateSize.
//
// make test runs it without the race detector (hack/test.sh), under which
// the counts are noise.
func TestStartDoesTheSameWork(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's sync.Pool makes allocations random: make test runs this test without it")
	}
	type start struct {
		name  string
		class func(pair SeedPair) (string, func())
	}
	l := DefaultLimits()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	bet := Bet{Status: StatusActive, Amount: money.Dollars(1), CreatedAt: now}
	var starts []start
	for n := mines.MinMines; n <= mines.MaxMines; n++ {
		params := games.Params{Mines: n}
		deal := func(src event.Source) (*mines.Game, error) { return mines.New(src, n) }
		starts = append(starts, start{fmt.Sprint(n, " mines"), func(pair SeedPair) (string, func()) {
			r, err := open(minesKind, l, bet, params, pair, now, deal)
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("state of %d bytes", len(r.Bet.State)), func() { _, _ = open(minesKind, l, bet, params, pair, now, deal) }
		}})
	}
	for _, d := range pump.Difficulties {
		params := games.Params{Difficulty: string(d)}
		deal := func(src event.Source) (*pump.Game, error) { return pump.New(src, d) }
		starts = append(starts, start{"pump " + string(d), func(pair SeedPair) (string, func()) {
			r, err := open(pumpKind, l, bet, params, pair, now, deal)
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("state of %d bytes", len(r.Bet.State)), func() { _, _ = open(pumpKind, l, bet, params, pair, now, deal) }
		}})
	}
	lengths := 0
	for _, s := range starts {
		pair := SeedPair{ServerSeed: "0d6c1fe2a7b34c5d8e9f00112233445566778899aabbccddeeff001122334455", ClientSeed: "hostile"}
		runs := map[string]func(){}
		for n := int64(1); n <= 400; n++ {
			pair.Nonce = n
			if c, run := s.class(pair); runs[c] == nil {
				runs[c] = run
			}
		}
		lengths += len(runs)
		work := map[string]string{}
		first := ""
		for c, run := range runs {
			w := fmt.Sprintf("%v allocations, %d bytes", testing.AllocsPerRun(50, run), bytesPerRun(200, run))
			work[c] = w
			if first != "" && w != first {
				t.Fatalf("%s: a start's work tells its layouts apart: %v", s.name, work)
			}
			first = w
		}
	}
	if lengths < 2*len(starts) {
		t.Fatalf("the layouts gave %d lengths of state over %d kinds of start: too few to compare", lengths, len(starts))
	}
}

// bytesPerRun is the bytes f allocates per call, as AllocsPerRun counts
// allocations (one P, a warm-up call first): the least of five averages,
// since anything else the runtime allocates meanwhile (a timer, the GC's
// own work) only ever adds.
func bytesPerRun(runs int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	least := ^uint64(0)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			f()
		}
		runtime.ReadMemStats(&after)
		least = min(least, (after.TotalAlloc-before.TotalAlloc)/uint64(runs))
	}
	return least
}

// TestDealDoesTheSameWork: a Blackjack deal is drawn before Postgres checks
// its stake too, and record does the same work whether the deal ended the
// game or not (evenWork); nor may that work depend on the cards themselves.
// A review playing a hostile player found that a hand of an ace and a ten,
// the player's or the dealer's (its hole card included), took one more
// allocation than any other: its text ("A♠ 10♥ (21, soft)") outgrew the
// buffer FormatHand had reserved, which counted four bytes a card and a ten
// takes five. The settlement's outcome was encoded by json.Marshal, whose
// copy is sized to the encoding. The classes here are every length of the
// two hands' texts and of the state, with and without the game ended.
func TestDealDoesTheSameWork(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's sync.Pool makes allocations random: make test runs this test without it")
	}
	l := DefaultLimits()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	bet := Bet{Status: StatusActive, Amount: money.Dollars(1), CreatedAt: now}
	params := games.Params{Rules: int(blackjack.RulesSplit)}
	deal := func(src event.Source) (*blackjack.Game, error) {
		return blackjack.Deal(blackjack.NewDeck(src), blackjack.RulesSplit)
	}
	pair := SeedPair{ServerSeed: "0d6c1fe2a7b34c5d8e9f00112233445566778899aabbccddeeff001122334455", ClientSeed: "hostile"}
	runs := map[string]func(){}
	for n := int64(1); n <= 3000; n++ {
		pair.Nonce = n
		r, err := open(blackjackKind, l, bet, params, pair, now, deal)
		if err != nil {
			t.Fatal(err)
		}
		c := fmt.Sprintf("over %v, hands of %d and %d bytes, state of %d bytes", r.Over(),
			len(blackjack.FormatHand(r.Game.Player)), len(blackjack.FormatHand(r.Game.Dealer)), len(r.Bet.State))
		if runs[c] == nil {
			p := pair
			runs[c] = func() { _, _ = open(blackjackKind, l, bet, params, p, now, deal) }
		}
	}
	if len(runs) < 10 {
		t.Fatalf("%d classes of deal: too few to compare", len(runs))
	}
	work := map[string][]string{}
	for c, run := range runs {
		w := fmt.Sprintf("%v allocations, %d bytes", testing.AllocsPerRun(50, run), bytesPerRun(200, run))
		work[w] = append(work[w], c)
	}
	if len(work) != 1 {
		t.Fatalf("a deal's work tells its cards apart: %v", work)
	}
}
