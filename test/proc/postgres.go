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
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if pg.cred != nil {
		cmd.SysProcAttr.Credential = pg.cred
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
	// Its own process group, so that Crash can end the postmaster and every
	// backend at the same instant, as a machine going away would.
	cmd.SysProcAttr.Setpgid = true
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

// NewStandby prepares a streaming standby of primary under dir (which the
// postgres user must be able to traverse when running as root) on a free
// port: a copy of the primary taken with pg_basebackup -R, connecting to it
// as application_name name (what synchronous_standby_names names). Start runs
// it.
func NewStandby(dir string, primary *Postgres, name string) (*Postgres, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	pg := &Postgres{Port: port, bin: primary.bin, data: filepath.Join(dir, "postgres"), sock: filepath.Join(dir, "pgrun"),
		cred: primary.cred, log: NewLog()}
	if err := pg.CloneFrom(primary, name); err != nil {
		return nil, err
	}
	return pg, nil
}

// CloneFrom replaces the stopped server's data directory with a fresh copy
// of primary (pg_basebackup -X stream -R), so that it starts as primary's
// standby, connecting as application_name name: how a failed primary is
// rebuilt as the new primary's standby.
func (pg *Postgres) CloneFrom(primary *Postgres, name string) error {
	if pg.proc != nil && !pg.proc.Exited() {
		return errors.New("clone into a running server")
	}
	if err := os.RemoveAll(pg.data); err != nil {
		return err
	}
	for _, d := range []string{pg.data, pg.sock} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		if pg.cred != nil {
			if err := os.Chown(d, int(pg.cred.Uid), int(pg.cred.Gid)); err != nil {
				return err
			}
		}
	}
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=%s", primary.Port, name)
	backup := pg.command("pg_basebackup", "-D", pg.data, "-X", "stream", "-R", "-c", "fast", "--no-sync", "-d", conninfo)
	if out, err := backup.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_basebackup from port %d: %w\n%s", primary.Port, err, out)
	}
	return nil
}

// Crash ends the postmaster and all its backends at once with SIGKILL (the
// process group Start made), as the loss of the database's machine would:
// nothing is shut down, flushed or sent to a standby after this.
func (pg *Postgres) Crash() {
	if pg.proc == nil || pg.proc.Exited() {
		return
	}
	_ = syscall.Kill(-pg.proc.Pid(), syscall.SIGKILL)
	<-pg.proc.Done()
}

// Promote turns the standby into a primary (pg_ctl promote, waiting until
// it takes writes).
func (pg *Postgres) Promote() error {
	out, err := pg.command("pg_ctl", "promote", "-w", "-t", "60", "-D", pg.data).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl promote: %w\n%s", err, out)
	}
	return nil
}

// Exec runs sql (without arguments: ALTER SYSTEM takes none) in database
// postgres.
func (pg *Postgres) Exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, pg.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// SetSynchronousStandbys sets synchronous_standby_names (ALTER SYSTEM, so a
// restart keeps it; it works on a standby too, taking effect when promoted)
// and reloads the configuration. "" makes commits asynchronous.
func (pg *Postgres) SetSynchronousStandbys(ctx context.Context, names string) error {
	if err := pg.Exec(ctx, "ALTER SYSTEM SET synchronous_standby_names = "+quoteLiteral(names)); err != nil {
		return fmt.Errorf("set synchronous_standby_names: %w", err)
	}
	if err := pg.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	return nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// WaitStreaming waits up to timeout until the primary reports a standby
// named name streaming to it, in sync_state want ("sync" or "async").
func (pg *Postgres) WaitStreaming(name, want string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var state string
		err := func() error {
			conn, err := pgx.Connect(ctx, pg.URL("postgres"))
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			return conn.QueryRow(ctx, `SELECT sync_state FROM pg_stat_replication
				WHERE application_name = $1 AND state = 'streaming'`, name).Scan(&state)
		}()
		cancel()
		if err == nil && state == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no standby %s streaming in state %s after %s (state %q, %w)", name, want, timeout, state, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// InRecovery reports whether the server is a standby.
func (pg *Postgres) InRecovery(ctx context.Context) (bool, error) {
	conn, err := pgx.Connect(ctx, pg.URL("postgres"))
	if err != nil {
		return false, err
	}
	defer conn.Close(ctx)
	var in bool
	err = conn.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&in)
	return in, err
}
