package security_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestLiveBetIDsOpenNothing: the live feed shows every settled bet's id to
// anyone (the web app recognises the player's own bets by it, and the My Bets
// page opens a bet by its id at /bets?bet=<id>). An id read off the feed must
// open nothing of another player's: their bet, its seeds and its verification
// answer exactly as an id that does not exist, nothing names the player who
// chose to be hidden, and the history lists only the caller's own bets.
func TestLiveBetIDsOpenNothing(t *testing.T) {
	t.Parallel()
	w := newHostileWorld(t)
	victim := w.env.Client()
	victim.Register("victim_hidden")
	if res := victim.Do("POST", "/api/auth/preferences", map[string]any{"hideUsername": true}); res.Status != 200 {
		t.Fatalf("hide the username: %d %s", res.Status, res.Raw)
	}
	stream, res := w.env.WatchLive(t, "")
	if stream == nil {
		t.Fatalf("watch: %d %s", res.Status, res.Raw)
	}
	bet := victim.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50})
	id := bet.Str("betId")
	if bet.Status != 200 || id == "" {
		t.Fatalf("victim's bet: %d %s", bet.Status, bet.Raw)
	}
	seen, _ := stream.WaitBet(t, id, 10*time.Second)
	if seen["hidden"] != true || seen["username"] != "" {
		t.Fatalf("the feed names a hidden player: %v", seen)
	}
	// Rotating reveals the victim's server seed to the victim; it must stay theirs.
	if r := victim.Do("POST", "/api/fair/rotate", map[string]any{"clientSeed": ""}); r.Status != 200 {
		t.Fatalf("victim's rotation: %d %s", r.Status, r.Raw)
	}

	for _, path := range []string{"/api/games/bets/%s", "/api/fair/verify/%s"} {
		theirs := w.player.Do("GET", fmt.Sprintf(path, id), nil)
		unknown := w.player.Do("GET", fmt.Sprintf(path, uuid.NewString()), nil)
		route := fmt.Sprintf(path, "{id}")
		if theirs.Status == 200 {
			t.Errorf("%s opens another player's bet: %s", route, theirs.Raw)
		}
		if theirs.Status != unknown.Status || theirs.Message() != unknown.Message() {
			t.Errorf("%s tells another player's bet (%d %q) from an unknown id (%d %q)",
				route, theirs.Status, theirs.Message(), unknown.Status, unknown.Message())
		}
		if strings.Contains(string(theirs.Raw), "victim_hidden") {
			t.Errorf("%s names the hidden player: %s", route, theirs.Raw)
		}
	}
	if own := victim.Do("GET", "/api/games/bets/"+id, nil); own.Status != 200 || own.Str("bet._id") != id {
		t.Fatalf("the owner reads their bet: %d %s", own.Status, own.Raw)
	}
	for _, query := range []string{"", "&game=dice"} {
		list := w.player.Do("GET", "/api/games/bets?page=1&limit=100"+query, nil)
		if list.Status != 200 {
			t.Fatalf("mallory's history%s: %d %s", query, list.Status, list.Raw)
		}
		if strings.Contains(string(list.Raw), id) {
			t.Errorf("mallory's history%s lists the victim's bet: %s", query, list.Raw)
		}
	}
}
