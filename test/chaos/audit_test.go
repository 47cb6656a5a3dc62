package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/wallet"
)

// startingBalance is what each new account is granted.
var startingBalance = money.Dollars(1000)

// audit checks the money after the drills: the ledger is exact, no bet is
// half applied, and every player's view agrees with the database. With
// lossAllowed (asynchronous replication, where a failover may lose the last
// commits) acknowledged bets and games missing from the database are counted,
// not failed; audit returns how many there were.
func audit(t *testing.T, dbURL string, ps []*player, lossAllowed bool) (lost int) {
	t.Helper()
	ctx := context.Background()
	pool, err := postgres.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	r, err := wallet.Verify(ctx, postgres.NewLedgerStore(pool))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Clean() {
		t.Errorf("wallet.Verify: %d balance drifts, %d bet mismatches: %+v", len(r.Drifts), len(r.Mismatches), r)
	}

	// A bet is one transaction: its stake entry, its nonce, its row and (once
	// settled) its payout entry exist together or not at all.
	checks := []struct{ what, query string }{
		{"ledger entries of bets that do not exist", `
			SELECT count(*) FROM ledger_entries l
			WHERE l.kind IN ('bet', 'payout') AND NOT EXISTS (SELECT 1 FROM bets b WHERE b.id = l.ref_id)`},
		{"bets without exactly one stake entry (two for a doubled hand)", `
			SELECT count(*) FROM bets b
			LEFT JOIN (SELECT ref_id, count(*) AS n FROM ledger_entries WHERE kind = 'bet' GROUP BY ref_id) l ON l.ref_id = b.id
			WHERE coalesce(l.n, 0) NOT IN (1, 2) OR l.n = 2 AND b.game <> 'blackjack'`},
		{"settled bets not paid exactly once when they won and never when they lost", `
			SELECT count(*) FROM bets b
			LEFT JOIN (SELECT ref_id, count(*) AS n FROM ledger_entries WHERE kind = 'payout' GROUP BY ref_id) l ON l.ref_id = b.id
			WHERE b.status = 'settled' AND coalesce(l.n, 0) <> CASE WHEN b.payout > 0 THEN 1 ELSE 0 END`},
		{"bets still running after every game was finished", `SELECT count(*) FROM bets WHERE status <> 'settled'`},
		{"seed pairs whose nonces are not exactly their bets 1…n", `
			SELECT count(*) FROM (
			    -- The active pair's nonce is in its player's row (migration 00028).
			    SELECT p.id, CASE WHEN u.seed_pair = p.id THEN u.seed_nonce ELSE p.nonce END AS nonce
			    FROM seed_pairs p JOIN users u ON u.id = p.user_id) p
			LEFT JOIN (SELECT seed_pair_id, count(*) AS n, max(nonce) AS top, count(DISTINCT nonce) AS distinct_n
			           FROM bets GROUP BY seed_pair_id) b ON b.seed_pair_id = p.id
			WHERE coalesce(b.n, 0) <> p.nonce OR coalesce(b.top, 0) <> p.nonce OR coalesce(b.distinct_n, 0) <> coalesce(b.n, 0)`},
		{"ledger entries other than a signup grant, stakes and payouts", `
			SELECT count(*) FROM ledger_entries WHERE kind NOT IN ('signup_grant', 'bet', 'payout')`},
		{"users without exactly one signup grant", `
			SELECT count(*) FROM users u
			LEFT JOIN (SELECT user_id, count(*) AS n FROM ledger_entries WHERE kind = 'signup_grant' GROUP BY user_id) g ON g.user_id = u.id
			WHERE coalesce(g.n, 0) <> 1`},
	}
	for _, c := range checks {
		var n int64
		if err := pool.QueryRow(ctx, c.query).Scan(&n); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if n != 0 {
			t.Errorf("%d %s", n, c.what)
		}
	}

	var bets, settled int64
	var staked, paid int64
	if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status = 'settled'),
		coalesce(sum(amount), 0)::bigint, coalesce(sum(payout), 0)::bigint FROM bets`).Scan(&bets, &settled, &staked, &paid); err != nil {
		t.Fatal(err)
	}
	t.Logf("database: %d bets (%d settled), staked %s, paid %s; ledger: %d users, %d entries, balances %s",
		bets, settled, money.Amount(staked), money.Amount(paid), r.Totals.Users, r.Totals.Entries, r.Totals.Balances)

	for _, p := range ps {
		lost += auditPlayer(t, pool, p, lossAllowed)
	}
	return lost
}

type serverBet struct {
	game, status   string
	amount, payout money.Amount
	created        time.Time
}

// auditPlayer compares what a player saw with the database: every bet the
// player saw settle exists exactly so, every game it saw start exists, the
// bets it never saw are no more than its bet requests that got no definite
// answer, and its balance reads as the database has it. It returns how many
// acknowledged bets and games the database does not have (failing on them
// unless lossAllowed).
func auditPlayer(t *testing.T, pool *pgxpool.Pool, p *player, lossAllowed bool) (lost int) {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT id, game, status, amount, payout, created_at FROM bets WHERE user_id = $1`, p.userID)
	if err != nil {
		t.Fatal(err)
	}
	server := map[string]serverBet{}
	for rows.Next() {
		var id uuid.UUID
		var b serverBet
		var amount, payout int64
		if err := rows.Scan(&id, &b.game, &b.status, &amount, &payout, &b.created); err != nil {
			t.Fatal(err)
		}
		b.amount, b.payout = money.Amount(amount), money.Amount(payout)
		server[id.String()] = b
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	missing := t.Errorf
	if lossAllowed {
		missing = t.Logf
	}
	for id, seen := range p.seen {
		b, ok := server[id]
		switch {
		case !ok:
			lost++
			missing("%s saw %s bet %s settle, paying %s; the database has no such bet", p.name, seen.game, id, seen.payout)
		case b.game != seen.game || b.status != "settled" || b.amount != seen.stake || b.payout != seen.payout:
			t.Errorf("%s saw %s bet %s settle with stake %s paying %s; the database has %+v", p.name, seen.game, id, seen.stake, seen.payout, b)
		}
	}
	for id, game := range p.started {
		b, ok := server[id]
		switch {
		case !ok:
			if _, settled := p.seen[id]; !settled { // else counted above
				lost++
				missing("%s saw %s game %s start; the database has no such game", p.name, game, id)
			}
		case b.game != game:
			t.Errorf("%s saw %s game %s start; the database has %+v", p.name, game, id, b)
		}
	}
	for _, r := range p.resettled {
		lost++
		missing("%s: %s", p.name, r)
	}
	var unseen []string
	for id, b := range server {
		if !p.placed[id] {
			unseen = append(unseen, fmt.Sprintf("%s %s bet %s (stake %s, paid %s)", b.created.Local().Format("15:04:05.000"), b.game, id, b.amount, b.payout))
		}
	}
	sort.Strings(unseen)
	if len(unseen) > len(p.unknown) {
		t.Errorf("%s has %d bets it never saw placed, but only %d bet requests went unanswered", p.name, len(unseen), len(p.unknown))
	}
	if len(unseen) > 0 {
		t.Logf("%s: bets placed by requests whose answer was lost or an error:\n  %s\nbet requests without a definite answer:\n  %s",
			p.name, strings.Join(unseen, "\n  "), strings.Join(p.unknown, "\n  "))
	}

	var balance, sum int64
	if err := pool.QueryRow(ctx, `SELECT u.balance, (SELECT coalesce(sum(payout - amount), 0)::bigint FROM bets WHERE user_id = u.id)
		FROM users u WHERE u.id = $1`, p.userID).Scan(&balance, &sum); err != nil {
		t.Fatal(err)
	}
	if money.Amount(balance) != startingBalance+money.Amount(sum) {
		t.Errorf("%s: balance %s, but the starting %s plus the bets' results is %s",
			p.name, money.Amount(balance), startingBalance, startingBalance+money.Amount(sum))
	}
	res := p.c.do(http.MethodGet, "/api/auth/user", nil)
	user, _ := res.body["user"].(map[string]any)
	if !res.ok() || user == nil {
		t.Fatalf("%s: GET /api/auth/user after the drills: %d %v %s", p.name, res.status, res.err, res.raw)
	}
	if got, err := money.Parse(fmt.Sprint(user["balance"])); err != nil || got != money.Amount(balance) {
		t.Errorf("%s: the API shows balance %v, the database %s", p.name, user["balance"], money.Amount(balance))
	}
	t.Logf("%s: %d bets (%d seen settled, %d seen started, %d never seen placed; %d bet requests unanswered; %d acknowledged but lost), balance %s",
		p.name, len(server), len(p.seen), len(p.started), len(unseen), len(p.unknown), lost, money.Amount(balance))
	return lost
}

// auditStats compares the admin dashboard's figures, which the server keeps
// in rollups beside the bets, with the bets themselves: a crash between a bet
// and its statistics would leave them apart.
func auditStats(t *testing.T, dbURL string, admin *client) {
	t.Helper()
	if r := admin.do(http.MethodGet, "/api/csrf", nil); !r.ok() {
		t.Fatalf("GET /api/csrf: %d %v", r.status, r.err)
	}
	r := admin.do(http.MethodPost, "/api/auth/login", map[string]any{
		"username": "admin", "password": adminPassword, "turnstileToken": accounts.DevelopmentBotToken})
	if !r.ok() {
		t.Fatalf("admin login: %d %v %s", r.status, r.err, r.raw)
	}
	admin.token = r.str("token")
	wagering := admin.do(http.MethodGet, "/api/auth/stats/wagering", nil)
	activity := admin.do(http.MethodGet, "/api/auth/stats/activity", nil)
	if !wagering.ok() || !activity.ok() {
		t.Fatalf("statistics: %d %s; %d %s", wagering.status, wagering.raw, activity.status, activity.raw)
	}

	ctx := context.Background()
	pool, err := postgres.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	type figures struct {
		bets          int64
		wagered, paid money.Amount
	}
	want := map[string]figures{}
	var total money.Amount
	rows, err := pool.Query(ctx, `SELECT game, count(*), sum(amount)::bigint, sum(payout)::bigint FROM bets GROUP BY game`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var game string
		var f figures
		var wagered, paid int64
		if err := rows.Scan(&game, &f.bets, &wagered, &paid); err != nil {
			t.Fatal(err)
		}
		f.wagered, f.paid = money.Amount(wagered), money.Amount(paid)
		want[game] = f
		total += f.wagered
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	if got, err := wagering.amount("totalWagered"); err != nil || got != total {
		t.Errorf("totalWagered %v, but the bets' stakes sum to %s (%v)", wagering.body["totalWagered"], total, err)
	}
	list, _ := activity.body["games"].([]any)
	seen := 0
	for _, g := range list {
		m, _ := g.(map[string]any)
		game, _ := m["game"].(string)
		w, ok := want[game]
		if !ok {
			continue
		}
		seen++
		bets, _ := json.Number(fmt.Sprint(m["bets"])).Int64()
		wagered, err1 := money.Parse(fmt.Sprint(m["wagered"]))
		paid, err2 := money.Parse(fmt.Sprint(m["paidOut"]))
		if bets != w.bets || wagered != w.wagered || paid != w.paid || err1 != nil || err2 != nil {
			t.Errorf("activity for %s: %d bets, wagered %v, paid out %v; the bets: %d, %s, %s",
				game, bets, m["wagered"], m["paidOut"], w.bets, w.wagered, w.paid)
		}
	}
	if seen != len(want) {
		t.Errorf("activity lists %d of the %d games played: %s", seen, len(want), activity.raw)
	}
	t.Logf("statistics: totalWagered %v (the bets: %s); activity of %d games compared with the bets", wagering.body["totalWagered"], total, seen)
}
