// Package play places and settles bets. Each bet is one transaction: the
// stake is debited (never below zero), the outcome is drawn from the
// player's provably-fair seed pair with the pair's next nonce, the payout is
// credited and the bet recorded with its fairness data — all or nothing. The
// game rules themselves live in internal/games; this package is the money
// and the bookkeeping around them.
package play

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/live"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/internal/turns"
)

// Game names a game as the API and the database spell it; the names are
// internal/games', so the rules and the bookkeeping never disagree.
type Game = games.Name

// The six games.
const (
	Dice      = games.Dice
	Plinko    = games.Plinko
	Keno      = games.Keno
	Mines     = games.Mines
	Pump      = games.Pump
	Blackjack = games.Blackjack
)

// Games lists every game.
var Games = games.Names

// SeedPair is a provably-fair seed pair. Nonce counts the bets made with it.
type SeedPair struct {
	ID             uuid.UUID
	UserID         uuid.UUID
	ServerSeed     string
	ServerSeedHash string
	ClientSeed     string
	Nonce          int64
	CreatedAt      time.Time
	RevealedAt     *time.Time
}

// Bet is a recorded bet.
type Bet struct {
	ID         uuid.UUID
	UserID     uuid.UUID
	Game       Game
	Status     string // "settled" or "active"
	Amount     money.Amount
	Multiplier money.Multiplier
	Payout     money.Amount
	SeedPairID uuid.UUID
	ClientSeed string
	Nonce      int64
	Params     json.RawMessage
	State      json.RawMessage
	CreatedAt  time.Time
	SettledAt  *time.Time
}

// Bet statuses.
const (
	StatusActive  = "active"
	StatusSettled = "settled"
)

// NewBet is a bet about to be placed (see Store.PlaceBetAt).
type NewBet struct {
	ID     uuid.UUID
	UserID uuid.UUID
	// SessionID, when set, is the caller's session, checked in the bet's own
	// transaction: live when not revoked and used at or after LiveSince.
	SessionID uuid.UUID
	LiveSince time.Time
	Game      Game
	Stake     money.Amount
	At        time.Time
}

// Draw is what a bet's seed pair decided: the bet's status (an instant bet
// settles at once, a stateful game starts active), its multiplier and
// payout, and its params and state as stored.
type Draw struct {
	Status     string
	Multiplier money.Multiplier
	Payout     money.Amount
	Params     json.RawMessage
	State      json.RawMessage
}

// GameAction names a running game to act on (see Store.PlayOn); SessionID
// and LiveSince are as in NewBet, At is the time of the action.
type GameAction struct {
	UserID    uuid.UUID
	SessionID uuid.UUID
	LiveSince time.Time
	BetID     uuid.UUID
	Game      Game
	At        time.Time
	// Counted is set when the request named the moves its caller saw: the
	// store must then decide the action on the game's locked row, never on
	// a copy it keeps (see Store.PlayOn).
	Counted bool
	// Stakes is set for an action that may take an extra stake (a blackjack
	// double, split or insurance): the store decides it on the locked rows
	// of the game and of the player, and gives apply the player's stake
	// headroom (Funds), never on a copy it keeps.
	Stakes bool
}

// Funds is what a player has to stake on a game action, as the store read it
// with the game's row: the balance and, for an action that stakes
// (GameAction.Stakes), what the player's own rules let them stake.
type Funds struct {
	Balance money.Amount
	// Locked is set when the store read these with the player's row
	// locked until the save, for an action that stakes (GameAction.
	// Stakes): only then does an action take an extra stake. Decided on
	// anything less (a replica's copy), it is refused and decided again on
	// the locking path, before anything is drawn.
	Locked bool
	// Capped is set when the player's own rules (a break, a
	// self-exclusion, a loss or wager limit) cap what they may stake now:
	// at most Headroom, nothing when it is negative. Read with the
	// player's row locked until the action is saved, so the save cannot
	// refuse a stake the headroom let through.
	Capped   bool
	Headroom money.Amount
}

// OverLimitsError refuses an extra stake above the player's headroom
// (Funds) before anything is drawn; the store turns it into the rule's own
// refusal for that stake, the one a bet of it would hear.
type OverLimitsError struct{ Stake money.Amount }

func (e *OverLimitsError) Error() string {
	return fmt.Sprintf("a stake of %s is above what the player's limits allow", e.Stake)
}

// Change is what an action does to a running game: the bet as it is to be
// saved, an extra stake to take (a blackjack double) and the payout to
// credit (when the action ends the game).
type Change struct {
	Bet    Bet
	Stake  money.Amount
	Payout money.Amount
}

// Placed is the player's side of a bet or game action that went through:
// the balance after it, and the player's name and whether they hide it from
// the live feed, read from the player's row in the bet's own statement
// (which locks that row anyway), so the feed costs the bet no extra query
// and shows the preference as it was when the bet was placed.
type Placed struct {
	Balance      money.Amount
	Username     string
	HideUsername bool
}

// BetWithSeeds is a bet with its seed pair (whose server seed the caller may
// show only once the pair is revealed). The bet's own Nonce is the one it
// was drawn at; a stored bet's Pair.Nonce is the pair's row, which for the
// active pair lags its bets (the player's row keeps that one).
type BetWithSeeds struct {
	Bet
	Pair SeedPair
}

// Store persists bets, balances and seed pairs.
type Store interface {
	// InTx runs fn with a Store bound to one transaction.
	InTx(ctx context.Context, fn func(Store) error) error
	// PlaceBetAt places a bet already drawn from pair at pair.Nonce in one
	// transaction and one round trip. It refuses a bet whose session (when
	// b.SessionID is set) or player is gone with ErrUserGone, a balance above
	// MaxBalance with ErrBalanceLimit, a stake above the balance with
	// ErrInsufficientBalance, a game of a kind the player already plays with
	// ErrGameInProgress, and a bet whose pair is not the player's active pair
	// with that client seed, or whose pair.Nonce is not its next nonce, with
	// ErrStalePair, returning the active pair as it is now (zero when there
	// is none). Otherwise it takes the nonce, debits the stake, credits the
	// payout (each with its ledger entry) and inserts the bet, and returns
	// the player's side of the bet (Placed). Any refusal or error changes
	// nothing, not even the nonce.
	PlaceBetAt(ctx context.Context, b NewBet, pair SeedPair, d Draw) (Placed, SeedPair, error)
	// ActiveSeedPair returns the user's active pair, or ErrNoSeedPair; with
	// forUpdate (in a transaction) it locks the player, then the pair, so
	// changes of one player's pair run one at a time.
	ActiveSeedPair(ctx context.Context, userID uuid.UUID, forUpdate bool) (SeedPair, error)
	// InsertSeedPair stores a new active pair; ErrSeedPairExists if one is active.
	InsertSeedPair(ctx context.Context, p SeedPair) error
	// SetClientSeed changes the active pair's client seed.
	SetClientSeed(ctx context.Context, userID uuid.UUID, clientSeed string) (SeedPair, error)
	// RevealSeedPair marks the pair revealed.
	RevealSeedPair(ctx context.Context, id uuid.UUID, at time.Time) error
	// HasActiveGame reports whether the user has a running stateful game.
	HasActiveGame(ctx context.Context, userID uuid.UUID) (bool, error)
	// ListBets returns a page of the user's bets (of one game, when game is
	// not empty), newest first (none when limit is 0), and their count, up
	// to MaxHistory (offset + limit is at most that).
	ListBets(ctx context.Context, userID uuid.UUID, game Game, offset, limit int) ([]BetWithSeeds, int, error)
	// GetBet returns one of the user's bets, or ErrBetNotFound.
	GetBet(ctx context.Context, userID, betID uuid.UUID) (BetWithSeeds, error)
	// PlayOn runs one action on a running game in one transaction: it
	// refuses a dead session (when a.SessionID is set) with ErrUserGone,
	// locks the user's bet a.BetID of a.Game with its seed pair
	// (ErrGameNotFound, also for a bet of another user or game), lets apply
	// decide the change, then debits the change's extra stake and credits
	// its payout, each with its ledger entry (ErrInsufficientBalance when the
	// stake is short), and saves the bet's status, amount, multiplier, payout,
	// params, state and settled_at (ErrGameOver if it is no longer active).
	// apply is given the player's balance as the store last read it, so an
	// extra stake above it is refused before anything is drawn (one the
	// balance no longer covers is refused by the save); for an action that
	// stakes (a.Stakes), with the player's row locked and their stake
	// headroom, so nothing refuses its stake after the draw. An apply that
	// returns *OverLimitsError hears the player's rule that refuses that
	// stake (a limits.Refusal). apply may be called
	// more than once — on a copy of the game the store kept, then on the row
	// as it is, when the copy turns out stale — and only the last call's
	// change is saved; it must decide from its arguments alone. A counted
	// action (a.Counted) is decided on the locked row only: apply may refuse
	// it there for what the copy could not know, and a draw on an overtaken
	// copy followed by that refusal would show what it drew in the time.
	// It returns the player's side (Placed: the balance after). Any refusal
	// or error changes nothing.
	PlayOn(ctx context.Context, a GameAction, apply func(b BetWithSeeds, f Funds) (Change, error)) (Placed, error)
	// ActiveGames returns the user's running stateful games.
	ActiveGames(ctx context.Context, userID uuid.UUID) ([]BetWithSeeds, error)
}

// Errors users see.
var (
	ErrInsufficientBalance = problem.Invalid("Insufficient balance")
	ErrBetNotFound         = problem.NotFound("Bet not found")
	ErrBetIDInvalid        = problem.Invalid("Invalid bet id")
	ErrClientSeedInvalid   = problem.Invalid("Client seed must be 1 to 64 printable characters")
	ErrRotateActiveGame    = problem.Conflict("Finish your running game before rotating the seed pair")
	ErrSeedNotRevealed     = problem.Conflict("Rotate your seed pair to reveal the server seed before verifying this bet")
	ErrBetNotSettled       = problem.Conflict("This game is still running")
	ErrPageInvalid         = problem.Invalid("Page must be a whole number of at least 1")
	ErrLimitInvalid        = problem.Invalid("Limit must be between 1 and 100")
	ErrGameInvalid         = problem.Invalid("Game must be one of dice, plinko, keno, mines, pump or blackjack")
	ErrUserGone            = problem.Unauthenticated("Token is not valid")
	// ErrSeedPairChanged answers a request that lost every retry to
	// concurrent changes of the player's seed pair (rotations, say).
	ErrSeedPairChanged = problem.Conflict("Your seed pair changed at the same moment. Please try again.")
)

// Internal sentinels the store returns.
var (
	ErrNoSeedPair     = errors.New("no active seed pair")
	ErrSeedPairExists = errors.New("an active seed pair exists")
	ErrStalePair      = errors.New("the seed pair has moved on")
)

// Limiter is the shared rate limiter (see accounts.Limiter).
type Limiter = accounts.Limiter

// Metrics observes settled bets; nil-safe.
type Metrics interface {
	BetSettled(game string, stake, payout money.Amount)
}

// Limits returns the bet limits in force.
func (s *Service) Limits() Limits { return s.limits }

// Service places bets and manages seed pairs.
type Service struct {
	store   Store
	limiter Limiter
	rate    settings.Rate
	metrics Metrics
	log     *slog.Logger
	now     func() time.Time
	limits  Limits
	pairs   pairCache
	// betTurns lets one bet of a player at a time through this server, so
	// the pair it draws from is the one the previous bet left (not a nonce
	// both would draw from, one to be refused as stale): Postgres would make
	// them wait for the player's row anyway, and a batch holds one bet of a
	// player. actionTurns lets one game action of a player at a time
	// through (act), so the others wait here, not for their game's row on
	// connections of the pool.
	betTurns, actionTurns turns.Lines
	feed                  live.Publisher
}

// Options are the Service's collaborators.
type Options struct {
	Store   Store
	Limiter Limiter
	// BetRate limits bets per player (zero = unlimited).
	BetRate settings.Rate
	Metrics Metrics
	Logger  *slog.Logger
	Now     func() time.Time
	// Limits are the bet limits (zero: DefaultLimits); NewService panics
	// on limits that do not Validate, which the caller checks first.
	Limits Limits
	// Feed, when set, hears of every settled bet once its transaction has
	// committed (the live bets feed); a running game only when it ends.
	Feed live.Publisher
}

// NewService returns a Service.
func NewService(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Limits == (Limits{}) {
		o.Limits = DefaultLimits()
	}
	if err := o.Limits.Validate(); err != nil {
		panic("play: " + err.Error())
	}
	return &Service{store: o.Store, limiter: o.Limiter, rate: o.BetRate, metrics: o.Metrics, log: o.Logger, now: o.Now,
		limits: o.Limits, feed: o.Feed, betTurns: turns.Lines{Slots: 1}, actionTurns: turns.Lines{Slots: 1}}
}

// publish hands a settled bet to the live feed. It is called only after the
// bet's transaction has committed, and only for settled bets, so the feed
// never shows a running game nor anything that could still roll back.
func (s *Service) publish(b Bet, placed Placed) {
	if s.feed == nil || b.Status != StatusSettled {
		return
	}
	at := b.CreatedAt
	if b.SettledAt != nil {
		at = *b.SettledAt
	}
	lb := live.Bet{ID: b.ID, Game: string(b.Game), Hidden: placed.HideUsername, Amount: b.Amount,
		Multiplier: b.Multiplier, Payout: b.Payout, SettledAt: at}
	if !placed.HideUsername {
		lb.Username = placed.Username
	}
	s.feed.Publish(lb)
}

// limitBets applies the per-player bet rate; a limiter outage allows the bet.
func (s *Service) limitBets(ctx context.Context, userID uuid.UUID) error {
	if s.rate.N == 0 || s.limiter == nil {
		return nil
	}
	ok, retry, err := s.limiter.Allow(ctx, "bet:user:"+userID.String(), s.rate)
	if err != nil {
		// The limiter logs the outage once; each bet only at debug level.
		s.log.DebugContext(ctx, "rate limiter unavailable, allowing bet", "err", err)
		return nil
	}
	if !ok {
		return problem.TooManyRequests(accounts.ErrRateLimited, retry)
	}
	return nil
}
