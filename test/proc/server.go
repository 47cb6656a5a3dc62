package proc

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"time"
)

// StartServer runs `binary serve` with exactly env (nothing is inherited).
// log collects its output (nil: a new Log); WaitServing tells where it
// listens.
func StartServer(name, binary string, env []string, log *Log) (*Process, error) {
	cmd := exec.Command(binary, "serve")
	cmd.Env = env
	return Start(name, cmd, log, 0)
}

// WaitServing waits up to timeout for a server started by StartServer to log
// its address, and returns its base URL.
func (p *Process) WaitServing(timeout time.Duration) (string, error) {
	select {
	case addr := <-p.Log.Addr():
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			return "", fmt.Errorf("%s serves on %s, want 127.0.0.1", p.Name, addr)
		}
		return "http://" + addr, nil
	case <-p.done:
		return "", fmt.Errorf("%s exited at start (%w):\n%s", p.Name, p.err, p.Log.Tail(4000))
	case <-time.After(timeout):
		return "", fmt.Errorf("%s did not start in %s:\n%s", p.Name, timeout, p.Log.Tail(4000))
	}
}

// WaitReady polls url's /readyz until it answers 200, for up to timeout.
func WaitReady(url string, timeout time.Duration) error {
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		res, err := client.Get(url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", res.StatusCode)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s/readyz not ready after %s: %w", url, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
