package play

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
)

// Page is one page of bets.
type Page struct {
	Bets       []BetWithSeeds
	Page       int
	TotalPages int
}

// MaxHistory is how far back a player's history reaches: their newest
// 10,000 bets (of one game, when it is filtered), 100 pages of 100. Its count
// and the rows a page skips were once all of them: at 50 bets a second a
// player has millions by the next day, and each request for a far page
// counted them all and walked every skipped row with its seed pair, seconds
// of a connection of the pool, as often as the player asked (found by a
// review playing a hostile player; test/security's
// TestHistoryReachesBackMaxHistoryBets). An older bet is still found and
// verified by its id.
const MaxHistory = 10_000

// History returns page (from 1; nil means 1) of the caller's bets, newest
// first, within their newest MaxHistory (TotalPages counts those only; a
// page past them is empty); limit is 1 to 100 (nil means 20); game, when
// not empty, keeps one game's bets (ErrGameInvalid for a name that is not a
// game).
func (s *Service) History(ctx context.Context, p accounts.Principal, pageArg, limitArg *int, game string) (Page, error) {
	page, limit := 1, 20
	if pageArg != nil {
		page = *pageArg
	}
	if limitArg != nil {
		limit = *limitArg
	}
	if page < 1 {
		return Page{}, ErrPageInvalid
	}
	if limit < 1 || limit > 100 {
		return Page{}, ErrLimitInvalid
	}
	if game != "" && !slices.Contains(Games, Game(game)) {
		return Page{}, ErrGameInvalid
	}
	offset := MaxHistory // past the history's reach: the count alone
	if page <= MaxHistory {
		offset = min((page-1)*limit, MaxHistory)
	}
	bets, total, err := s.store.ListBets(ctx, p.UserID, Game(game), offset, min(limit, MaxHistory-offset))
	if err != nil {
		return Page{}, fmt.Errorf("bet history: %w", err)
	}
	return Page{Bets: bets, Page: page, TotalPages: max(1, (total+limit-1)/limit)}, nil
}

// Bet returns one of the caller's bets.
func (s *Service) Bet(ctx context.Context, p accounts.Principal, betID string) (BetWithSeeds, error) {
	id, err := uuid.Parse(betID)
	if err != nil {
		return BetWithSeeds{}, ErrBetIDInvalid
	}
	return s.store.GetBet(ctx, p.UserID, id)
}

// Verification is a bet recomputed from its revealed seeds.
type Verification struct {
	Bet        BetWithSeeds
	Recomputed json.RawMessage
	HashOK     bool
	Matches    bool
}

// Verify recomputes one of the caller's settled bets from its revealed seed
// pair. It refuses while the pair's server seed is still secret.
func (s *Service) Verify(ctx context.Context, p accounts.Principal, betID string) (Verification, error) {
	b, err := s.Bet(ctx, p, betID)
	if err != nil {
		return Verification{}, err
	}
	if b.Status != StatusSettled {
		return Verification{}, ErrBetNotSettled
	}
	if b.Pair.RevealedAt == nil {
		return Verification{}, ErrSeedNotRevealed
	}
	var params games.Params
	if err := json.Unmarshal(b.Params, &params); err != nil {
		return Verification{}, fmt.Errorf("verify bet: params: %w", err)
	}
	replayed, err := games.Replay(b.Game, fair.NewStream(b.Pair.ServerSeed, b.ClientSeed, uint64(b.Nonce)), params)
	if err != nil {
		return Verification{}, fmt.Errorf("verify bet: %w", err)
	}
	out, err := json.Marshal(recordedOutcome(replayed))
	if err != nil {
		return Verification{}, err
	}
	hashOK := fair.HashServerSeed(b.Pair.ServerSeed) == b.Pair.ServerSeedHash
	return Verification{Bet: b, Recomputed: out, HashOK: hashOK, Matches: hashOK && sameJSON(out, b.State)}, nil
}

// sameJSON compares two JSON documents by value (the database normalises
// key order and spacing of what it stores).
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
