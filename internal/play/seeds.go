package play

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/fair"
)

// newSeedPair makes a fresh pair for userID with clientSeed (random when empty).
func (s *Service) newSeedPair(userID uuid.UUID, clientSeed string) (SeedPair, error) {
	server, err := fair.NewServerSeed()
	if err != nil {
		return SeedPair{}, err
	}
	if clientSeed == "" {
		if clientSeed, err = fair.NewClientSeed(); err != nil {
			return SeedPair{}, err
		}
	}
	return SeedPair{ID: uuid.Must(uuid.NewV7()), UserID: userID, ServerSeed: server,
		ServerSeedHash: fair.HashServerSeed(server), ClientSeed: clientSeed, CreatedAt: s.now()}, nil
}

// ensurePair returns the user's active pair, creating one on first use.
func (s *Service) ensurePair(ctx context.Context, st Store, userID uuid.UUID, forUpdate bool) (SeedPair, error) {
	p, err := st.ActiveSeedPair(ctx, userID, forUpdate)
	if !errors.Is(err, ErrNoSeedPair) {
		return p, err
	}
	np, err := s.newSeedPair(userID, "")
	if err != nil {
		return SeedPair{}, err
	}
	if err := st.InsertSeedPair(ctx, np); err != nil && !errors.Is(err, ErrSeedPairExists) {
		return SeedPair{}, err
	}
	return st.ActiveSeedPair(ctx, userID, forUpdate)
}

// pairTries bounds how often a request is retried when the player's seed
// pair changed under it: each retry means another change committed.
const pairTries = 5

// retryPair runs fn again while it finds the seed pair gone or just
// replaced — a rotation committed while fn waited for the pair — and
// answers ErrSeedPairChanged (409) if that goes on for pairTries tries.
func retryPair[T any](fn func() (T, error)) (T, error) {
	for try := 1; ; try++ {
		v, err := fn()
		if !errors.Is(err, ErrNoSeedPair) && !errors.Is(err, ErrSeedPairExists) {
			return v, err
		}
		if try == pairTries {
			return v, ErrSeedPairChanged
		}
	}
}

// placeBet places b for the caller, checking the caller's session in the
// bet's transaction, in one round trip with the one definition of a bet
// (Store.PlaceBetAt): the bet is drawn from the next nonce of the player's
// seed pair before Postgres is asked. The pair is the one this server
// remembers (pairCache) or, when it remembers none (the first bet on this
// server), read first — and created on a player's first bet. Postgres
// refuses a bet drawn from a pair that has moved on (a bet through another
// server, a rotation, a new client seed) as stale, with the pair as it is
// now: the bet is drawn again from that, up to pairTries times in all. This
// server places one player's bets one at a time (betTurns), so they never race
// each other for a nonce.
func (s *Service) placeBet(ctx context.Context, p accounts.Principal, b Bet, draw func(SeedPair) (Draw, error)) (SeedPair, Placed, error) {
	nb := NewBet{ID: b.ID, UserID: p.UserID, SessionID: p.SessionID, LiveSince: p.LiveSince, Game: b.Game,
		Stake: b.Amount, At: b.CreatedAt}
	tu, err := s.betTurns.Wait(ctx, p.UserID)
	if err != nil {
		return SeedPair{}, Placed{}, fmt.Errorf("place bet: %w", err)
	}
	defer s.betTurns.Done(p.UserID, tu)
	pair, ok := s.pairs.get(p.UserID)
	for try := 0; try < pairTries; try++ {
		if try > 0 && ctx.Err() != nil {
			// The last draw was refused as stale and nothing drawn waits
			// to be saved: a caller who has gone gets no more draws (the
			// store saves a draw whatever its caller does).
			return SeedPair{}, Placed{}, fmt.Errorf("place bet: %w", context.Cause(ctx))
		}
		if !ok {
			// A rotation between the pair's insert and its read finds none:
			// one more try.
			pair, err = s.ensurePair(ctx, s.store, p.UserID, false)
			if errors.Is(err, ErrNoSeedPair) || errors.Is(err, ErrSeedPairExists) {
				continue
			}
			if err != nil {
				return SeedPair{}, Placed{}, err
			}
		}
		pair.Nonce++
		d, err := draw(pair)
		if err != nil {
			return SeedPair{}, Placed{}, err
		}
		placed, now, err := s.store.PlaceBetAt(ctx, nb, pair, d)
		if err == nil {
			s.pairs.put(pair)
			return pair, placed, nil
		}
		if !errors.Is(err, ErrStalePair) {
			return SeedPair{}, Placed{}, err
		}
		s.pairs.drop(p.UserID)
		pair, ok = now, now.ID != uuid.Nil
	}
	return SeedPair{}, Placed{}, ErrSeedPairChanged
}

// Seeds returns the caller's active pair (creating it on first use).
func (s *Service) Seeds(ctx context.Context, p accounts.Principal) (SeedPair, error) {
	pair, err := retryPair(func() (SeedPair, error) { return s.ensurePair(ctx, s.store, p.UserID, false) })
	if err != nil {
		return SeedPair{}, fmt.Errorf("seeds: %w", err)
	}
	return pair, nil
}

// ValidateClientSeed accepts 1 to 64 printable ASCII characters.
func ValidateClientSeed(seed string) error {
	if len(seed) == 0 || len(seed) > 64 {
		return ErrClientSeedInvalid
	}
	for i := 0; i < len(seed); i++ {
		if seed[i] < 0x20 || seed[i] > 0x7e {
			return ErrClientSeedInvalid
		}
	}
	return nil
}

// SetClientSeed replaces the active pair's client seed. Bets already placed
// keep the client seed they were made with.
func (s *Service) SetClientSeed(ctx context.Context, p accounts.Principal, seed string) (SeedPair, error) {
	if err := ValidateClientSeed(seed); err != nil {
		return SeedPair{}, err
	}
	out, err := retryPair(func() (SeedPair, error) {
		var out SeedPair
		err := s.store.InTx(ctx, func(tx Store) error {
			if _, err := s.ensurePair(ctx, tx, p.UserID, true); err != nil {
				return err
			}
			var err error
			out, err = tx.SetClientSeed(ctx, p.UserID, seed)
			return err
		})
		return out, err
	})
	s.pairs.drop(p.UserID)
	if err != nil {
		return SeedPair{}, fmt.Errorf("set client seed: %w", err)
	}
	return out, nil
}

// Rotation is the result of rotating: the revealed old pair and the new one.
type Rotation struct {
	Old SeedPair
	New SeedPair
}

// Rotate reveals the active server seed and starts a new pair with
// clientSeed (or the old client seed when empty). It is refused while a
// stateful game runs, since the revealed seed would give away its outcome.
func (s *Service) Rotate(ctx context.Context, p accounts.Principal, clientSeed string) (Rotation, error) {
	if clientSeed != "" {
		if err := ValidateClientSeed(clientSeed); err != nil {
			return Rotation{}, err
		}
	}
	r, err := retryPair(func() (Rotation, error) { return s.rotate(ctx, p, clientSeed) })
	s.pairs.drop(p.UserID)
	if err != nil {
		return Rotation{}, fmt.Errorf("rotate seeds: %w", err)
	}
	return r, nil
}

// rotate is one try of Rotate, in one transaction.
func (s *Service) rotate(ctx context.Context, p accounts.Principal, clientSeed string) (Rotation, error) {
	var r Rotation
	err := s.store.InTx(ctx, func(tx Store) error {
		old, err := s.ensurePair(ctx, tx, p.UserID, true)
		if err != nil {
			return err
		}
		active, err := tx.HasActiveGame(ctx, p.UserID)
		if err != nil {
			return err
		}
		if active {
			return ErrRotateActiveGame
		}
		if clientSeed == "" {
			clientSeed = old.ClientSeed
		}
		np, err := s.newSeedPair(p.UserID, clientSeed)
		if err != nil {
			return err
		}
		now := s.now()
		if err := tx.RevealSeedPair(ctx, old.ID, now); err != nil {
			return err
		}
		if err := tx.InsertSeedPair(ctx, np); err != nil {
			return err
		}
		old.RevealedAt = &now
		r = Rotation{Old: old, New: np}
		return nil
	})
	return r, err
}
