package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat times;
// Linux exposes 100 on every architecture Go targets.
const clockTicks = 100

// sample is a point-in-time reading of the server's, Postgres' and our own
// CPU time.
type sample struct {
	at        time.Time
	serverCPU time.Duration
	selfCPU   time.Duration
	ok        bool
	pgCPU     time.Duration
	pgOK      bool
}

// postgresPID is the postmaster's pid (-postgres-pid), 0 when unknown.
var postgresPID int

// statTimes reads fields 14–17 of /proc/<pid>/stat (utime, stime, cutime,
// cstime) and field 4 (the parent's pid).
func statTimes(pid int) (ppid int, times [4]int64, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, times, err
	}
	// The command name (field 2) may hold spaces: count fields after its ')'.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 15 {
		return 0, times, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	if ppid, err = strconv.Atoi(fields[1]); err != nil {
		return 0, times, fmt.Errorf("/proc/%d/stat: bad ppid", pid)
	}
	for i := range times {
		if times[i], err = strconv.ParseInt(fields[11+i], 10, 64); err != nil {
			return 0, times, fmt.Errorf("/proc/%d/stat: bad times", pid)
		}
	}
	return ppid, times, nil
}

// postgresCPU is the CPU time of a Postgres instance: its postmaster's own
// and that of its children, live (their user+system time) and exited (the
// postmaster's cutime+cstime, where an exited backend's time goes).
func postgresCPU(postmaster int) (time.Duration, error) {
	_, t, err := statTimes(postmaster)
	if err != nil {
		return 0, err
	}
	ticks := t[0] + t[1] + t[2] + t[3]
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ct, err := statTimes(pid); err == nil && ppid == postmaster {
			ticks += ct[0] + ct[1]
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// processCPU reads a process's user+system CPU time from /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	_, t, err := statTimes(pid)
	if err != nil {
		return 0, err
	}
	return time.Duration(t[0]+t[1]) * time.Second / clockTicks, nil
}

// memoryMB reads VmRSS and VmHWM (the peak) from /proc/<pid>/status.
func memoryMB(pid int) (rss, peak float64) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if k == "VmRSS" {
			rss = kb / 1024
		} else {
			peak = kb / 1024
		}
	}
	return rss, peak
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func takeSample(pid int) sample {
	s := sample{at: time.Now(), selfCPU: selfCPU()}
	if pid > 0 {
		cpu, err := processCPU(pid)
		s.serverCPU, s.ok = cpu, err == nil
	}
	if postgresPID > 0 {
		cpu, err := postgresCPU(postgresPID)
		s.pgCPU, s.pgOK = cpu, err == nil
	}
	return s
}

// usageBetween is the server's usage from a to b (nil without a server pid).
func usageBetween(pid int, a, b sample) *Usage {
	if !a.ok || !b.ok {
		return nil
	}
	wall := b.at.Sub(a.at).Seconds()
	rss, peak := memoryMB(pid)
	u := &Usage{
		CPUPercent:     100 * (b.serverCPU - a.serverCPU).Seconds() / wall,
		RSSMB:          rss,
		PeakRSSMB:      peak,
		LoadCPUPercent: 100 * (b.selfCPU - a.selfCPU).Seconds() / wall,
	}
	if a.pgOK && b.pgOK {
		u.PostgresCPUPercent = 100 * (b.pgCPU - a.pgCPU).Seconds() / wall
	}
	return u
}

// serverMetricsURL is the server's Prometheus endpoint (-server-metrics), from
// which the Go runtime's allocation counters are read; empty: not read.
var serverMetricsURL string

// counts is what the server has done so far, counted rather than timed, so
// two runs of the same build give about the same figures on a busy machine:
// the objects and bytes its Go runtime allocated, its read- and write-class
// system calls, and the context switches of its threads.
type counts struct {
	objects, bytes float64
	allocOK        bool
	reads, writes  int64
	switches       int64
	syscallsOK     bool
	// batches and batched are fairplay_bet_batches_total and
	// fairplay_bet_batched_bets_total: how many bets a batch held;
	// actionBatches and actionBatched the same of game actions
	// (fairplay_action_batches_total, fairplay_action_batched_actions_total).
	batches, batched             float64
	actionBatches, actionBatched float64
	// batchSeconds and actionBatchSeconds are fairplay_bet_batch_seconds_total
	// and fairplay_action_batch_seconds_total: how long the statements took,
	// summed; at is when they were read.
	batchSeconds, actionBatchSeconds float64
	at                               time.Time
}

// readCounts reads the server's counts: /proc/<pid>/io (syscr, syscw), its
// threads' voluntary and involuntary context switches, and
// go_memstats_mallocs_total and go_memstats_alloc_bytes_total from its
// metrics (exact: the runtime's own totals).
func readCounts(pid int) counts {
	var c counts
	if raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid)); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			k, v, _ := strings.Cut(line, ": ")
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			switch k {
			case "syscr":
				c.reads, c.syscallsOK = n, true
			case "syscw":
				c.writes = n
			}
		}
	}
	if tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid)); err == nil {
		for _, t := range tasks {
			raw, err := os.ReadFile(t)
			if err != nil {
				continue // a thread that just ended
			}
			for _, line := range strings.Split(string(raw), "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
					n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					c.switches += n
				}
			}
		}
	}
	if serverMetricsURL != "" {
		c.allocOK = allocations(serverMetricsURL, &c)
	}
	c.at = time.Now()
	return c
}

// allocations reads the Go runtime's allocation totals, and the bet and
// game action batches' counters, from a Prometheus text exposition into c,
// and reports whether the allocation totals were there.
func allocations(url string, c *counts) bool {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var gotObjects, gotBytes bool
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		switch name {
		case "go_memstats_mallocs_total":
			c.objects, err = strconv.ParseFloat(v, 64)
			gotObjects = err == nil
		case "go_memstats_alloc_bytes_total":
			c.bytes, err = strconv.ParseFloat(v, 64)
			gotBytes = err == nil
		case "fairplay_bet_batches_total":
			c.batches, _ = strconv.ParseFloat(v, 64)
		case "fairplay_bet_batched_bets_total":
			c.batched, _ = strconv.ParseFloat(v, 64)
		case "fairplay_action_batches_total":
			c.actionBatches, _ = strconv.ParseFloat(v, 64)
		case "fairplay_action_batched_actions_total":
			c.actionBatched, _ = strconv.ParseFloat(v, 64)
		case "fairplay_bet_batch_seconds_total":
			c.batchSeconds, _ = strconv.ParseFloat(v, 64)
		case "fairplay_action_batch_seconds_total":
			c.actionBatchSeconds, _ = strconv.ParseFloat(v, 64)
		}
	}
	return resp.StatusCode == http.StatusOK && gotObjects && gotBytes && sc.Err() == nil
}

// workPer is the server's work between two counts per operation (nil when
// neither could be read).
func workPer(a, b counts, ops int) *Work {
	if ops <= 0 || (!a.syscallsOK || !b.syscallsOK) && (!a.allocOK || !b.allocOK) {
		return nil
	}
	n := float64(ops)
	w := &Work{}
	if a.syscallsOK && b.syscallsOK {
		w.Reads = float64(b.reads-a.reads) / n
		w.Writes = float64(b.writes-a.writes) / n
		w.Switches = float64(b.switches-a.switches) / n
	}
	if a.allocOK && b.allocOK {
		w.Objects = (b.objects - a.objects) / n
		w.Bytes = (b.bytes - a.bytes) / n
		span := b.at.Sub(a.at).Seconds()
		if b.batches > a.batches {
			w.BetsPerBatch = (b.batched - a.batched) / (b.batches - a.batches)
			w.BetStatementMs = (b.batchSeconds - a.batchSeconds) / (b.batches - a.batches) * 1000
			if span > 0 {
				w.BetStatementsRunning = (b.batchSeconds - a.batchSeconds) / span
			}
		}
		if b.actionBatches > a.actionBatches {
			w.ActionsPerBatch = (b.actionBatched - a.actionBatched) / (b.actionBatches - a.actionBatches)
			w.ActionStatementMs = (b.actionBatchSeconds - a.actionBatchSeconds) / (b.actionBatches - a.actionBatches) * 1000
			if span > 0 {
				w.ActionStatementsRunning = (b.actionBatchSeconds - a.actionBatchSeconds) / span
			}
		}
	}
	return w
}

// String is the work as the report prints it.
func (w *Work) String() string {
	var parts []string
	if w.Objects > 0 {
		parts = append(parts, fmt.Sprintf("%.0f objects (%.1f kB) allocated", w.Objects, w.Bytes/1000))
	}
	if w.Reads > 0 || w.Writes > 0 {
		parts = append(parts, fmt.Sprintf("%.2f reads and %.2f writes (system calls), %.2f context switches",
			w.Reads, w.Writes, w.Switches))
	}
	if w.BetsPerBatch > 0 {
		parts = append(parts, fmt.Sprintf("%.1f bets per batch statement", w.BetsPerBatch)+statements(w.BetStatementMs, w.BetStatementsRunning))
	}
	if w.ActionsPerBatch > 0 {
		parts = append(parts, fmt.Sprintf("%.1f game actions per batch statement", w.ActionsPerBatch)+
			statements(w.ActionStatementMs, w.ActionStatementsRunning))
	}
	return strings.Join(parts, "; ")
}

// statements is what the report adds to a mean batch size: how long a batch
// statement took and how many ran at once, on average (empty when the
// server did not count their time: an older release).
func statements(ms, running float64) string {
	if ms <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.2f ms each, %.2f running at once on average)", ms, running)
}
