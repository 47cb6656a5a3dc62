package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Kinds of the entries of a Result's ByOp.
const (
	kindOp   = "op"   // a workload operation: one request, or a whole stateful round
	kindCall = "call" // one HTTP endpoint within the rounds
	kindAux  = "aux"  // housekeeping during the run: finishing a failed round, renewing a token
)

// stats is one worker's figures for one name (an operation or an endpoint).
type stats struct {
	lat      []time.Duration
	errors   int
	firstErr string
	kinds    map[string]int
}

// recorder collects one worker's figures during a run.
type recorder struct {
	by    map[string]*stats
	calls int // HTTP requests sent, whatever their outcome
}

func newRecorder() *recorder { return &recorder{by: map[string]*stats{}} }

func (r *recorder) get(name string) *stats {
	s := r.by[name]
	if s == nil {
		s = &stats{kinds: map[string]int{}}
		r.by[name] = s
	}
	return s
}

func (r *recorder) ok(name string, d time.Duration) {
	s := r.get(name)
	s.lat = append(s.lat, d)
}

func (r *recorder) fail(name string, err error) {
	s := r.get(name)
	s.errors++
	s.kinds[errorKind(err)]++
	if s.firstErr == "" {
		s.firstErr = err.Error()
	}
}

// Result is one scenario run's figures at one concurrency level. RPS counts
// successful operations per second (a Mines round or a Blackjack hand is one
// operation); HTTPRPS counts every request sent.
type Result struct {
	Scenario    string  `json:"scenario"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	RPS         float64 `json:"rps"`
	P50ms       float64 `json:"p50_ms"`
	P95ms       float64 `json:"p95_ms"`
	P99ms       float64 `json:"p99_ms"`
	// Kind is op, call or aux for an entry of ByOp.
	Kind string `json:"kind,omitempty"`
	// HTTPRequests and HTTPRPS count every HTTP request of the run.
	HTTPRequests int     `json:"http_requests,omitempty"`
	HTTPRPS      float64 `json:"http_rps,omitempty"`
	// ServerCPUus is the server process's CPU time (user + system) during
	// the run divided by its operations, in microseconds (needs -server-pid).
	ServerCPUus float64 `json:"server_cpu_us_per_op,omitempty"`
	// ServerWork is what the server did per operation, counted rather than
	// timed (needs -server-pid; the allocations also -server-metrics).
	ServerWork *Work `json:"server_work_per_op,omitempty"`
	// ByOp splits the run by operation and, for stateful rounds, by endpoint.
	ByOp map[string]*Result `json:"by_op,omitempty"`
	// Order is the display order of ByOp.
	Order []string `json:"order,omitempty"`
	// FirstErr is a sample error message; ErrorKinds counts errors by HTTP
	// status or by "transport", "decode", "protocol".
	FirstErr   string         `json:"first_error,omitempty"`
	ErrorKinds map[string]int `json:"error_kinds,omitempty"`
	// Statuses counts answers by HTTP status where refusals are expected
	// (the pwflood scenario's flood).
	Statuses map[string]int `json:"statuses,omitempty"`
	// Server is the server process's usage during the run (with -server-pid).
	Server    *Usage `json:"server,omitempty"`
	latencies []time.Duration
}

// Work is the server's work per operation: the objects and bytes its Go
// runtime allocated, its read- and write-class system calls (/proc/<pid>/io
// syscr and syscw) and its threads' context switches.
type Work struct {
	Objects  float64 `json:"objects_allocated,omitempty"`
	Bytes    float64 `json:"bytes_allocated,omitempty"`
	Reads    float64 `json:"read_syscalls"`
	Writes   float64 `json:"write_syscalls"`
	Switches float64 `json:"context_switches"`
	// BetsPerBatch is how many bets a batch statement held on average
	// (fairplay_bet_batched_bets_total over fairplay_bet_batches_total).
	BetsPerBatch float64 `json:"bets_per_batch,omitempty"`
	// ActionsPerBatch is the same of game actions
	// (fairplay_action_batched_actions_total over
	// fairplay_action_batches_total).
	ActionsPerBatch float64 `json:"actions_per_batch,omitempty"`
	// BetStatementMs is how long a bet batch statement took on average, from
	// asking for a pooled connection to reading its last answer
	// (fairplay_bet_batch_seconds_total
	// over fairplay_bet_batches_total), and BetStatementsRunning how many ran
	// at once on average (the seconds' growth over the run's): near the
	// batcher's limit of concurrent batches, the statement's latency bounds
	// the bets a second. ActionStatementMs and ActionStatementsRunning are
	// the same of game actions.
	BetStatementMs          float64 `json:"bet_statement_ms,omitempty"`
	BetStatementsRunning    float64 `json:"bet_statements_running,omitempty"`
	ActionStatementMs       float64 `json:"action_statement_ms,omitempty"`
	ActionStatementsRunning float64 `json:"action_statements_running,omitempty"`
}

// Usage is CPU and memory use over a run.
type Usage struct {
	// CPUPercent is the server's CPU time over the run's wall time (100 = one core).
	CPUPercent float64 `json:"cpu_percent"`
	// RSSMB is the server's resident set at the end of the run.
	RSSMB float64 `json:"rss_mb"`
	// PeakRSSMB is the server's peak resident set so far (VmHWM).
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// LoadCPUPercent is the load generator's own CPU use (it shares the machine).
	LoadCPUPercent float64 `json:"load_cpu_percent"`
	// PostgresCPUPercent is the Postgres instance's CPU use (with
	// -postgres-pid): its postmaster and every backend and worker.
	PostgresCPUPercent float64 `json:"postgres_cpu_percent,omitempty"`
}

func (r *Result) add(s *stats) {
	r.latencies = append(r.latencies, s.lat...)
	r.Errors += s.errors
	if r.FirstErr == "" {
		r.FirstErr = s.firstErr
	}
	for k, n := range s.kinds {
		if r.ErrorKinds == nil {
			r.ErrorKinds = map[string]int{}
		}
		r.ErrorKinds[k] += n
	}
}

func (r *Result) finish(elapsed time.Duration) {
	r.Seconds = elapsed.Seconds()
	r.Requests = len(r.latencies) + r.Errors
	r.RPS = float64(len(r.latencies)) / r.Seconds
	if r.HTTPRequests > 0 {
		r.HTTPRPS = float64(r.HTTPRequests) / r.Seconds
	}
	slices.Sort(r.latencies)
	pct := func(q float64) float64 {
		if len(r.latencies) == 0 {
			return 0
		}
		return float64(r.latencies[int(q*float64(len(r.latencies)-1))].Microseconds()) / 1000
	}
	r.P50ms, r.P95ms, r.P99ms = pct(.50), pct(.95), pct(.99)
	for _, sub := range r.ByOp {
		sub.Concurrency = r.Concurrency
		sub.finish(elapsed)
	}
}

// table formats results as a fixed-width table.
type table struct{ b strings.Builder }

const rowFormat = "%-26s %5s %9s %9s %9s %9s %7s %9s %8s %8s %7s %8s %8s\n"

func (t *table) header() {
	fmt.Fprintf(&t.b, rowFormat, "scenario/op", "conc", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors",
		"http/s", "srv cpu%", "gen cpu%", "srv MB", "pg cpu%", "pg µs/rq")
}

func (t *table) row(name string, r *Result, top bool) {
	http, cpu, gen, rss, pg, pgPer := "", "", "", "", "", ""
	if top {
		http = fmt.Sprintf("%.1f", r.HTTPRPS)
		if r.Server != nil {
			cpu = fmt.Sprintf("%.0f", r.Server.CPUPercent)
			gen = fmt.Sprintf("%.0f", r.Server.LoadCPUPercent)
			rss = fmt.Sprintf("%.1f", r.Server.RSSMB)
			if r.Server.PostgresCPUPercent > 0 {
				pg = fmt.Sprintf("%.0f", r.Server.PostgresCPUPercent)
				if r.HTTPRPS > 0 {
					// CPU-microseconds of Postgres per HTTP request.
					pgPer = fmt.Sprintf("%.0f", r.Server.PostgresCPUPercent/100*1e6/r.HTTPRPS)
				}
			}
		}
	}
	fmt.Fprintf(&t.b, rowFormat, name, fmt.Sprint(r.Concurrency), fmt.Sprintf("%.1f", r.RPS),
		fmt.Sprintf("%.2f", r.P50ms), fmt.Sprintf("%.2f", r.P95ms), fmt.Sprintf("%.2f", r.P99ms),
		fmt.Sprint(r.Errors), http, cpu, gen, rss, pg, pgPer)
}

// result adds a scenario's rows: the total, then each operation with its
// endpoints indented under it.
func (t *table) result(r *Result) {
	t.row(r.Scenario, r, true)
	for _, name := range r.Order {
		sub := r.ByOp[name]
		indent := "  "
		if sub.Kind == kindCall {
			indent = "    "
		}
		label := name
		switch {
		case sub.Kind == kindOp && (name == "mines" || name == "pump"):
			label += " (round)"
		case sub.Kind == kindOp && name == "blackjack":
			label += " (hand)"
		case sub.Kind == kindAux:
			label += " (aux)"
		}
		t.row(indent+label, sub, false)
	}
}

// errors adds the error breakdown and a sample message of each erring entry.
func (t *table) errors(r *Result) {
	line := func(name string, e *Result) {
		if e.Errors == 0 {
			return
		}
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(e.ErrorKinds)) {
			kinds = append(kinds, fmt.Sprintf("%s×%d", k, e.ErrorKinds[k]))
		}
		fmt.Fprintf(&t.b, "  ! %s @%d: %d errors (%s), e.g. %s\n", name, e.Concurrency, e.Errors,
			strings.Join(kinds, " "), e.FirstErr)
	}
	hasOps := false
	for _, sub := range r.ByOp {
		hasOps = hasOps || sub.Kind == kindOp
	}
	if !hasOps {
		line(r.Scenario, r)
	}
	for _, name := range r.Order {
		line(r.Scenario+":"+name, r.ByOp[name])
	}
}

func (t *table) String() string { return t.b.String() }
