package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Report is what -json writes: the runs plus the pgbench comparison and the
// server's usage over the whole load.
type Report struct {
	When     string `json:"when"`
	Label    string `json:"label,omitempty"`
	Duration string `json:"duration"`
	Users    int    `json:"users"`
	// PgbenchTPS is pgbench -N transactions/s by client count (the same
	// Postgres, in the same bench run).
	PgbenchTPS map[string]float64 `json:"pgbench_tps,omitempty"`
	// DiceToPgbench is dice bets/s at a concurrency over pgbench tps at as
	// many clients.
	DiceToPgbench map[string]float64 `json:"dice_to_pgbench,omitempty"`
	// Server is the server's usage over the whole load.
	Server *Usage    `json:"server,omitempty"`
	Runs   []*Result `json:"runs"`
}

// loadReport reads a report: this program's, an older bench-*.json (one
// pgbench figure at 32 clients) or a bare list of runs (load-*.json).
func loadReport(path string) (*Report, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var runs []*Result
	if json.Unmarshal(raw, &runs) == nil {
		return &Report{Runs: runs}, nil
	}
	var loose struct {
		Report
		PgbenchTPS json.RawMessage `json:"pgbench_tps"`
	}
	if err := json.Unmarshal(raw, &loose); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := loose.Report
	r.PgbenchTPS = nil
	if len(loose.PgbenchTPS) > 0 {
		if err := json.Unmarshal(loose.PgbenchTPS, &r.PgbenchTPS); err != nil {
			var one float64
			if json.Unmarshal(loose.PgbenchTPS, &one) == nil {
				r.PgbenchTPS = map[string]float64{"32": one} // older reports: pgbench -N -c 32
			}
		}
	}
	return &r, nil
}

type compareKey struct {
	scenario, op string
	conc         int
}

func flatten(r *Report) (map[compareKey]*Result, []compareKey) {
	m := map[compareKey]*Result{}
	var order []compareKey
	add := func(k compareKey, res *Result) {
		if _, dup := m[k]; !dup {
			order = append(order, k)
		}
		m[k] = res
	}
	for _, run := range r.Runs {
		add(compareKey{run.Scenario, "", run.Concurrency}, run)
		names := run.Order
		if len(names) == 0 { // older reports: no order, sort the names
			names = slices.Sorted(maps.Keys(run.ByOp))
		}
		for _, name := range names {
			add(compareKey{run.Scenario, name, run.Concurrency}, run.ByOp[name])
		}
	}
	return m, order
}

func change(before, after float64) string {
	if before == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(after-before)/before)
}

// compare prints req/s and p99 of every scenario, operation and concurrency
// of two reports side by side, with the change.
func compare(oldPath, newPath string) (string, error) {
	before, err := loadReport(oldPath)
	if err != nil {
		return "", err
	}
	after, err := loadReport(newPath)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	w := &out
	bm, border := flatten(before)
	am, aorder := flatten(after)
	keys := aorder
	for _, k := range border {
		if _, ok := am[k]; !ok {
			keys = append(keys, k)
		}
	}
	label := func(r *Report, path string) string {
		s := path[strings.LastIndexByte(path, '/')+1:]
		if r.Label != "" {
			s += " (" + r.Label + ")"
		}
		return s
	}
	fmt.Fprintf(w, "before: %s\nafter:  %s\n", label(before, oldPath), label(after, newPath))
	const f = "%-26s %5s %10s %10s %8s %10s %10s %8s\n"
	fmt.Fprintf(w, f, "scenario/op", "conc", "req/s old", "req/s new", "change", "p99 old", "p99 new", "change")
	num := func(r *Result, v func(*Result) float64, format string) string {
		if r == nil {
			return "-"
		}
		return fmt.Sprintf(format, v(r))
	}
	for _, k := range keys {
		b, a := bm[k], am[k]
		name := k.scenario
		if k.op != "" {
			ref := a
			if ref == nil {
				ref = b
			}
			name = "  " + k.op
			if ref.Kind == kindCall {
				name = "    " + k.op
			}
		}
		rps := func(r *Result) float64 { return r.RPS }
		p99 := func(r *Result) float64 { return r.P99ms }
		rc, pc := "-", "-"
		if a != nil && b != nil {
			rc, pc = change(b.RPS, a.RPS), change(b.P99ms, a.P99ms)
		}
		fmt.Fprintf(w, f, name, strconv.Itoa(k.conc), num(b, rps, "%.1f"), num(a, rps, "%.1f"), rc,
			num(b, p99, "%.2f"), num(a, p99, "%.2f"), pc)
	}
	// The server's CPU and counted work per operation, by scenario (runs
	// that measured them).
	work := func(v func(*Work) float64) func(*Result) float64 {
		return func(r *Result) float64 {
			if r.ServerWork == nil {
				return 0
			}
			return v(r.ServerWork)
		}
	}
	for _, m := range []struct {
		title, format string
		v             func(*Result) float64
	}{
		{"server CPU µs/op", "%.1f", func(r *Result) float64 { return r.ServerCPUus }},
		{"server objects/op", "%.0f", work(func(x *Work) float64 { return x.Objects })},
		{"server kB allocated/op", "%.2f", work(func(x *Work) float64 { return x.Bytes / 1000 })},
		{"server system calls/op", "%.2f", work(func(x *Work) float64 { return x.Reads + x.Writes })},
		{"server ctx switches/op", "%.2f", work(func(x *Work) float64 { return x.Switches })},
		{"bets per batch", "%.1f", work(func(x *Work) float64 { return x.BetsPerBatch })},
		{"bet statement ms", "%.2f", work(func(x *Work) float64 { return x.BetStatementMs })},
		{"bet statements running", "%.2f", work(func(x *Work) float64 { return x.BetStatementsRunning })},
		{"actions per batch", "%.1f", work(func(x *Work) float64 { return x.ActionsPerBatch })},
		{"action statement ms", "%.2f", work(func(x *Work) float64 { return x.ActionStatementMs })},
		{"action statements running", "%.2f", work(func(x *Work) float64 { return x.ActionStatementsRunning })},
	} {
		var rows []string
		for _, k := range keys {
			get := func(r *Result) (float64, string, bool) {
				if r == nil || m.v(r) == 0 {
					return 0, "-", false
				}
				return m.v(r), fmt.Sprintf(m.format, m.v(r)), true
			}
			bv, bs, bok := get(bm[k])
			av, as, aok := get(am[k])
			if k.op != "" || !bok && !aok {
				continue
			}
			ch := "-"
			if aok && bok {
				ch = change(bv, av)
			}
			rows = append(rows, fmt.Sprintf("%-26s %5d %10s %10s %8s\n", k.scenario, k.conc, bs, as, ch))
		}
		if len(rows) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintf(w, "%-26s %5s %10s %10s %8s\n", m.title, "conc", "old", "new", "change")
			for _, row := range rows {
				fmt.Fprint(w, row)
			}
		}
	}
	clients := slices.Collect(maps.Keys(before.PgbenchTPS))
	for c := range after.PgbenchTPS {
		if !slices.Contains(clients, c) {
			clients = append(clients, c)
		}
	}
	slices.SortFunc(clients, func(x, y string) int { a, _ := strconv.Atoi(x); b, _ := strconv.Atoi(y); return a - b })
	if len(clients) > 0 {
		fmt.Fprintln(w)
		const g = "%-26s %5s %10s %10s %8s\n"
		fmt.Fprintf(w, g, "pgbench -N tps", "conc", "old", "new", "change")
		for _, c := range clients {
			b, bok := before.PgbenchTPS[c]
			a, aok := after.PgbenchTPS[c]
			bs, as, ch := "-", "-", "-"
			if bok {
				bs = fmt.Sprintf("%.1f", b)
			}
			if aok {
				as = fmt.Sprintf("%.1f", a)
			}
			if aok && bok {
				ch = change(b, a)
			}
			fmt.Fprintf(w, g, "", c, bs, as, ch)
		}
	}
	return out.String(), nil
}
