package security_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games/mines"
	"github.com/fairplay/fairplay/test/apitest"
)

// An action may name the moves its caller saw (moves), and is refused with
// 409 when the game has made another number. A replica decides most actions
// from its copy of the game, in one round trip, and only the save finds out
// whether another request overtook the copy. Before the fix, a counted
// action was decided from the copy too: on a copy overtaken by another
// request (on another replica, or racing on this one) it drew the tile or
// card, found the copy stale, and was refused on the row for its moves, so
// the game never moved; but the draw had already set the work before the
// refusal (a settlement and one statement for a mine, another statement for
// a gem), and the answer's time told a mine from a gem for the price of one
// real move (found by a review playing a hostile player: 50–90 µs apart at
// the median). A counted action is now decided on the locked row only, where
// the moves are compared before anything is drawn.

// gameActionPaths reads the server's fairplay_game_actions_total: actions
// decided from its copy (cached) and on the locked row (locked).
func gameActionPaths(t *testing.T, env *apitest.Env) (cached, locked int) {
	t.Helper()
	status, body := httpGet(t, env.MetricsURL+"/metrics")
	if status != 200 {
		t.Fatalf("metrics: %d", status)
	}
	for path, n := range map[string]*int{"cached": &cached, "locked": &locked} {
		m := regexp.MustCompile(`fairplay_game_actions_total\{path="` + path + `"\} (\d+)`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("metrics lack fairplay_game_actions_total{path=%q}", path)
		}
		*n, _ = strconv.Atoi(m[1])
	}
	return cached, locked
}

// TestCountedActionsAreNotDrawnFromACopy: a counted action is decided on
// the locked row even where the replica holds a current copy, and one whose
// moves a game on another replica overtook is refused without a change.
func TestCountedActionsAreNotDrawnFromACopy(t *testing.T) {
	t.Parallel()
	a := apitest.Start(t)
	b := a.Replica()
	p := newPlayer(t, a)
	viaB := p.Via(b)

	// A started the game, so A holds its copy.
	start := mustOK(t, "start", p.Do("POST", "/api/games/mines/start", `{"betAmount": 1, "mineCount": 3}`))
	id := start.Str("gameId")
	click := func(c *apitest.Client, tile, moves int) apitest.Response {
		return c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": tile / 5, "col": tile % 5, "moves": moves})
	}
	// The board, from the seeds (the game took the pair's last nonce).
	server, client, nonce := p.pair(t)
	board, err := mines.New(fair.NewStream(server, client, uint64(nonce)), 3)
	if err != nil {
		t.Fatal(err)
	}
	var safe []int
	for tile := range mines.Tiles {
		if !slices.Contains(board.MineTiles, tile) {
			safe = append(safe, tile)
		}
	}

	cached0, locked0 := gameActionPaths(t, a)
	mustOK(t, "counted click on A", click(p.Client, safe[0], 0))
	if cached, locked := gameActionPaths(t, a); cached != cached0 || locked != locked0+1 {
		t.Fatalf("a counted action on A: %d from the copy, %d on the row (before %d, %d): it must lock the row",
			cached-cached0, locked-locked0, cached0, locked0)
	}
	// B moves the game on: A's copy (1 gem) is overtaken.
	mustOK(t, "click on B", click(viaB, safe[1], 1))
	cached0, locked0 = gameActionPaths(t, a)
	for _, tile := range []int{safe[2], board.MineTiles[0]} {
		res := click(p.Client, tile, 1)
		if res.Status != 409 || res.Str("message") != "This game has moved on. Reload it to continue." {
			t.Fatalf("click of tile %d with the copy's moves: %d %s", tile, res.Status, res.Raw)
		}
	}
	if cached, locked := gameActionPaths(t, a); cached != cached0 || locked != locked0+2 {
		t.Fatalf("counted actions on an overtaken copy: %d from the copy, %d on the row", cached-cached0, locked-locked0)
	}
	if g := mustOK(t, "active", p.Do("GET", "/api/games/active", nil)); fmt.Sprint(len(g.Get("mines.revealed").([]any))) != "2" {
		t.Fatalf("the refused clicks changed the game: %s", g.Raw)
	}
}
