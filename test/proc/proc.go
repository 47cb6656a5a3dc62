// Package proc runs real processes for the multi-process suites
// (test/replicas, test/chaos): it builds the fairplay binary, starts it and
// the services it needs (a private Postgres and Redis) as child processes,
// keeps their output for failure messages, and kills them, by PID, when the
// test ends or (on Linux) the test binary dies.
package proc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildServer builds ./cmd/fairplay of the enclosing module into dir and
// returns the binary's path.
func BuildServer(dir string) (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("find the module root: %w", err)
	}
	root := strings.TrimSpace(string(gomod))
	if root == "" || root == os.DevNull {
		return "", errors.New("find the module root: not inside the fairplay module")
	}
	binary := filepath.Join(dir, "fairplay")
	build := exec.Command("go", "build", "-o", binary, "./cmd/fairplay")
	build.Dir = filepath.Dir(root)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build the server: %w", err)
	}
	return binary, nil
}

// Log keeps a process's output and reports the address a fairplay server
// logs in its "fairplay serving" line.
type Log struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	part  []byte
	addrC chan string
}

// NewLog returns an empty log.
func NewLog() *Log { return &Log{addrC: make(chan string, 1)} }

func (w *Log) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		var line struct{ Msg, Addr string }
		if json.Unmarshal(w.part[:i], &line) == nil && line.Msg == "fairplay serving" && line.Addr != "" {
			select {
			case w.addrC <- line.Addr:
			default:
			}
		}
		w.part = w.part[i+1:]
	}
	return len(p), nil
}

// Addr delivers the address of the first "fairplay serving" line.
func (w *Log) Addr() <-chan string { return w.addrC }

// String returns everything written so far.
func (w *Log) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// Tail returns the last n bytes of the log.
func (w *Log) Tail(n int) string { return Tail(w.String(), n) }

// Tail returns the last n bytes of s, marked as cut when longer.
func Tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Process is a started child process.
type Process struct {
	Name string
	Log  *Log
	cmd  *exec.Cmd
	done chan struct{}
	err  error // cmd.Wait's result, once done is closed
}

// Start starts cmd with its output going to log (a new Log when nil; a
// restarted service keeps appending to its old one). The child gets deathSig
// if the test binary dies first (0: SIGKILL), so no process outlives a test
// run that panicked or timed out.
func Start(name string, cmd *exec.Cmd, log *Log, deathSig syscall.Signal) (*Process, error) {
	if log == nil {
		log = NewLog()
	}
	p := &Process{Name: name, Log: log, cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Log, p.Log
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if deathSig == 0 {
		deathSig = syscall.SIGKILL
	}
	setDeathSignal(cmd.SysProcAttr, deathSig)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the process's exit error (nil for exit status 0); valid once Done.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Signal sends sig to the process unless it has exited.
func (p *Process) Signal(sig syscall.Signal) error {
	if p.Exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s: %w", p.Name, err)
	}
	return nil
}

// ErrStopTimeout reports a process that outlived its stop signal; Stop
// killed it.
var ErrStopTimeout = errors.New("did not exit in time, killed")

// Stop sends sig and waits up to timeout for the process to exit, then
// kills it. It returns the exit error, or ErrStopTimeout.
func (p *Process) Stop(sig syscall.Signal, timeout time.Duration) error {
	if err := p.Signal(sig); err != nil {
		return err
	}
	return p.Wait(timeout)
}

// Wait waits up to timeout for the process to exit, then kills it. It
// returns the exit error, or ErrStopTimeout.
func (p *Process) Wait(timeout time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s: %w", p.Name, ErrStopTimeout)
	}
}

// Kill sends SIGKILL and waits for the process to exit.
func (p *Process) Kill() {
	_ = p.Signal(syscall.SIGKILL)
	<-p.done
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now, for
// a process started later to listen on, and never the same port twice in
// one test binary.
//
// It is chosen below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), from which a port the kernel picks (as
// Listen on port 0 does) would come: every outgoing connection takes its
// local port from that range too, so such a port could be taken by any
// client connection — a migration's to Postgres, say — before the process
// meant for it binds it. CI failed once on exactly that ("bind: address
// already in use" for a server started after its migrations).
func FreePort() (int, error) {
	low := ephemeralLow()
	freePorts.Lock()
	defer freePorts.Unlock()
	for range 1000 {
		port := freePortMin + rand.IntN(low-freePortMin)
		if freePorts.given[port] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // in use
		}
		if err := ln.Close(); err != nil {
			return 0, err
		}
		freePorts.given[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("no free port between %d and %d", freePortMin, low)
}

// freePortMin is the lowest port FreePort hands out (above the well-known
// and most registered services' ports).
const freePortMin = 20000

// freePorts are the ports FreePort has handed out in this process.
var freePorts = struct {
	sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

// ephemeralLow is the lowest port of the kernel's ephemeral range (32768,
// Linux's default, where it cannot be read or leaves too little room).
func ephemeralLow() int {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				low = n
			}
		}
	}
	if low < freePortMin+1000 {
		low = 32768
	}
	return low
}

// RunWithServer is a TestMain body for suites that run the real server:
// it builds it into a temporary directory, sets *binary to its path, runs
// the tests and removes the directory. It returns the exit code.
func RunWithServer(m *testing.M, binary *string) int {
	dir, err := os.MkdirTemp("", "fairplay-server-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if *binary, err = BuildServer(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
