package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat times;
// Linux exposes 100 on every architecture Go targets.
const clockTicks = 100

// sample is a point-in-time reading of the server's and our own CPU time.
type sample struct {
	at        time.Time
	serverCPU time.Duration
	selfCPU   time.Duration
	ok        bool
}

// processCPU reads a process's user+system CPU time from /proc/<pid>/stat.
func processCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: count fields after its ')'.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(fields[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad times", pid)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
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
	return s
}

// usageBetween is the server's usage from a to b (nil without a server pid).
func usageBetween(pid int, a, b sample) *Usage {
	if !a.ok || !b.ok {
		return nil
	}
	wall := b.at.Sub(a.at).Seconds()
	rss, peak := memoryMB(pid)
	return &Usage{
		CPUPercent:     100 * (b.serverCPU - a.serverCPU).Seconds() / wall,
		RSSMB:          rss,
		PeakRSSMB:      peak,
		LoadCPUPercent: 100 * (b.selfCPU - a.selfCPU).Seconds() / wall,
	}
}
