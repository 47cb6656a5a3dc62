package proc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a private redis-server without persistence on a port of its own,
// so a test may stop it without touching the shared instance.
type Redis struct {
	Port int
	bin  string
	dir  string
	log  *Log
	proc *Process
}

// NewRedis prepares a redis-server (from PATH) on a free port, working in
// dir. Start runs it.
func NewRedis(dir string) (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("no redis-server on PATH: install redis-server (hack/services.sh start does)")
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return &Redis{Port: port, bin: bin, dir: dir, log: NewLog()}, nil
}

// URL is the Redis URL of database 0.
func (r *Redis) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.Port) }

// Log is the output of every run of the server.
func (r *Redis) Log() *Log { return r.log }

// Start runs redis-server and waits up to timeout for it to answer PING.
func (r *Redis) Start(timeout time.Duration) error {
	if r.proc != nil && !r.proc.Exited() {
		return errors.New("redis is already running")
	}
	cmd := exec.Command(r.bin, "--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", r.dir, "--daemonize", "no")
	p, err := Start("redis", cmd, r.log, 0)
	if err != nil {
		return err
	}
	r.proc = p
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(r.Port), MaxRetries: -1})
	defer func() { _ = client.Close() }()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if p.Exited() {
			return fmt.Errorf("redis exited at start (%w):\n%s", p.Err(), r.log.Tail(3000))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis not answering after %s (%w):\n%s", timeout, err, r.log.Tail(3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill ends redis-server with SIGKILL, as a crash or a lost node would, and
// waits for it to exit.
func (r *Redis) Kill() {
	if r.proc != nil {
		r.proc.Kill()
	}
}
