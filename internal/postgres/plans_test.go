package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

// sqlLiteral writes a statement's argument as SQL: the tests below run
// statements through PREPARE and EXPLAIN EXECUTE, whose arguments are text.
func sqlLiteral(v any) string {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		return quote(v)
	case []byte:
		return quote(string(v))
	case uuid.UUID:
		return quote(v.String())
	case time.Time:
		return quote(v.Format(time.RFC3339Nano))
	}
	panic(fmt.Sprintf("sqlLiteral: %T", v))
}

// planNode is a node of EXPLAIN (ANALYZE, FORMAT JSON)'s plan.
type planNode struct {
	Type     string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Rows     float64    `json:"Actual Rows"`
	Loops    float64    `json:"Actual Loops"`
	Removed  float64    `json:"Rows Removed by Filter"`
	Plans    []planNode `json:"Plans"`
}

// scanRead is the rows a scan read: those it returned and those its filter
// removed, over all its loops.
type scanRead struct {
	scan        string
	rows, loops float64
}

// rowsRead lists each scan of table in the plan with the rows it read.
func (n planNode) rowsRead(table string) []scanRead {
	var out []scanRead
	if n.Relation == table && n.Type != "ModifyTable" {
		// EXPLAIN gives both counts per loop.
		out = append(out, scanRead{n.Type + " " + n.Index, (n.Rows + n.Removed) * n.Loops, n.Loops})
	}
	for _, c := range n.Plans {
		out = append(out, c.rowsRead(table)...)
	}
	return out
}

// TestGameActionsReadOnlyTheirGame: the statements of a game action find the
// game by the player's own entries, however many other games are running
// and whatever the planner believed when it last counted them. With
// statistics taken when no game ran and 300 other players' games running
// now, the generic plan of each (what a pooled connection's cached statement
// settles on after five runs) reads no bet but the player's. Before, the
// save of the bet scanned every running game's index entry. With 2,000 live
// sessions of the player's, the session check reads the caller's alone
// (before, it filtered the player's every live session). The action's
// statements also call the limits' rule rather than inline it.
func TestGameActionsReadOnlyTheirGame(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	store := postgres.NewPlayStore(pool)
	mustExec(t, pool, `ALTER TABLE bets SET (autovacuum_enabled = false)`)
	mustExec(t, pool, `ANALYZE bets`)
	p := newBatchPlayer(t, pool, "alone", 1000e8)
	id := startPump(t, store, p)
	mustExec(t, pool, `INSERT INTO bets (id, user_id, game, status, amount, seed_pair_id, client_seed, nonce, params, state)
		SELECT gen_random_uuid(), gen_random_uuid(), 'pump', 'active', 1000000000, gen_random_uuid(), 'c', 1,
		       '{"pumps":0}', '{"pumps":0}'
		FROM generate_series(1, 300)`)
	// And the player has piled up live sessions: the statements' session
	// check reads the caller's alone.
	mustExec(t, pool, `INSERT INTO sessions (id, user_id, refresh_hash)
		SELECT gen_random_uuid(), $1, uuid_send(gen_random_uuid()) FROM generate_series(1, 2000)`, p.user)
	var (
		amount        int64
		params, state []byte
	)
	if err := pool.QueryRow(ctx, `SELECT amount, params, state FROM bets WHERE id = $1`, id).Scan(&amount, &params, &state); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	next := []byte(`{"pumps":1}`)
	// A pump with an extra stake of 1 (as a double), so that every part of
	// each statement runs: the money moves with its ledger entry, and the bet
	// is saved with one more step.
	const stake = int64(1e8)
	args := []any{p.user, stake, int64(0), id, "active", amount + stake, int64(0), int64(0), next, next, now, nil,
		p.session, now.Add(-time.Hour), "pump", amount, params, state}
	for _, c := range []struct {
		name string
		sql  string
		args []any
		// rule: the statement holds the limits' rule as one call (migration
		// 00018), not inlined: the plan never names a column only the rule
		// reads.
		rule bool
		// table is the table whose every scan must read one row at most
		// (and run); sessions are checked in every statement that has them.
		table string
	}{
		{"actionSQL", postgres.ActionSQL, args, true, "bets"},
		// A pump without a stake: status, amount and payout stay.
		{"actionSameSQL", postgres.ActionSameSQL, append([]any{p.user, int64(0), int64(0), id, "active", amount}, args[6:]...), true, "bets"},
		{"lockGameSQL", postgres.LockGameSQL, []any{id, p.user, "pump"}, false, "bets"},
		{"liveSessionSQL", postgres.LiveSessionSQL, []any{p.session, p.user, now.Add(-time.Hour)}, false, "sessions"},
		{"saveGameSQL", postgres.SaveGameSQL, args[:12], true, "bets"},
	} {
		t.Run(c.name, func(t *testing.T) {
			verbose, plan := genericPlan(t, pool.Config().ConnConfig, c.sql, c.args, c.rule)
			if c.rule && strings.Contains(verbose, "next_limits_from") {
				t.Errorf("the plan prepares the limits' rule inlined:\n%s", verbose)
			}
			for _, r := range plan.rowsRead("sessions") {
				if r.rows > 1 {
					t.Errorf("%s read %.0f sessions, want the caller's alone", r.scan, r.rows)
				}
			}
			read := plan.rowsRead(c.table)
			if len(read) == 0 {
				raw, _ := json.Marshal(plan)
				t.Fatalf("no scan of %s in the plan: %s", c.table, raw)
			}
			for _, r := range read {
				if r.loops == 0 {
					t.Errorf("%s never ran: the statement did not reach it", r.scan)
				}
				if r.rows > 1 {
					t.Errorf("%s read %.0f rows of %s, want the player's alone", r.scan, r.rows, c.table)
				}
			}
		})
	}
}

// genericPlan prepares sql on a connection of its own with
// plan_cache_mode = force_generic_plan (the plan a pooled connection's cached
// statement settles on after five runs) and runs it with args under EXPLAIN
// ANALYZE in a transaction it rolls back; with verbose, it first returns
// EXPLAIN (VERBOSE)'s text of that plan too.
func genericPlan(t *testing.T, cfg *pgx.ConnConfig, sql string, args []any, verbose bool) (string, planNode) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	lits := make([]string, len(args))
	for i, a := range args {
		lits[i] = sqlLiteral(a)
	}
	for _, q := range []string{"SET plan_cache_mode = force_generic_plan", "BEGIN", "PREPARE s AS " + sql} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	execute := "EXECUTE s(" + strings.Join(lits, ", ") + ")"
	var text strings.Builder
	if verbose {
		rows, err := conn.Query(ctx, "EXPLAIN (VERBOSE) "+execute)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			text.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	var plan []struct{ Plan planNode }
	if err := conn.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+execute).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if len(plan) != 1 {
		t.Fatalf("%d plans", len(plan))
	}
	return text.String(), plan[0].Plan
}

// TestSignedInUserReadsOneSession: the read of the signed-in user
// (GET /api/auth/user) finds the caller's session by its id, however many
// live sessions the player has piled up (ten sign-ins a quarter of an hour,
// kept for 30 idle days) and whatever the planner last counted. The generic
// plan of a lookup by session and player may take the player's index of live
// sessions and filter them all.
func TestSignedInUserReadsOneSession(t *testing.T) {
	pool := pgtest.New(t)
	mustExec(t, pool, `ANALYZE sessions`)
	p := newBatchPlayer(t, pool, "many", 1000e8)
	mustExec(t, pool, `INSERT INTO sessions (id, user_id, refresh_hash)
		SELECT gen_random_uuid(), $1, uuid_send(gen_random_uuid()) FROM generate_series(1, 2000)`, p.user)
	now := time.Now().UTC()
	_, plan := genericPlan(t, pool.Config().ConnConfig, postgres.SessionUserSQL,
		[]any{p.user, p.session, now.Add(-time.Hour), now.Add(-time.Hour)}, false)
	read := plan.rowsRead("sessions")
	if len(read) == 0 {
		raw, _ := json.Marshal(plan)
		t.Fatalf("no scan of sessions in the plan: %s", raw)
	}
	for _, r := range read {
		if r.loops == 0 {
			t.Errorf("%s never ran", r.scan)
		}
		if r.rows > 1 {
			t.Errorf("%s read %.0f sessions, want the caller's alone", r.scan, r.rows)
		}
	}
}
