package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/admin"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/test/apitest"
)

const day = 24 * time.Hour

// startAdmin starts a server with an administrator "boss" signed in. The
// administrator's account is moved a year into the past so that the
// statistics' windows hold only what a test puts there.
func startAdmin(t *testing.T) (*apitest.Env, *apitest.Client, uuid.UUID) {
	t.Helper()
	env := apitest.Start(t)
	u, created, err := env.App.Accounts.CreateAdmin(context.Background(), "boss", "boss@example.com", "secret123", false)
	if err != nil || !created || !u.IsAdmin {
		t.Fatalf("create admin: %+v %v %v", u, created, err)
	}
	dbExec(t, env, `UPDATE users SET created_at = $2 WHERE id = $1`, u.ID, env.Clock.Now().Add(-365*day))
	c := env.Client()
	c.Login("boss", "secret123")
	return env, c, u.ID
}

func dbExec(t *testing.T, env *apitest.Env, sql string, args ...any) {
	t.Helper()
	if _, err := env.App.Postgres.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func dbInt(t *testing.T, env *apitest.Env, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := env.App.Postgres.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// insertUser adds a live account created at the given time (it cannot sign in).
func insertUser(t *testing.T, env *apitest.Env, username, email string, created time.Time) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	dbExec(t, env, `INSERT INTO users (id, username, email, password_hash, created_at) VALUES ($1, $2, $3, 'x', $4)`,
		id, username, email, created)
	return id
}

// insertBet records a bet placed at the given time, creating the user's seed pair when needed.
func insertBet(t *testing.T, env *apitest.Env, userID uuid.UUID, game, amount, payout, status string, created time.Time) {
	t.Helper()
	a, p := mustAmount(t, amount), mustAmount(t, payout)
	dbExec(t, env, `INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed)
		VALUES ($1, $2, 's', 'h', 'c') ON CONFLICT (user_id) WHERE revealed_at IS NULL DO NOTHING`, uuid.New(), userID)
	var settled any
	if status == "settled" {
		settled = created
	}
	dbExec(t, env, `
		INSERT INTO bets (id, user_id, game, status, amount, payout, seed_pair_id, client_seed, nonce, created_at, settled_at)
		SELECT $1, $2, $3, $4, $5, $6, u.seed_pair, 'c', u.seed_nonce + 1, $7, $8 FROM users u WHERE u.id = $2`,
		uuid.New(), userID, game, status, int64(a), int64(p), created, settled)
	// The active pair's nonce is in the player's row (migration 00028).
	dbExec(t, env, `UPDATE users SET seed_nonce = seed_nonce + 1 WHERE id = $1`, userID)
}

func mustAmount(t *testing.T, s string) money.Amount {
	t.Helper()
	a, err := money.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func str(v any) string { return fmt.Sprint(v) }

func TestAdminRoutesRequireAnAdministrator(t *testing.T) {
	t.Parallel()
	env, boss, _ := startAdmin(t)
	player := env.Client()
	pres := player.Register("player")
	playerID := pres.Str("user._id")
	victim := env.Client()
	victimID := victim.Register("victim").Str("user._id")

	routes := []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/auth/stats/users", nil},
		{"GET", "/api/auth/stats/wagering", nil},
		{"GET", "/api/auth/stats/activity", nil},
		{"GET", "/api/auth/users?page=1&limit=10", nil},
		{"GET", "/api/auth/users/search?query=play&page=1&limit=10", nil},
		{"PATCH", "/api/auth/users/" + playerID + "/balance", map[string]any{"amount": 5}},
		{"DELETE", "/api/auth/users/" + victimID, nil},
		{"GET", "/api/auth/audit", nil},
	}
	anonymous := env.Client()
	forged := env.Client()
	forged.Token = player.Token[:len(player.Token)-4] + "AAAA"
	for _, r := range routes {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			if res := anonymous.Do(r.method, r.path, r.body); res.Status != 401 || res.Message() != "No authentication token, access denied" {
				t.Errorf("anonymous: %d %s", res.Status, res.Raw)
			}
			if res := forged.Do(r.method, r.path, r.body); res.Status != 401 || res.Message() != "Token is not valid" {
				t.Errorf("forged token: %d %s", res.Status, res.Raw)
			}
			if res := player.Do(r.method, r.path, r.body); res.Status != 403 || res.Message() != "Admin access required" {
				t.Errorf("player: %d %s", res.Status, res.Raw)
			}
		})
	}
	// Nothing changed: the player's balance and the victim's account are intact.
	if b := balance(t, player); b != money.Dollars(1000) {
		t.Fatalf("player balance after refused adjustments: %s", b)
	}
	if res := victim.Do("GET", "/api/auth/user", nil); res.Status != 200 {
		t.Fatalf("victim after refused delete: %d", res.Status)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM admin_audit WHERE actor_id IS NOT NULL`); n != 0 {
		t.Fatalf("refused calls were audited: %d", n)
	}
	// The administrator gets through on every route.
	for _, r := range routes {
		if res := boss.Do(r.method, r.path, r.body); res.Status != 200 {
			t.Errorf("admin %s %s: %d %s", r.method, r.path, res.Status, res.Raw)
		}
	}

	// The role is read on every request: a promotion and a demotion apply to
	// an existing token at once.
	if _, err := env.App.Accounts.Promote(context.Background(), "player"); err != nil {
		t.Fatal(err)
	}
	if res := player.Do("GET", "/api/auth/stats/users", nil); res.Status != 200 {
		t.Fatalf("promoted player: %d %s", res.Status, res.Raw)
	}
	dbExec(t, env, `UPDATE users SET is_admin = false WHERE username = 'player'`)
	if res := player.Do("GET", "/api/auth/stats/users", nil); res.Status != 403 {
		t.Fatalf("demoted player: %d %s", res.Status, res.Raw)
	}
}

func TestAdminServiceOverConnect(t *testing.T) {
	t.Parallel()
	env, boss, _ := startAdmin(t)
	player := env.Client()
	player.Register("player")
	client := fairplayv1connect.NewAdminServiceClient(http.DefaultClient, env.URL)
	ctx := context.Background()
	call := func(token string) (*connect.Response[fairplayv1.GetUserStatsResponse], error) {
		req := connect.NewRequest(&fairplayv1.GetUserStatsRequest{})
		if token != "" {
			req.Header().Set("Authorization", "Bearer "+token)
		}
		return client.GetUserStats(ctx, req)
	}
	if _, err := call(""); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("no token: %v", err)
	}
	if _, err := call(player.Token); connect.CodeOf(err) != connect.CodePermissionDenied || !strings.Contains(err.Error(), "Admin access required") {
		t.Fatalf("player: %v", err)
	}
	res, err := call(boss.Token)
	if err != nil || res.Msg.GetTotalUsers() != 2 || res.Msg.GetUsersLastWeek() != 1 || res.Msg.GetUsersLastWeekPercentChange() != "100.0" {
		t.Fatalf("admin: %v %v", res, err)
	}
	req := connect.NewRequest(&fairplayv1.AdjustBalanceRequest{UserId: uuid.NewString(), Amount: "0"})
	req.Header().Set("Authorization", "Bearer "+boss.Token)
	if _, err := client.AdjustBalance(ctx, req); connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "Amount cannot be 0") {
		t.Fatalf("zero adjustment over connect: %v", err)
	}
}

func TestUserStats(t *testing.T) {
	t.Parallel()
	type row struct {
		ago     time.Duration
		deleted bool
	}
	for _, tc := range []struct {
		name                    string
		users                   []row
		total, month, week      int64
		monthChange, weekChange string
	}{
		{name: "no new users", total: 1, monthChange: "0.0", weekChange: "0.0"},
		{name: "growth from nothing", users: []row{{ago: time.Hour}, {ago: 2 * day}, {ago: 6*day + 23*time.Hour}},
			total: 4, month: 3, week: 3, monthChange: "100.0", weekChange: "100.0"},
		{name: "decline", users: []row{
			{ago: day},                                       // this week
			{ago: 8 * day}, {ago: 10 * day}, {ago: 13 * day}, // the week before
			{ago: 31 * day}, {ago: 40 * day}, {ago: 59 * day}, // the month before
			{ago: 90 * day}, // before every window
		}, total: 9, month: 4, week: 1, monthChange: "33.3", weekChange: "-66.7"},
		{name: "window edges", users: []row{
			{ago: 0},        // now: inside this week
			{ago: 7 * day},  // exactly 7 days ago: the week before
			{ago: 14 * day}, // exactly 14 days ago: neither week, but this month
			{ago: 30 * day}, // the month before
			{ago: 60 * day}, // no window
		}, total: 6, month: 3, week: 1, monthChange: "200.0", weekChange: "0.0"},
		{name: "deleted users do not count", users: []row{{ago: day}, {ago: day, deleted: true}, {ago: 8 * day, deleted: true}},
			total: 2, month: 1, week: 1, monthChange: "100.0", weekChange: "100.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, boss, _ := startAdmin(t)
			now := env.Clock.Now()
			for i, u := range tc.users {
				id := insertUser(t, env, fmt.Sprintf("user%d", i), fmt.Sprintf("user%d@example.com", i), now.Add(-u.ago))
				if u.deleted {
					if res := boss.Do("DELETE", "/api/auth/users/"+id.String(), nil); res.Status != 200 {
						t.Fatalf("delete: %d %s", res.Status, res.Raw)
					}
				}
			}
			res := boss.Do("GET", "/api/auth/stats/users", nil)
			got := fmt.Sprintf("%v %v %v %v %v", res.Body["totalUsers"], res.Body["usersLastMonth"], res.Body["usersLastMonthPercentChange"],
				res.Body["usersLastWeek"], res.Body["usersLastWeekPercentChange"])
			want := fmt.Sprintf("%d %d %s %d %s", tc.total, tc.month, tc.monthChange, tc.week, tc.weekChange)
			if res.Status != 200 || got != want {
				t.Fatalf("stats: %d %s\n got %s\nwant %s", res.Status, res.Raw, got, want)
			}
			// A week later everything has moved one window back.
			env.Clock.Advance(7 * day)
			r := boss.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": boss.RefreshToken})
			if r.Status != 200 {
				t.Fatalf("refresh: %d %s", r.Status, r.Raw)
			}
			boss.Token, boss.RefreshToken = r.Str("token"), r.Str("refreshToken")
			if res := boss.Do("GET", "/api/auth/stats/users", nil); str(res.Body["totalUsers"]) != fmt.Sprint(tc.total) ||
				str(res.Body["usersLastWeek"]) != "0" {
				t.Fatalf("a week later: %s", res.Raw)
			}
		})
	}
}

func TestUserStatsCountRegistrations(t *testing.T) {
	t.Parallel()
	env, boss, _ := startAdmin(t)
	env.Client().Register("newcomer")
	res := boss.Do("GET", "/api/auth/stats/users", nil)
	if str(res.Body["totalUsers"]) != "2" || str(res.Body["usersLastWeek"]) != "1" || str(res.Body["usersLastMonth"]) != "1" {
		t.Fatalf("a registration made now counts in this week: %s", res.Raw)
	}
}

func TestWageringStats(t *testing.T) {
	t.Parallel()
	type bet struct {
		ago    time.Duration
		amount string
		status string
	}
	for _, tc := range []struct {
		name                    string
		bets                    []bet
		total, month, week      string
		monthChange, weekChange string
	}{
		{name: "no bets", total: "0", month: "0", week: "0", monthChange: "0.0", weekChange: "0.0"},
		{name: "exact decimals and growth from nothing", bets: []bet{{ago: time.Hour, amount: "0.1"}, {ago: 2 * day, amount: "0.2"}, {ago: 400 * day, amount: "5"}},
			total: "5.3", month: "0.3", week: "0.3", monthChange: "100.0", weekChange: "100.0"},
		{name: "decline and growth", bets: []bet{
			{ago: day, amount: "10"},
			{ago: 8 * day, amount: "25"}, {ago: 13 * day, amount: "15"},
			{ago: 20 * day, amount: "5"},
			{ago: 45 * day, amount: "50"},
		}, total: "105", month: "55", week: "10", monthChange: "10.0", weekChange: "-75.0"},
		{name: "running games count when placed", bets: []bet{{ago: time.Minute, amount: "2.5", status: "active"}, {ago: 10 * day, amount: "7.5"}},
			total: "10", month: "10", week: "2.5", monthChange: "100.0", weekChange: "-66.7"},
		{name: "window edges", bets: []bet{{ago: 0, amount: "1"}, {ago: 7 * day, amount: "3"}, {ago: 30 * day, amount: "8"}, {ago: 60 * day, amount: "100"}},
			total: "112", month: "4", week: "1", monthChange: "-50.0", weekChange: "-66.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, boss, _ := startAdmin(t)
			now := env.Clock.Now()
			u := insertUser(t, env, "bettor", "bettor@example.com", now.Add(-500*day))
			for _, b := range tc.bets {
				status := b.status
				if status == "" {
					status = "settled"
				}
				insertBet(t, env, u, "dice", b.amount, "0", status, now.Add(-b.ago))
			}
			res := boss.Do("GET", "/api/auth/stats/wagering", nil)
			got := fmt.Sprintf("%v %v %v %v %v", res.Body["totalWagered"], res.Body["wageredLastMonth"], res.Body["wageredLastMonthPercentChange"],
				res.Body["wageredLastWeek"], res.Body["wageredLastWeekPercentChange"])
			want := fmt.Sprintf("%s %s %s %s %s", tc.total, tc.month, tc.monthChange, tc.week, tc.weekChange)
			if res.Status != 200 || got != want {
				t.Fatalf("stats: %d %s\n got %s\nwant %s", res.Status, res.Raw, got, want)
			}
		})
	}
}

func TestWageringStatsCountRealBets(t *testing.T) {
	t.Parallel()
	env, boss, _ := startAdmin(t)
	p := env.Client()
	p.Register("gambler")
	for _, amt := range []float64{1.5, 2.25} {
		if res := p.Do("POST", "/api/games/dice", map[string]any{"betAmount": amt, "rollTarget": 50}); res.Status != 200 {
			t.Fatalf("dice: %d %s", res.Status, res.Raw)
		}
	}
	res := boss.Do("GET", "/api/auth/stats/wagering", nil)
	if str(res.Body["totalWagered"]) != "3.75" || str(res.Body["wageredLastWeek"]) != "3.75" {
		t.Fatalf("wagering after two dice bets: %s", res.Raw)
	}
}

func TestActivityStats(t *testing.T) {
	t.Parallel()
	env, boss, _ := startAdmin(t)
	now := env.Clock.Now()
	alice := insertUser(t, env, "alice", "alice@example.com", now.Add(-100*day))
	bob := insertUser(t, env, "bob", "bob@example.com", now.Add(-100*day))
	insertBet(t, env, alice, "dice", "10", "0", "settled", now.Add(-5*time.Minute))
	insertBet(t, env, alice, "dice", "10", "19.8", "settled", now.Add(-10*time.Minute))
	insertBet(t, env, bob, "dice", "1000", "0", "settled", now.Add(-25*time.Hour)) // outside the 24 hours
	insertBet(t, env, bob, "mines", "5", "0", "active", now.Add(-20*time.Minute))  // running: no RTP yet
	insertBet(t, env, bob, "keno", "3", "3.3", "settled", now.Add(-23*time.Hour))

	res := boss.Do("GET", "/api/auth/stats/activity", nil)
	if res.Status != 200 || str(res.Body["activePlayers"]) != "1" {
		t.Fatalf("activity: %d %s", res.Status, res.Raw)
	}
	var got []string
	for _, g := range res.Body["games"].([]any) {
		m := g.(map[string]any)
		got = append(got, fmt.Sprintf("%v %v %v %v %v %v", m["game"], m["bets"], m["wagered"], m["paidOut"], m["rtp"], m["theoreticalRtp"]))
	}
	want := []string{
		"dice 2 20 19.8 99.00 98.99",
		"plinko 0 0 0 0.00 99.02",
		"keno 1 3 3.3 110.00 98.93",
		"mines 1 5 0 0.00 99.00",
		"pump 0 0 0 0.00 98.00",
		"blackjack 0 0 0 0.00 99.43",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("games:\n got %q\nwant %q", got, want)
	}

	// The same figures on /metrics.
	mres, err := http.Get(env.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer mres.Body.Close()
	body := readAll(mres)
	for _, line := range []string{
		`fairplay_activity_up 1`,
		`fairplay_active_players 1`,
		`fairplay_activity_bets{game="dice"} 2`,
		`fairplay_activity_wagered_dollars{game="dice"} 20`,
		`fairplay_activity_paid_out_dollars{game="dice"} 19.8`,
		`fairplay_activity_rtp_ratio{game="dice"} 0.99`,
		`fairplay_activity_bets{game="plinko"} 0`,
		`fairplay_theoretical_rtp_ratio{game="blackjack"} 0.9943`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("metrics lack %q", line)
		}
	}
	if strings.Contains(body, `fairplay_activity_rtp_ratio{game="mines"}`) {
		t.Error("an RTP without settled bets is reported")
	}
}

func TestListAndSearchUsers(t *testing.T) {
	t.Parallel()
	env, boss, bossID := startAdmin(t)
	now := env.Clock.Now()
	type user struct {
		id      uuid.UUID
		created time.Time
	}
	var all []user
	add := func(name, email string, created time.Time) uuid.UUID {
		id := insertUser(t, env, name, email, created)
		all = append(all, user{id, created})
		return id
	}
	for i := range 20 {
		add(fmt.Sprintf("player%02d", i), fmt.Sprintf("player%02d@example.com", i), now.Add(-time.Duration(i)*time.Hour))
	}
	// Three accounts created at the same instant: the id breaks the tie.
	for _, n := range []string{"twin_a", "twin_b", "twin_c"} {
		add(n, n+"@twins.io", now.Add(-30*time.Minute))
	}
	add("carol", "Carol.Smith@Example.ORG", now.Add(-2*day))
	add("axb", "axb@example.com", now.Add(-3*day))
	gone := add("gone", "gone@example.com", now.Add(-4*day))
	if res := boss.Do("DELETE", "/api/auth/users/"+gone.String(), nil); res.Status != 200 {
		t.Fatalf("delete: %d %s", res.Status, res.Raw)
	}
	all = slices.DeleteFunc(all, func(u user) bool { return u.id == gone })
	all = append(all, user{bossID, now.Add(-365 * day)})
	slices.SortFunc(all, func(a, b user) int {
		if c := b.created.Compare(a.created); c != 0 {
			return c
		}
		return strings.Compare(b.id.String(), a.id.String())
	})
	var wantOrder []string
	for _, u := range all {
		wantOrder = append(wantOrder, u.id.String())
	}

	ids := func(res apitest.Response) []string {
		var out []string
		for _, u := range res.Body["users"].([]any) {
			out = append(out, u.(map[string]any)["_id"].(string))
		}
		return out
	}
	// Pages of 10 cover every live account once, newest first, in a stable order.
	var paged []string
	for page := 1; page <= 3; page++ {
		res := boss.Do("GET", fmt.Sprintf("/api/auth/users?page=%d&limit=10", page), nil)
		if res.Status != 200 || str(res.Body["totalPages"]) != "3" || str(res.Body["totalUsers"]) != "26" || str(res.Body["page"]) != fmt.Sprint(page) {
			t.Fatalf("page %d: %d %s", page, res.Status, res.Raw)
		}
		for _, u := range res.Body["users"].([]any) {
			m := u.(map[string]any)
			for _, k := range []string{"_id", "username", "email", "balance", "isAdmin", "createdAt"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("user lacks %s: %v", k, m)
				}
			}
			if _, err := time.Parse(time.RFC3339, m["createdAt"].(string)); err != nil {
				t.Fatalf("createdAt: %v", m["createdAt"])
			}
		}
		paged = append(paged, ids(res)...)
	}
	if !slices.Equal(paged, wantOrder) {
		t.Fatalf("pages:\n got %v\nwant %v", paged, wantOrder)
	}
	if res := boss.Do("GET", "/api/auth/users", nil); len(ids(res)) != 10 || str(res.Body["page"]) != "1" {
		t.Fatalf("defaults page 1, limit 10: %s", res.Raw)
	}
	if res := boss.Do("GET", "/api/auth/users?page=4&limit=10", nil); res.Status != 200 || len(ids(res)) != 0 || str(res.Body["totalPages"]) != "3" {
		t.Fatalf("past the last page: %d %s", res.Status, res.Raw)
	}
	if res := boss.Do("GET", "/api/auth/users?limit=100", nil); len(ids(res)) != 26 || str(res.Body["totalPages"]) != "1" {
		t.Fatalf("limit 100: %s", res.Raw)
	}
	boss0 := boss.Do("GET", "/api/auth/users?page=3&limit=10", nil).Body["users"].([]any)
	if last := boss0[len(boss0)-1].(map[string]any); last["username"] != "boss" || last["isAdmin"] != true {
		t.Fatalf("the oldest account is the admin: %v", last)
	}

	for _, tc := range []struct{ query, status, message string }{
		{"page=0", "400", "Page must be a whole number of at least 1"},
		{"page=-3", "400", "Page must be a whole number of at least 1"},
		{"page=abc", "400", "Invalid request: page must be a whole number"},
		{"page=1.5", "400", "Invalid request: page must be a whole number"},
		{"limit=0", "400", "Limit must be between 1 and 100"},
		{"limit=101", "400", "Limit must be between 1 and 100"},
		{"limit=-1", "400", "Limit must be between 1 and 100"},
		{"limit=ten", "400", "Invalid request: limit must be a whole number"},
	} {
		for _, path := range []string{"/api/auth/users?", "/api/auth/users/search?query=player&"} {
			if res := boss.Do("GET", path+tc.query, nil); str(res.Status) != tc.status || res.Message() != tc.message {
				t.Errorf("%s%s: %d %s", path, tc.query, res.Status, res.Raw)
			}
		}
	}

	search := func(q string) []string {
		t.Helper()
		res := boss.Do("GET", "/api/auth/users/search?query="+q+"&page=1&limit=100", nil)
		if res.Status != 200 {
			t.Fatalf("search %q: %d %s", q, res.Status, res.Raw)
		}
		var names []string
		for _, u := range res.Body["users"].([]any) {
			names = append(names, u.(map[string]any)["username"].(string))
		}
		if str(res.Body["totalUsers"]) != fmt.Sprint(len(names)) {
			t.Fatalf("search %q: totalUsers %v for %d users", q, res.Body["totalUsers"], len(names))
		}
		return names
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"CAROL", []string{"carol"}},                         // username, any case
		{"smith%40example.org", []string{"carol"}},           // email, any case (stored mixed case)
		{"twins.io", []string{"twin_c", "twin_b", "twin_a"}}, // tie order: id descending (v7 ids grow)
		{"a_b", nil}, // '_' is literal, not a wildcard (axb does not match)
		{"twin_", []string{"twin_c", "twin_b", "twin_a"}},
		{"%25", nil},  // '%' is literal
		{"gone", nil}, // deleted accounts are not listed
		{"player1", []string{"player10", "player11", "player12", "player13", "player14", "player15", "player16", "player17", "player18", "player19"}},
		{"nobody", nil},
		{"+player05+", []string{"player05"}}, // surrounding spaces are ignored
	} {
		got := search(tc.query)
		if !slices.Equal(got, tc.want) {
			t.Errorf("search %q = %v, want %v", tc.query, got, tc.want)
		}
	}
	// Pagination of a search.
	res := boss.Do("GET", "/api/auth/users/search?query=player&page=2&limit=15", nil)
	if res.Status != 200 || len(ids(res)) != 5 || str(res.Body["totalPages"]) != "2" || str(res.Body["totalUsers"]) != "20" {
		t.Fatalf("search page 2: %s", res.Raw)
	}
	// An empty query lists everyone, like the plain list.
	if res := boss.Do("GET", "/api/auth/users/search?query=&page=1&limit=10", nil); !slices.Equal(ids(res), wantOrder[:10]) {
		t.Fatalf("empty search: %s", res.Raw)
	}
	long := strings.Repeat("x", 101)
	if res := boss.Do("GET", "/api/auth/users/search?query="+long, nil); res.Status != 400 || res.Message() != "Search query must be at most 100 characters" {
		t.Fatalf("long query: %d %s", res.Status, res.Raw)
	}
}

func TestAdjustBalance(t *testing.T) {
	t.Parallel()
	env, boss, bossID := startAdmin(t)
	p := env.Client()
	id := p.Register("player").Str("user._id")
	path := "/api/auth/users/" + id + "/balance"

	steps := []struct {
		name    string
		body    any
		status  int
		message string
		balance string
	}{
		{"add", map[string]any{"amount": 50.25}, 200, "", "1050.25"},
		{"subtract", map[string]any{"amount": -50.25, "note": "correction"}, 200, "", "1000"},
		{"below zero", map[string]any{"amount": -1000.01}, 400, "Balance cannot go below 0", "1000"},
		{"down to zero", map[string]any{"amount": -1000}, 200, "", "0"},
		{"zero", map[string]any{"amount": 0}, 400, "Amount cannot be 0", "0"},
		{"zero with decimals", map[string]any{"amount": "0.00"}, 400, "Amount cannot be 0", "0"},
		{"three decimals", map[string]any{"amount": 1.234}, 400, "Amount must be a number with at most 2 decimal places", "0"},
		{"text", map[string]any{"amount": "lots"}, 400, "Amount must be a number with at most 2 decimal places", "0"},
		{"missing", map[string]any{}, 400, "Amount must be a number with at most 2 decimal places", "0"},
		{"boolean", map[string]any{"amount": true}, 400, "Invalid request: amount must be a number", "0"},
		{"huge", map[string]any{"amount": 1e30}, 400, "Amount is too large", "0"},
		{"beyond int64", map[string]any{"amount": 92233720369}, 400, "Amount is too large", "0"},
		{"up to the most a player may bet with", map[string]any{"amount": 10000000000}, 200, "", "10000000000"},
		{"then above it", map[string]any{"amount": 0.01}, 400, "Balance cannot go above 10000000000", "10000000000"},
		{"back", map[string]any{"amount": -10000000000}, 200, "", "0"},
		{"long note", map[string]any{"amount": 1, "note": strings.Repeat("n", 201)}, 400, "Note must be at most 200 characters", "0"},
		{"string amount", map[string]any{"amount": "12.5"}, 200, "", "12.5"},
	}
	succeeded := 0
	for _, s := range steps {
		res := boss.Do("PATCH", path, s.body)
		if res.Status != s.status || (s.message != "" && res.Message() != s.message) {
			t.Fatalf("%s: %d %s", s.name, res.Status, res.Raw)
		}
		if s.status == 200 {
			succeeded++
			if str(res.Get("user.balance")) != s.balance || res.Str("user._id") != id || res.Str("user.createdAt") == "" {
				t.Fatalf("%s: %s", s.name, res.Raw)
			}
		}
		if got := balance(t, p); got.String() != s.balance {
			t.Fatalf("%s: balance %s, want %s", s.name, got, s.balance)
		}
	}
	for _, tc := range []struct {
		path, message string
		status        int
	}{
		{"/api/auth/users/not-a-uuid/balance", "Invalid user id", 400},
		{"/api/auth/users/" + uuid.NewString() + "/balance", "User not found", 404},
	} {
		if res := boss.Do("PATCH", tc.path, map[string]any{"amount": 1}); res.Status != tc.status || res.Message() != tc.message {
			t.Errorf("%s: %d %s", tc.path, res.Status, res.Raw)
		}
	}

	// Each success is one admin_adjustment ledger entry naming the admin, and one audit row.
	if n := dbInt(t, env, `SELECT count(*) FROM ledger_entries WHERE user_id = $1 AND kind = 'admin_adjustment' AND actor_id = $2`, id, bossID); n != int64(succeeded) {
		t.Fatalf("ledger entries: %d, want %d", n, succeeded)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM ledger_entries WHERE user_id = $1 AND note = 'correction' AND amount = $2`, id, -int64(mustAmount(t, "50.25"))); n != 1 {
		t.Fatalf("the note is kept in the ledger: %d", n)
	}
	audit := boss.Do("GET", "/api/auth/audit?userId="+id+"&limit=100", nil)
	entries := audit.Body["entries"].([]any)
	if audit.Status != 200 || len(entries) != succeeded {
		t.Fatalf("audit: %d %s", audit.Status, audit.Raw)
	}
	last := entries[0].(map[string]any) // newest first: the "string amount" step
	var before, after map[string]any
	if json.Unmarshal([]byte(last["before"].(string)), &before) != nil || json.Unmarshal([]byte(last["after"].(string)), &after) != nil {
		t.Fatalf("audit fields are JSON objects: %v", last)
	}
	if last["action"] != "adjust_balance" || last["actorId"] != bossID.String() || last["actorUsername"] != "boss" ||
		last["targetUserId"] != id || last["targetUsername"] != "player" ||
		before["balance"] != "0" || after["balance"] != "12.5" || after["amount"] != "12.5" || after["ledgerEntryId"] == nil {
		t.Fatalf("audit entry: %v before %v after %v", last, before, after)
	}
	ledgerClean(t, env)
}

func TestConcurrentBalanceAdjustments(t *testing.T) {
	t.Parallel()
	env, boss, _ := startAdmin(t)
	p := env.Client()
	id := p.Register("player").Str("user._id")
	path := "/api/auth/users/" + id + "/balance"

	// 10 credits and 10 debits of $1 at once: every one applies exactly once.
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			amount := 1
			if i%2 == 1 {
				amount = -1
			}
			statuses[i] = boss.Do("PATCH", path, map[string]any{"amount": amount}).Status
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != 200 {
			t.Fatalf("adjustment %d: %d", i, s)
		}
	}
	if b := balance(t, p); b != money.Dollars(1000) {
		t.Fatalf("balance after ±1 × 10: %s", b)
	}

	// Down to $10, then 20 debits of $1 at once: exactly 10 succeed, the rest
	// are refused, and the balance ends at exactly 0.
	if res := boss.Do("PATCH", path, map[string]any{"amount": -990}); res.Status != 200 {
		t.Fatalf("%d %s", res.Status, res.Raw)
	}
	var mu sync.Mutex
	count := map[int]int{}
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := boss.Do("PATCH", path, map[string]any{"amount": -1})
			mu.Lock()
			count[res.Status]++
			mu.Unlock()
			if res.Status == 400 && res.Message() != "Balance cannot go below 0" {
				t.Errorf("refusal: %s", res.Raw)
			}
		}()
	}
	wg.Wait()
	if count[200] != 10 || count[400] != 10 {
		t.Fatalf("statuses: %v", count)
	}
	if b := balance(t, p); b != 0 {
		t.Fatalf("final balance %s", b)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM admin_audit WHERE target_user_id = $1`, id); n != 31 {
		t.Fatalf("audit rows: %d, want 31", n)
	}
	ledgerClean(t, env)
}

func TestDeleteUser(t *testing.T) {
	t.Parallel()
	env, boss, bossID := startAdmin(t)
	player := env.Client()
	id := player.Register("player").Str("user._id")
	laptop := env.Client()
	laptop.Login("player@example.com", "secret123")
	if res := player.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}); res.Status != 200 {
		t.Fatalf("dice: %d %s", res.Status, res.Raw)
	}

	res := boss.Do("DELETE", "/api/auth/users/"+id, nil)
	if res.Status != 200 || res.Str("message") != "User deleted successfully" || str(res.Body["sessionsRevoked"]) != "2" {
		t.Fatalf("delete: %d %s", res.Status, res.Raw)
	}
	// Every session ended at once: access tokens, refresh tokens and sign-in.
	for _, c := range []*apitest.Client{player, laptop} {
		if r := c.Do("GET", "/api/auth/user", nil); r.Status != 401 || r.Message() != "Token is not valid" {
			t.Fatalf("deleted user's token: %d %s", r.Status, r.Raw)
		}
		if r := c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}); r.Status != 401 {
			t.Fatalf("deleted user's bet: %d %s", r.Status, r.Raw)
		}
		if r := c.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": c.RefreshToken}); r.Status != 401 {
			t.Fatalf("deleted user's refresh: %d %s", r.Status, r.Raw)
		}
	}
	if r := env.Client().Do("POST", "/api/auth/login", map[string]any{"username": "player", "password": "secret123", "turnstileToken": apitest.BotToken}); r.Status != 401 {
		t.Fatalf("deleted user's login: %d %s", r.Status, r.Raw)
	}
	// Bets and ledger entries are kept; the account is hidden from the list.
	if n := dbInt(t, env, `SELECT count(*) FROM bets WHERE user_id = $1`, id); n != 1 {
		t.Fatalf("bets kept: %d", n)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM ledger_entries WHERE user_id = $1`, id); n < 2 {
		t.Fatalf("ledger kept: %d", n)
	}
	if r := boss.Do("GET", "/api/auth/users/search?query=player", nil); len(r.Body["users"].([]any)) != 0 {
		t.Fatalf("deleted user listed: %s", r.Raw)
	}
	if r := boss.Do("GET", "/api/auth/users", nil); str(r.Body["totalUsers"]) != "1" {
		t.Fatalf("list after delete: %s", r.Raw)
	}
	// The username and email are free again, for a new, different account.
	again := env.Client().Register("player")
	if again.Str("user._id") == id || str(again.Get("user.balance")) != "1000" {
		t.Fatalf("re-registration: %s", again.Raw)
	}
	// The audit log has the deletion.
	audit := boss.Do("GET", "/api/auth/audit?userId="+id, nil)
	entries := audit.Body["entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("audit: %s", audit.Raw)
	}
	e := entries[0].(map[string]any)
	var before, after map[string]any
	if json.Unmarshal([]byte(e["before"].(string)), &before) != nil || json.Unmarshal([]byte(e["after"].(string)), &after) != nil {
		t.Fatalf("audit fields are JSON objects: %v", e)
	}
	if e["action"] != "delete_user" || e["actorId"] != bossID.String() || before["username"] != "player" ||
		before["email"] != "player@example.com" || before["deleted"] != false || after["deleted"] != true || after["sessionsRevoked"] != 2.0 {
		t.Fatalf("audit entry: %v", e)
	}

	for _, tc := range []struct {
		name, id, message string
		status            int
	}{
		{"again", id, "User not found", 404},
		{"unknown", uuid.NewString(), "User not found", 404},
		{"bad id", "123", "Invalid user id", 400},
		{"self", bossID.String(), "You cannot delete your own account", 400},
	} {
		if r := boss.Do("DELETE", "/api/auth/users/"+tc.id, nil); r.Status != tc.status || r.Message() != tc.message {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	if r := boss.Do("GET", "/api/auth/user", nil); r.Status != 200 {
		t.Fatalf("the admin is still signed in: %d", r.Status)
	}
	ledgerClean(t, env)
}

func TestDeleteAdministrators(t *testing.T) {
	t.Parallel()
	env, boss, bossID := startAdmin(t)
	ctx := context.Background()

	// An administrator may delete another administrator.
	other := env.Client()
	otherID := other.Register("other").Str("user._id")
	if _, err := env.App.Accounts.Promote(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	if r := boss.Do("DELETE", "/api/auth/users/"+otherID, nil); r.Status != 200 {
		t.Fatalf("delete another admin: %d %s", r.Status, r.Raw)
	}
	if r := other.Do("GET", "/api/auth/stats/users", nil); r.Status != 401 {
		t.Fatalf("deleted admin's token: %d", r.Status)
	}

	// The last administrator cannot be deleted, even by a caller whose role
	// was read before it was revoked (the use case re-checks under lock).
	stale := accounts.Principal{UserID: uuid.New(), IsAdmin: true}
	_, err := env.App.Admin.DeleteUser(ctx, stale, bossID.String())
	if !errors.Is(err, admin.ErrDeleteLastAdmin) {
		t.Fatalf("deleting the last admin: %v", err)
	}
	// And a stale caller cannot delete anyone else either.
	victim := insertUser(t, env, "victim", "victim@example.com", env.Clock.Now())
	if _, err := env.App.Admin.DeleteUser(ctx, stale, victim.String()); !errors.Is(err, accounts.ErrAdminRequired) {
		t.Fatalf("stale caller: %v", err)
	}

	// Two administrators deleting each other at once: exactly one succeeds,
	// so an administrator always remains.
	for round := range 5 {
		a, b := env.Client(), env.Client()
		an, bn := fmt.Sprintf("duela%d", round), fmt.Sprintf("duelb%d", round)
		aID, bID := a.Register(an).Str("user._id"), b.Register(bn).Str("user._id")
		for _, n := range []string{an, bn} {
			if _, err := env.App.Accounts.Promote(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		dbExec(t, env, `UPDATE users SET is_admin = false WHERE id = $1`, bossID) // leave only the duellists
		var wg sync.WaitGroup
		var sa, sb int
		wg.Add(2)
		go func() { defer wg.Done(); sa = a.Do("DELETE", "/api/auth/users/"+bID, nil).Status }()
		go func() { defer wg.Done(); sb = b.Do("DELETE", "/api/auth/users/"+aID, nil).Status }()
		wg.Wait()
		if (sa == 200) == (sb == 200) {
			t.Fatalf("round %d: statuses %d and %d, want exactly one success", round, sa, sb)
		}
		if n := dbInt(t, env, `SELECT count(*) FROM users WHERE is_admin AND deleted_at IS NULL`); n != 1 {
			t.Fatalf("round %d: %d admins left", round, n)
		}
		dbExec(t, env, `UPDATE users SET is_admin = true WHERE id = $1`, bossID)
		dbExec(t, env, `UPDATE users SET is_admin = false WHERE username IN ($1, $2)`, an, bn)
	}
}

// TestCreateAndPromoteAdmin covers what `fairplay admin create` and `admin
// promote` run, against the real database.
func TestCreateAndPromoteAdmin(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ctx := context.Background()
	svc := env.App.Accounts

	u, created, err := svc.CreateAdmin(ctx, "root", "root@example.com", "secret123", false)
	if err != nil || !created || !u.IsAdmin || u.Balance != money.Dollars(1000) {
		t.Fatalf("create: %+v %v %v", u, created, err)
	}
	c := env.Client()
	if res := c.Login("root", "secret123"); res.Body["user"].(map[string]any)["isAdmin"] != true {
		t.Fatalf("admin login: %s", res.Raw)
	}
	if res := c.Do("GET", "/api/auth/stats/users", nil); res.Status != 200 {
		t.Fatalf("created admin's access: %d", res.Status)
	}
	if _, _, err := svc.CreateAdmin(ctx, "root", "other@example.com", "secret123", false); !errors.Is(err, accounts.ErrUsernameTaken) {
		t.Fatalf("create twice: %v", err)
	}
	if _, _, err := svc.CreateAdmin(ctx, "Root!", "r@example.com", "secret123", false); !errors.Is(err, accounts.ErrUsernameChars) {
		t.Fatalf("bad username: %v", err)
	}
	if _, _, err := svc.CreateAdmin(ctx, "shorty", "s@example.com", "123", false); !errors.Is(err, accounts.ErrPasswordTooShort) {
		t.Fatalf("short password: %v", err)
	}

	// --if-missing on an existing player promotes it and keeps its password.
	p := env.Client()
	p.Register("player")
	u, created, err = svc.CreateAdmin(ctx, "player", "player@example.com", "different1", true)
	if err != nil || created || !u.IsAdmin {
		t.Fatalf("create --if-missing: %+v %v %v", u, created, err)
	}
	env.Client().Login("player", "secret123")
	if res := p.Do("GET", "/api/auth/stats/users", nil); res.Status != 200 {
		t.Fatalf("promoted player's existing token: %d", res.Status)
	}

	// promote
	q := env.Client()
	q.Register("promoted")
	if res := q.Do("GET", "/api/auth/users", nil); res.Status != 403 {
		t.Fatalf("before promotion: %d", res.Status)
	}
	if u, err := svc.Promote(ctx, "PROMOTED"); err != nil || !u.IsAdmin || u.Username != "promoted" {
		t.Fatalf("promote: %+v %v", u, err)
	}
	if res := q.Do("GET", "/api/auth/users", nil); res.Status != 200 {
		t.Fatalf("after promotion: %d", res.Status)
	}
	if _, err := svc.Promote(ctx, "nobody"); !errors.Is(err, accounts.ErrUserNotFound) {
		t.Fatalf("promote unknown: %v", err)
	}
	// A deleted account cannot be promoted.
	dbExec(t, env, `UPDATE users SET deleted_at = now() WHERE username = 'promoted'`)
	if _, err := svc.Promote(ctx, "promoted"); !errors.Is(err, accounts.ErrUserNotFound) {
		t.Fatalf("promote deleted: %v", err)
	}
}

func TestSearchCountsAtMostTenThousandMatches(t *testing.T) {
	t.Parallel()
	env, boss, _ := startAdmin(t)
	dbExec(t, env, `
		INSERT INTO users (id, username, email, password_hash, created_at)
		SELECT gen_random_uuid(), 'capme_' || g, 'capme_' || g || '@example.com', 'x', $1::timestamptz - g * interval '1 second'
		FROM generate_series(1, 10050) g`, env.Clock.Now())
	names := func(res apitest.Response) []string {
		var out []string
		for _, u := range res.Body["users"].([]any) {
			out = append(out, u.(map[string]any)["username"].(string))
		}
		return out
	}
	for _, tc := range []struct {
		query        string
		page         int
		total, pages string
		capped       bool
		first, last  string
		count        int
	}{
		// Dense matches: newest first, found by walking the creation-time index.
		{"capme", 1, "10000", "1000", true, "capme_1", "capme_10", 10},
		{"capme", 1000, "10000", "1000", true, "capme_9991", "capme_10000", 10},
		{"capme", 1001, "10000", "1000", true, "", "", 0},
		// Below the cap the count is exact.
		{"capme_100", 1, "62", "7", false, "capme_100", "capme_1008", 10},
		{"capme_100", 7, "62", "7", false, "capme_10049", "capme_10050", 2},
	} {
		res := boss.Do("GET", fmt.Sprintf("/api/auth/users/search?query=%s&page=%d&limit=10", tc.query, tc.page), nil)
		got := names(res)
		if res.Status != 200 || str(res.Body["totalUsers"]) != tc.total || str(res.Body["totalPages"]) != tc.pages ||
			res.Body["totalCapped"] != tc.capped || len(got) != tc.count {
			t.Fatalf("%s page %d: %d %s", tc.query, tc.page, res.Status, res.Raw)
		}
		if tc.count > 0 && (got[0] != tc.first || got[len(got)-1] != tc.last) {
			t.Fatalf("%s page %d: %v", tc.query, tc.page, got)
		}
	}
	// The plain list is never capped: its count comes from the rollup.
	if res := boss.Do("GET", "/api/auth/users?page=1006&limit=10", nil); str(res.Body["totalUsers"]) != "10051" || len(names(res)) != 1 {
		t.Fatalf("list: %s", res.Raw)
	}
}
