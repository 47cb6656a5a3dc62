package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is a private Postgres server: its own data directory, socket
// directory and port, so a test may stop and crash it without touching the
// shared instance other packages use. As root it runs as the postgres system
// user (Postgres refuses root), like hack/services.sh.
type Postgres struct {
	Port int
	bin  string
	data string
	sock string
	cred *syscall.Credential
	log  *Log
	proc *Process
}

// PostgresBinDir finds the Postgres binaries the way hack/services.sh does:
// pg_config --bindir, then /usr/lib/postgresql/*/bin, then PATH.
func PostgresBinDir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); isExecutable(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- { // the newest version first
		if isExecutable(filepath.Join(dirs[i], "initdb")) {
			return dirs[i], nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no Postgres binaries (initdb, postgres): install postgresql " +
		"(hack/services.sh start does) or put its bin directory on PATH")
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&0o111 != 0
}

// NewPostgres initialises a cluster under dir (which the postgres user must
// be able to traverse when running as root) on a free port. Start runs it.
func NewPostgres(dir string) (*Postgres, error) {
	bin, err := PostgresBinDir()
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	pg := &Postgres{Port: port, bin: bin, data: filepath.Join(dir, "postgres"), sock: filepath.Join(dir, "pgrun"), log: NewLog()}
	for _, d := range []string{pg.data, pg.sock} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, Postgres must run as the postgres user: %w", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		pg.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		for _, d := range []string{pg.data, pg.sock} {
			if err := os.Chown(d, int(uid), int(gid)); err != nil {
				return nil, err
			}
		}
	}
	initdb := pg.command("initdb", "-D", pg.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return pg, nil
}

func (pg *Postgres) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(pg.bin, name), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C.UTF-8"}
	if pg.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	}
	return cmd
}

// URL is the connection string of database db.
func (pg *Postgres) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", pg.Port, db)
}

// Log is the output of every run of the server.
func (pg *Postgres) Log() *Log { return pg.log }

// Start runs the postmaster and waits up to timeout for it to accept
// connections. A crashed cluster recovers from its WAL here.
func (pg *Postgres) Start(timeout time.Duration) error {
	if pg.proc != nil && !pg.proc.Exited() {
		return errors.New("postgres is already running")
	}
	cmd := pg.command("postgres", "-D", pg.data, "-p", strconv.Itoa(pg.Port), "-k", pg.sock,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=100")
	p, err := Start("postgres", cmd, pg.log, syscall.SIGQUIT) // SIGQUIT: immediate shutdown, backends too
	if err != nil {
		return err
	}
	pg.proc = p
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, pg.URL("postgres"))
		if err == nil {
			_ = conn.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		if p.Exited() {
			return fmt.Errorf("postgres exited at start (%w):\n%s", p.Err(), pg.log.Tail(3000))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not accepting connections after %s (%w):\n%s", timeout, err, pg.log.Tail(3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Shutdown modes of Stop, as pg_ctl -m names them.
const (
	Smart     = syscall.SIGTERM // wait for clients to disconnect
	Fast      = syscall.SIGINT  // end sessions, checkpoint, exit
	Immediate = syscall.SIGQUIT // end everything at once: a crash, recovered from the WAL at the next start
)

// Stop shuts the server down in mode (Fast, Immediate or Smart) and waits
// for it, killing it after 60 s.
func (pg *Postgres) Stop(mode syscall.Signal) error {
	if pg.proc == nil || pg.proc.Exited() {
		return nil
	}
	err := pg.proc.Stop(mode, time.Minute)
	var exit *exec.ExitError
	if errors.As(err, &exit) && mode == Immediate {
		return nil // the postmaster reports an immediate shutdown as a failure
	}
	return err
}

// CreateDatabase creates database name.
func (pg *Postgres) CreateDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, pg.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}
