package security_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/blackjack"
	"github.com/fairplay/fairplay/internal/games/mines"
	"github.com/fairplay/fairplay/test/apitest"
)

// A refusal that comes after the draw is answered the same whatever was
// drawn, but its time is the work done before it, and a refused request can
// be repeated for free. Two ways of repeating one were found by a review
// playing a hostile player:
//
//   - A Blackjack deal is drawn before Postgres checks its stake. A deal the
//     rules end at once (a player's natural, a dealer's natural under a ten)
//     was settled in the draw — the game replayed from its seeds and the
//     outcome encoded — and one that goes on was not. A deal refused for its
//     stake (or the player's limits) moves no nonce, so the player could ask
//     again and again: on loopback the refusal of a deal that would have
//     ended at once took 7–44 µs longer at the median (six runs of 2,000–
//     3,000 refusals per class, every one the same sign; AUC 0.504–0.520;
//     after the fix −15 to +15 µs, AUC 0.503–0.505),
//     and "the next deal ends at once" is two-thirds a natural paying 3:2.
//     A Blackjack game's record now does the same work whether it ended or
//     not (play.evenWork), which covers the insurance's peek too.
//   - An action on a running game is decided from the replica's copy of the
//     game before its session is checked. A session the player revoked keeps
//     an access token that verifies for up to 15 minutes, and its action was
//     drawn from the copy and then refused "Token is not valid": a mine took
//     12–28 µs longer than a gem at the median (three runs of 2,000–3,000
//     probes per class). The refusal dropped the copy, but any refused
//     action of a live session (a wrong moves count) read it back, so each
//     probe cost two free requests and nothing else. Only the session that
//     last found the copy live is now decided from it; another is checked on
//     the locking path before anything is drawn.
//   - Two smaller ways, found by later reviews: a deal's record took one
//     allocation more when a hand (the player's, or the dealer's with its
//     hole card) was an ace and a ten, whose text outgrew FormatHand's
//     buffer, and one more for a deal that paid (a natural), whose outcome
//     json.Marshal wrote with a return it leaves out when zero; and
//     Postgres parsed each bet's state as JSON before refusing it, ~520
//     bytes for a deal that ends at once against ~240 (a few microseconds).
//     Every deal now allocates the same, in count and bytes
//     (internal/play's TestDealDoesTheSameWork), and a refused bet's state
//     is never read (internal/postgres's TestRefusedBetsStateIsNeverRead,
//     migration 00033). What is left is the length of the text sent, which
//     Postgres copies and checks as UTF-8 (well under a microsecond).
//
// The times are too noisy for a test that must not fail by chance; the
// tests hold the mechanism instead.

// dealClient returns a client seed whose deal at nonce the rules end at once
// (settles) or not, with no insurance offer.
func dealClient(t *testing.T, server string, nonce int64, settles bool) string {
	t.Helper()
	for i := range 2000 {
		c := fmt.Sprintf("deal-%d", i)
		o, err := games.Replay(games.Blackjack, fair.NewStream(server, c, uint64(nonce)),
			games.Params{Rules: int(blackjack.RulesSplit)})
		if err != nil {
			t.Fatal(err)
		}
		if (o.Blackjack.Result != "") == settles && o.Blackjack.Insurance == "" {
			return c
		}
	}
	t.Fatalf("no deal with settles %v", settles)
	return ""
}

// TestRefusedDealDoesTheSameWork: a Blackjack deal refused for its stake
// costs the server the same work whether the cards it drew end the game at
// once or not. The work is counted in heap allocations, which the
// settlement's replay and encoding make and which, unlike the time, do not
// depend on the machine's load: the least over 200 refusals of each kind
// (the server is in this process; background work only adds).
//
// It runs without the race detector (make test runs it on its own, in the
// step after the race run): the race detector's sync.Pool drops a quarter of
// what is put back, at random, which spread the least counts of one build by
// up to 9 and shrank the gap before the fix from 28 to 10–15.
func TestRefusedDealDoesTheSameWork(t *testing.T) {
	if raceDetector {
		t.Skip("counts allocations, which the race detector's sync.Pool makes random; make test runs it without -race")
	}
	env := apitest.Start(t) // not parallel: the process's allocations are counted
	classes := map[bool]*player{}
	for _, settles := range []bool{true, false} {
		p := newPlayer(t, env)
		server, _, nonce := p.pair(t)
		mustOK(t, "client seed", p.Do("POST", "/api/fair/client-seed",
			map[string]any{"clientSeed": dealClient(t, server, nonce+2, settles)}))
		// The warm-up bet leaves the pair remembered: the deal is drawn
		// before Postgres is asked.
		mustOK(t, "warm-up bet", p.Do("POST", "/api/games/dice", map[string]any{"betAmount": 0.1, "rollTarget": 50}))
		classes[settles] = p
	}
	least := map[bool]uint64{}
	answers := map[bool]string{}
	var ms runtime.MemStats
	for range 200 {
		for _, settles := range []bool{true, false} {
			runtime.ReadMemStats(&ms)
			before := ms.Mallocs
			res := classes[settles].Do("POST", "/api/games/blackjack/start", map[string]any{"betAmount": 5000})
			runtime.ReadMemStats(&ms)
			if res.Status != 400 {
				t.Fatalf("deal above the balance: %d %s", res.Status, res.Raw)
			}
			answers[settles] = string(res.Raw)
			if n := ms.Mallocs - before; least[settles] == 0 || n < least[settles] {
				least[settles] = n
			}
		}
	}
	if answers[true] != answers[false] {
		t.Errorf("refused deals answer differently: %s / %s", answers[true], answers[false])
	}
	for settles, p := range classes {
		if _, _, nonce := p.pair(t); nonce != 1 {
			t.Errorf("settles %v: the refused deals moved the nonce to %d", settles, nonce)
		}
	}
	t.Logf("least allocations of a refused deal: %d that would have ended the game, %d that would not",
		least[true], least[false])
	// Measured: 28 more for a deal that ends at once before the fix, 2–4 after
	// (15 runs).
	const tolerance = 10
	if d := int64(least[true]) - int64(least[false]); d > tolerance || d < -tolerance {
		t.Errorf("a refused deal that would have ended the game at once allocates %d, one that would not %d: "+
			"the draw's work tells them apart", least[true], least[false])
	}
}

// TestRevokedSessionIsNotDecidedFromACopy: an action of a revoked session
// whose access token still verifies is refused before anything is drawn —
// on the locking path, whatever the replica's copy of the game — for a mine
// and a gem alike, and changes nothing.
func TestRevokedSessionIsNotDecidedFromACopy(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	p := newPlayer(t, env)
	revoked := env.Client()
	revoked.Login(p.name, "secret123")
	start := mustOK(t, "start", p.Do("POST", "/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": 3}))
	id := start.Str("gameId")
	server, client, nonce := p.pair(t)
	board, err := mines.New(fair.NewStream(server, client, uint64(nonce)), 3)
	if err != nil {
		t.Fatal(err)
	}
	gem := 0
	for slices.Contains(board.MineTiles, gem) {
		gem++
	}
	click := func(c *apitest.Client, tile int, moves ...int) apitest.Response {
		body := map[string]any{"gameId": id, "row": tile / 5, "col": tile % 5}
		if len(moves) > 0 {
			body["moves"] = moves[0]
		}
		return c.Do("POST", "/api/games/mines/click", body)
	}
	mustOK(t, "logout of the second session", revoked.Do("POST", "/api/auth/logout",
		map[string]any{"refreshToken": revoked.RefreshToken}))
	answers := map[string]string{}
	for _, probe := range []struct {
		name string
		tile int
	}{{"mine", board.MineTiles[0]}, {"gem", gem}} {
		// A refused action of the live session reads the game back into
		// the replica's copy.
		if res := click(p.Client, 0, 99); res.Status != 409 {
			t.Fatalf("refill: %d %s", res.Status, res.Raw)
		}
		_, locked0 := gameActionPaths(t, env)
		res := click(revoked, probe.tile)
		if res.Status != 401 {
			t.Fatalf("%s clicked by a revoked session: %d %s", probe.name, res.Status, res.Raw)
		}
		answers[probe.name] = string(res.Raw)
		if _, locked := gameActionPaths(t, env); locked != locked0+1 {
			t.Errorf("%s clicked by a revoked session was decided from the copy, drawn before its session was checked",
				probe.name)
		}
	}
	if answers["mine"] != answers["gem"] {
		t.Errorf("a revoked session hears %s for a mine, %s for a gem", answers["mine"], answers["gem"])
	}
	if g := mustOK(t, "active", p.Do("GET", "/api/games/active", nil)); len(g.Get("mines.revealed").([]any)) != 0 {
		t.Fatalf("the refused clicks changed the game: %s", g.Raw)
	}
	// The live session still plays from the copy.
	mustOK(t, "gem", click(p.Client, gem))
	env.LedgerClean(t)
}
