package play

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
)

// Stateful games (Mines, Pump, Blackjack) live in their bet row. Starting one
// is a transaction like an instant bet — debit, nonce, hidden layout drawn
// from the seed pair — except that the bet is inserted as 'active' with the
// game's state in bets.state. Every later action is one transaction that
// locks that row (SELECT ... FOR UPDATE by id and owner), checks it is still
// active, applies the rules and writes the row back; the action that ends the
// game settles it in the same transaction: credit, status 'settled', and the
// state replaced by the outcome games.Replay recomputes from the seeds and the
// recorded params (mines + reveals, difficulty + pumps, blackjack actions), so
// the bet verifies like an instant one. A second racing action waits for the
// lock, then finds the game settled and gets ErrGameOver: one settlement, one
// payout. The row is the game: a replica may keep a copy of the games it
// plays to decide an action before its one round trip (internal/postgres,
// actions.go), but saves it only if the row is still that copy, so any
// replica can serve any action and a restart loses nothing.

// Errors of the stateful games that users see.
var (
	ErrGameInProgress = problem.Conflict("You already have a game in progress")
	ErrGameOver       = problem.Conflict("This game is already over")
	ErrGameNotFound   = problem.NotFound("Game not found")
	ErrGameIDInvalid  = problem.Invalid("Invalid game id")
	// ErrGameMovedOn refuses an action whose caller saw the game make
	// another number of moves than it has (a retry of an action that went
	// through, a second tab): decided from what the player sees.
	ErrGameMovedOn = problem.Conflict("This game has moved on. Reload it to continue.")
)

// Round is a stateful game as its last action left it.
type Round[G any] struct {
	// Bet is the game's bet row; Bet.Status tells whether it has settled,
	// Bet.Amount is the total stake and Bet.Payout what was credited.
	Bet Bet
	// Pair is the seed pair the game draws from; its server seed is secret
	// until the player rotates.
	Pair SeedPair
	// Params are the game's inputs and the player's actions so far.
	Params games.Params
	// Game is the rules' state. It holds the hidden layout: never send it.
	Game *G
	// Balance is the player's balance after the action (while an action
	// runs: before it).
	Balance money.Amount
	// funds is what the player had to stake before the action (its
	// balance is Balance's then): an action taking a stake checks it
	// before it draws.
	funds Funds
	// stake is the extra stake the action takes (a blackjack double, split
	// or insurance).
	stake money.Amount
	// maxPayout caps what the game pays (Limits.MaxPayout).
	maxPayout money.Amount
}

// Over reports whether the game has ended (and settled).
func (r *Round[G]) Over() bool { return r.Bet.Status == StatusSettled }

// kind describes one stateful game to the shared machinery.
type kind[G any] struct {
	game Game
	// over reports that the rules ended the game.
	over func(*G) bool
	// payout is the total return on the total stake of an ended game.
	payout func(*G) money.Multiplier
	// moves is how many moves a game has made, from its params: what the
	// player sees and an action's seen counts.
	moves func(games.Params) int
	// returns, when set, gives the total stake in base stakes and the exact
	// total return per base stake (blackjack, whose split and insurance
	// stakes make the return on the total stake inexact): the payout is then
	// base stake × return, and payout only fills the bet's multiplier.
	returns func(*G) (stakes, ret money.Multiplier)
	// hiddenEnd is set for a game whose deal, or an action refused only
	// after it has drawn (an extra stake the balance or the player's limits
	// refuse, a session revoked meanwhile), may end it on what the player
	// cannot see (a blackjack natural, the dealer's peek): record then does
	// the same work whether it ended or not (evenWork).
	hiddenEnd bool
	// stateSize is at least the longest encoded state of a running game of
	// the kind: its state is encoded into a buffer of that capacity
	// (encodeState).
	stateSize int
}

// parseGameID reads a game id (a bet id).
func parseGameID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, ErrGameIDInvalid
	}
	return id, nil
}

// startGame debits stake, takes the nonce, deals the game from the seed pair
// and records it as the player's running game of its kind, all in one
// transaction; a game the deal already ends (a blackjack natural) settles at
// once. A player with a running game of the kind gets ErrGameInProgress and
// is not debited.
func startGame[G any](ctx context.Context, s *Service, p accounts.Principal, k kind[G], stake money.Amount,
	params games.Params, deal func(event.Source) (*G, error)) (*Round[G], error) {
	if err := s.limitBets(ctx, p.UserID); err != nil {
		return nil, err
	}
	now := s.now()
	bet := Bet{ID: uuid.Must(uuid.NewV7()), UserID: p.UserID, Game: k.game, Status: StatusActive, Amount: stake, CreatedAt: now}
	var r *Round[G]
	pair, placed, err := s.placeBet(ctx, p, bet, func(pair SeedPair) (Draw, error) {
		// Drawn afresh on every call: a draw from a stale pair is thrown away.
		var err error
		if r, err = open(k, s.limits, bet, params, pair, now, deal); err != nil {
			return Draw{}, err
		}
		return Draw{Status: r.Bet.Status, Multiplier: r.Bet.Multiplier, Payout: r.Bet.Payout, Params: r.Bet.Params,
			State: r.Bet.State}, nil
	})
	if errors.Is(err, ErrInsufficientBalance) {
		// A running game of the kind is the first thing to tell the player.
		if running, aerr := s.store.ActiveGames(ctx, p.UserID); aerr == nil &&
			slices.ContainsFunc(running, func(b BetWithSeeds) bool { return b.Game == k.game }) {
			err = ErrGameInProgress
		}
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", k.game, err)
	}
	r.Pair, r.Balance = pair, placed.Balance
	observe(s, r, placed)
	return r, nil
}

// act runs one player action on the caller's game gameID of kind k in one
// transaction (Store.PlayOn): it locks the game's row, refuses a game that
// is over (or, when seen is set, one that has made another number of moves
// than seen), lets action change the state (and set an extra stake in
// r.stake, for a double), saves it and, when the game has ended, settles it.
//
// stakes tells that the action may take an extra stake: the store then
// decides it on the locked rows with the player's stake headroom.
func act[G any](ctx context.Context, s *Service, p accounts.Principal, k kind[G], gameID string, seen *int,
	stakes bool, action func(r *Round[G]) error) (*Round[G], error) {
	id, err := parseGameID(gameID)
	if err != nil {
		return nil, err
	}
	// One action of a player at a time (actionTurns): the others wait here,
	// without a connection. An action that names the moves its player saw,
	// or that stakes, locks its game's row in a transaction on a connection
	// of the pool: when each of a player's actions at once waited for the
	// row there, a few dozen took the whole pool and every other player
	// waited behind them (found by a review playing a hostile player;
	// test/security's TestOnePlayersActionsCannotTakeThePool). A batch of
	// actions holds one of a player's anyway.
	tu, err := s.actionTurns.Wait(ctx, p.UserID)
	if err != nil {
		return nil, fmt.Errorf("%s game: %w", k.game, err)
	}
	defer s.actionTurns.Done(p.UserID, tu)
	now := s.now()
	a := GameAction{UserID: p.UserID, SessionID: p.SessionID, LiveSince: p.LiveSince, BetID: id, Game: k.game, At: now,
		Counted: seen != nil, Stakes: stakes}
	var r *Round[G]
	placed, err := s.store.PlayOn(ctx, a, func(b BetWithSeeds, f Funds) (c Change, err error) {
		r, c, err = step(k, s.limits, b, f, now, seen, action)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s game: %w", k.game, err)
	}
	r.Balance = placed.Balance
	observe(s, r, placed)
	return r, nil
}

// open deals a game from pair, the nonce already taken, and records it in
// bet: what a game's start saves, the rules' state, or the settlement of a
// game the deal ends. It reads nothing but its arguments, so the tests of
// the rules run it as the server does (stateful_test.go).
func open[G any](k kind[G], l Limits, bet Bet, params games.Params, pair SeedPair, now time.Time,
	deal func(event.Source) (*G, error)) (*Round[G], error) {
	g, err := deal(fair.NewStream(pair.ServerSeed, pair.ClientSeed, uint64(pair.Nonce)))
	if err != nil {
		return nil, err
	}
	r := &Round[G]{Bet: bet, Pair: pair, Params: params, Game: g, maxPayout: l.MaxPayout}
	r.Bet.SeedPairID, r.Bet.ClientSeed, r.Bet.Nonce = pair.ID, pair.ClientSeed, pair.Nonce
	if err := record(k, r, now); err != nil {
		return nil, err
	}
	return r, nil
}

// step runs action on the game row b, locked, with what the player has to
// stake before it (f): it refuses a game that is over, or one that has made another
// number of moves than seen (when set), lets the action change the state
// (an extra stake in r.stake), and returns what to save, settling the game
// when the rules have ended it. An error changes nothing: the caller's
// transaction rolls back. Like open it reads only its arguments.
func step[G any](k kind[G], l Limits, b BetWithSeeds, f Funds, now time.Time, seen *int,
	action func(r *Round[G]) error) (*Round[G], Change, error) {
	if b.Status != StatusActive {
		return nil, Change{}, ErrGameOver
	}
	r, err := resume(b, k, l)
	if err != nil {
		return nil, Change{}, err
	}
	if seen != nil && *seen != k.moves(r.Params) {
		return nil, Change{}, ErrGameMovedOn
	}
	r.Balance, r.funds = f.Balance, f // before the action; an action taking a stake checks them before it draws
	if err := action(r); err != nil {
		return nil, Change{}, err
	}
	if err := record(k, r, now); err != nil {
		return nil, Change{}, err
	}
	c := Change{Bet: r.Bet, Stake: r.stake}
	if r.Over() {
		c.Payout = r.Bet.Payout
	}
	return r, c, nil
}

// record writes the round's params and state into its bet: the rules' state
// while the game runs; once the rules have ended it, the settlement.
func record[G any](k kind[G], r *Round[G], now time.Time) error {
	r.Bet.Params = r.Params.AppendJSON(make([]byte, 0, 64))
	if !k.over(r.Game) {
		var err error
		if r.Bet.State, err = encodeState(r.Game, k.stateSize); err != nil {
			return err
		}
		evenWork(k, r, now, false)
		return nil
	}
	evenWork(k, r, now, true)
	return settle(k, r, now)
}

// evenWork makes recording a game of a kind with hiddenEnd cost the same
// whether the rules ended it or not: a game that goes on is also settled,
// on a copy thrown away, and one that ended also has its state encoded. A
// start is drawn before Postgres has checked its stake, and an action on a
// replica's copy before its session is checked, so a refusal can come after
// the draw: the settlement's replay and encoding (about 10 µs) told a
// refused deal that would have been a natural, or a refused insurance whose
// peek finds the dealer's blackjack, from one that would not, for free and
// as often as the player liked (found by a review playing a hostile player;
// test/security/timing_test.go).
func evenWork[G any](k kind[G], r *Round[G], now time.Time, over bool) {
	if !k.hiddenEnd {
		return
	}
	if over {
		_, _ = encodeState(r.Game, k.stateSize)
		return
	}
	shadow := *r
	_ = settle(k, &shadow, now) // a game in play replays to its view: the work only
}

// encodeState encodes a running game's state into a buffer of capacity
// size, so that what it allocates does not depend on how long the encoding
// is. json.Marshal returns a copy sized to the encoding, and the length of a
// state depends on the hidden layout (a Mines tile from 10 on takes two
// digits): a start refused by Postgres (a short balance, a limit, a game
// in progress) is drawn and encoded first and moves no nonce, so the size
// class of that copy told, start after start, how many of the next mines
// lie in the lower rows (found by a review playing a hostile player;
// TestStartDoesTheSameWork). A state longer than size (none is:
// checkStateSize in the stateful property test) would only grow the buffer.
func encodeState(v any, size int) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, size))
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil // Encode ends the value with a newline
}

// settle ends a game the rules have ended: it replays the game from its seeds
// and recorded params, which must agree with the rules' own result (else the
// transaction fails rather than pay a result the player could not verify),
// and turns the bet into a settled one paying stake × multiplier rounded
// down, whose state is the replayed outcome, as Verify recomputes it. The
// caller credits the payout in the same transaction.
func settle[G any](k kind[G], r *Round[G], now time.Time) error {
	replayed, err := games.Replay(k.game,
		fair.NewStream(r.Pair.ServerSeed, r.Bet.ClientSeed, uint64(r.Bet.Nonce)), r.Params)
	if err != nil {
		return fmt.Errorf("replay game %s: %w", r.Bet.ID, err)
	}
	mult := k.payout(r.Game)
	if got := multiplierOf(replayed); got != mult {
		return fmt.Errorf("settle game %s: replay pays %sx, the game %sx", r.Bet.ID, got, mult)
	}
	payout := money.MulFloorCapped(r.Bet.Amount, mult, r.maxPayout)
	if k.returns != nil {
		stakes, ret := k.returns(r.Game)
		if got := returnOf(replayed); got != ret {
			return fmt.Errorf("settle game %s: replay returns %sx per stake, the game %sx", r.Bet.ID, got, ret)
		}
		base, err := baseStake(r.Bet.Amount, stakes)
		if err != nil {
			return fmt.Errorf("settle game %s: %w", r.Bet.ID, err)
		}
		payout = money.MulFloorCapped(base, ret, r.maxPayout)
	}
	if r.Bet.State, err = marshalOutcome(replayed); err != nil {
		return err
	}
	r.Bet.Status, r.Bet.Multiplier, r.Bet.Payout, r.Bet.SettledAt = StatusSettled, mult, payout, &now
	return nil
}

// observe reports a game that has just settled — its transaction committed
// — to the metrics and the live feed; a running game is reported to neither.
func observe[G any](s *Service, r *Round[G], placed Placed) {
	if !r.Over() {
		return
	}
	if s.metrics != nil {
		s.metrics.BetSettled(string(r.Bet.Game), r.Bet.Amount, r.Bet.Payout)
	}
	s.publish(r.Bet, placed)
}

// ActiveGames are the caller's running games, at most one of each kind;
// a nil field means none.
type ActiveGames struct {
	Mines     *MinesRound
	Pump      *PumpRound
	Blackjack *BlackjackRound
}

// Active returns the caller's running games, so a reloaded page can resume
// them.
func (s *Service) Active(ctx context.Context, p accounts.Principal) (ActiveGames, error) {
	bets, err := s.store.ActiveGames(ctx, p.UserID)
	if err != nil {
		return ActiveGames{}, fmt.Errorf("active games: %w", err)
	}
	var out ActiveGames
	for _, b := range bets {
		switch b.Game {
		case Mines:
			r, err := resume(b, minesKind, s.limits)
			if err != nil {
				return ActiveGames{}, err
			}
			out.Mines = newMinesRound(r, false)
		case Pump:
			r, err := resume(b, pumpKind, s.limits)
			if err != nil {
				return ActiveGames{}, err
			}
			out.Pump = newPumpRound(r, false)
		case Blackjack:
			r, err := resume(b, blackjackKind, s.limits)
			if err != nil {
				return ActiveGames{}, err
			}
			out.Blackjack = newBlackjackRound(r)
		}
	}
	return out, nil
}

// resume decodes a running game's row; the kind only fixes G.
func resume[G any](b BetWithSeeds, _ kind[G], l Limits) (*Round[G], error) {
	r := &Round[G]{Bet: b.Bet, Pair: b.Pair, Game: new(G), maxPayout: l.MaxPayout}
	if err := json.Unmarshal(b.Params, &r.Params); err != nil {
		return nil, fmt.Errorf("params of game %s: %w", b.ID, err)
	}
	if err := json.Unmarshal(b.State, r.Game); err != nil {
		return nil, fmt.Errorf("state of game %s: %w", b.ID, err)
	}
	return r, nil
}

// gameError turns a rules error into what the player sees; a corrupt stored
// game stays an internal error.
func gameError(err error, user ...error) error {
	for _, u := range user {
		if errors.Is(err, u) {
			return problem.Invalid(u.Error())
		}
	}
	return err
}
