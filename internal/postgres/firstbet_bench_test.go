package postgres_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

// benchPlayers makes n players with a seed pair each and a balance no
// benchmark drains.
func benchPlayers(b *testing.B, store *postgres.PlayStore, n int) (*pgxpool.Pool, []accounts.Principal) {
	b.Helper()
	ctx := context.Background()
	pool := pgtest.New(b)
	*store = *postgres.NewPlayStore(pool)
	svc := play.NewService(play.Options{Store: store})
	ps := make([]accounts.Principal, n)
	for i := range ps {
		ps[i] = accounts.Principal{UserID: uuid.New(), Username: fmt.Sprintf("bench%03d", i)}
		if _, err := pool.Exec(ctx, `INSERT INTO users (id, username, email, password_hash, balance) VALUES ($1, $2, $3, 'x', 1e17)`,
			ps[i].UserID, ps[i].Username, ps[i].Username+"@example.com"); err != nil {
			b.Fatal(err)
		}
		if _, err := svc.Seeds(ctx, ps[i]); err != nil {
			b.Fatal(err)
		}
	}
	return pool, ps
}

// benchDice places dice bets of 16 players at once, each player one bet at
// a time; fresh gives every bet a server of its own (an empty pairCache: the
// player's first bet on that replica), otherwise all share one.
func benchDice(b *testing.B, fresh bool) { benchDiceLimited(b, fresh, false) }

// benchDiceLimited is benchDice; limited gives every player all six loss and
// wager limits (far above what a benchmark reaches, so none refuses), so the
// bet's statement checks each against the player's counters.
func benchDiceLimited(b *testing.B, fresh, limited bool) {
	var store postgres.PlayStore
	pool, ps := benchPlayers(b, &store, 16)
	if limited {
		if _, err := pool.Exec(context.Background(), `UPDATE users SET
			loss_limit_day = 1e17, loss_limit_week = 2e17, loss_limit_month = 3e17,
			wager_limit_day = 1e17, wager_limit_week = 2e17, wager_limit_month = 3e17`); err != nil {
			b.Fatal(err)
		}
	}
	shared := play.NewService(play.Options{Store: &store})
	var next atomic.Int64
	b.SetParallelism(8) // 16 goroutines on 2 cores
	postmaster := postmasterPID(b, pool)
	pg0, self0 := postgresCPU(b, postmaster), selfCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		p := ps[int(next.Add(1)-1)%len(ps)]
		for pb.Next() {
			svc := shared
			if fresh {
				svc = play.NewService(play.Options{Store: &store})
			}
			if _, err := svc.PlayDice(context.Background(), p, "1", "50"); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	// CPU per bet, which the machine's other load does not stretch as it
	// stretches ns/op.
	b.ReportMetric(float64((postgresCPU(b, postmaster)-pg0).Microseconds())/float64(b.N), "pg-cpu-µs/bet")
	b.ReportMetric(float64((selfCPU()-self0).Microseconds())/float64(b.N), "go-cpu-µs/bet")
}

// postmasterPID is the pid of the Postgres serving pool, which must run on
// this machine.
func postmasterPID(b *testing.B, pool *pgxpool.Pool) int {
	b.Helper()
	var dir string
	if err := pool.QueryRow(context.Background(), `SHOW data_directory`).Scan(&dir); err != nil {
		b.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		b.Skipf("Postgres' CPU needs a local Postgres: %v", err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(raw), "\n", 2)[0])
	if err != nil {
		b.Fatal(err)
	}
	return pid
}

// postgresCPU is the CPU time of the Postgres whose postmaster is pid: its
// own, its exited children's (cutime, cstime) and its live children's.
func postgresCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	ticks := func(pid int) (ppid int, t [4]int64) {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, t
		}
		s := string(raw)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 15 {
			return 0, t
		}
		ppid, _ = strconv.Atoi(f[1])
		for i := range t {
			t[i], _ = strconv.ParseInt(f[11+i], 10, 64)
		}
		return ppid, t
	}
	_, t := ticks(pid)
	total := t[0] + t[1] + t[2] + t[3]
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if c, err := strconv.Atoi(e.Name()); err == nil {
			if ppid, ct := ticks(c); ppid == pid {
				total += ct[0] + ct[1]
			}
		}
	}
	return time.Duration(total) * time.Second / 100 // USER_HZ
}

// selfCPU is this process's user and system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFirstBetOnAReplica measures the bet of a replica that does not
// remember the player's seed pair (its first bet there, or after a stale
// pair twice), against BenchmarkBetWithARememberedPair. The same file runs
// on a tree before migration 00013 to compare with the two-round-trip
// Store.PlaceBet that path used to take (README, "Measuring").
func BenchmarkFirstBetOnAReplica(b *testing.B) { benchDice(b, true) }

// BenchmarkBetWithARememberedPair measures the common bet: drawn from the
// pair this replica remembers, placed in one round trip (in a batch).
func BenchmarkBetWithARememberedPair(b *testing.B) { benchDice(b, false) }

// BenchmarkBetWithSixLimits is BenchmarkBetWithARememberedPair with every
// player's loss and wager limits set for the day, week and month: what the
// responsible-gambling rules cost a bet (issue 19), beside it.
func BenchmarkBetWithSixLimits(b *testing.B) { benchDiceLimited(b, false, true) }
