package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/wallet"
)

// ledgerVerify is `fairplay ledger verify`: every balance equals the sum of
// its ledger entries and every bet's entries equal its stake and payout.
// Exits 1 on any drift.
func ledgerVerify(ctx context.Context, stdout io.Writer) error {
	cfg, _, err := loadConfig()
	if err != nil {
		return err
	}
	if err := cfg.Require("DATABASE_URL"); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	r, err := wallet.Verify(ctx, postgres.NewLedgerStore(pool))
	if err != nil {
		return err
	}
	say(stdout, "users: %d  ledger entries: %d  balances: %s\n", r.Totals.Users, r.Totals.Entries, r.Totals.Balances)
	for _, d := range r.Drifts {
		say(stdout, "DRIFT user %s (%s): balance %s, ledger sum %s\n", d.Username, d.UserID, d.Balance, d.LedgerSum)
	}
	for _, m := range r.Mismatches {
		say(stdout, "MISMATCH bet %s (%s, %s): amount %s staked %s, payout %s paid %s\n",
			m.BetID, m.Game, m.Status, m.Amount, m.Staked, m.Payout, m.Paid)
	}
	if !r.Clean() {
		return fmt.Errorf("ledger verify: %d balance drifts, %d bet mismatches", len(r.Drifts), len(r.Mismatches))
	}
	say(stdout, "%s\n", "ledger verify: clean")
	return nil
}

// fairVerify is `fairplay fair verify`: recompute a bet's outcome offline
// from its seeds.
func fairVerify(fs *flag.FlagSet) func(context.Context, io.Writer) error {
	server := fs.String("server-seed", "", "revealed server seed")
	client := fs.String("client-seed", "", "client seed")
	nonce := fs.Uint64("nonce", 0, "the bet's nonce (the first bet of a pair is 1)")
	game := fs.String("game", "", "dice, plinko, keno, mines, pump or blackjack")
	var p games.Params
	fs.StringVar(&p.Target, "target", "", "dice: roll-under target, e.g. 50")
	fs.IntVar(&p.Rows, "rows", 0, "plinko: rows, 8-16")
	fs.StringVar(&p.Risk, "risk", "", "plinko: low/medium/high; keno: classic/low/medium/high")
	picks := fs.String("picks", "", "keno: the marked numbers, comma separated")
	fs.IntVar(&p.Mines, "mines", 0, "mines: number of mines, 1-24")
	reveals := fs.String("reveals", "", "mines, optional: tiles revealed in order (0-24), comma separated")
	fs.StringVar(&p.Difficulty, "difficulty", "", "pump: easy/medium/hard/expert")
	fs.IntVar(&p.Pumps, "pumps", 0, "pump, optional: pumps before cashing out")
	fs.StringVar(&p.Actions, "actions", "", "blackjack, optional: h hit, s stand, d double, p split, i insurance (or even money) taken, n declined, in order")
	fs.IntVar(&p.Rules, "rules", 0, `blackjack: the rule set in the bet's params, 1 (split and insurance) for games showing "rules": 1, 0 for older ones`)
	hash := fs.String("hash", "", "optional: the server seed hash shown before play, to check")
	return func(_ context.Context, stdout io.Writer) error {
		name, err := games.ParseName(*game)
		if err != nil {
			return usageError(err.Error())
		}
		if *server == "" || *client == "" {
			return usageError("fairplay fair verify: --server-seed and --client-seed are required")
		}
		if p.Picks, err = ints(*picks); err != nil {
			return usageError("fairplay fair verify: --picks: " + err.Error())
		}
		if p.Reveals, err = ints(*reveals); err != nil {
			return usageError("fairplay fair verify: --reveals: " + err.Error())
		}
		out, err := games.Replay(name, fair.NewStream(*server, *client, *nonce), p)
		if err != nil {
			return err
		}
		sum := fair.HashServerSeed(*server)
		say(stdout, "server seed sha256: %s\n", sum)
		if *hash != "" {
			if !strings.EqualFold(*hash, sum) {
				return fmt.Errorf("fair verify: the server seed does not match hash %s", *hash)
			}
			say(stdout, "%s\n", "hash matches")
		}
		say(stdout, "%s\n", out.String())
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
}

func ints(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
