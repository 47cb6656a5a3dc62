package play

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/dice"
	"github.com/fairplay/fairplay/internal/games/keno"
	"github.com/fairplay/fairplay/internal/games/plinko"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
)

// Settlement is a settled bet with the balance after it.
type Settlement struct {
	Bet     Bet
	Balance money.Amount
	// Pair is the seed pair used; its ServerSeed is still secret.
	Pair SeedPair
}

// invalid turns a game package's validation error into a user-facing one.
func invalid(err error) error {
	if err == nil {
		return nil
	}
	for _, e := range []error{dice.ErrInvalidTarget, keno.ErrNoNumbers, keno.ErrTooManyNumbers, keno.ErrNumberOutOfRange,
		keno.ErrDuplicateNumber, keno.ErrInvalidRisk} {
		if errors.Is(err, e) {
			return problem.Invalid(e.Error())
		}
	}
	switch {
	case errors.Is(err, plinko.ErrInvalidRows):
		return problem.Invalid("Rows must be between 8 and 16")
	case errors.Is(err, plinko.ErrInvalidRisk):
		return problem.Invalid("Risk must be low, medium or high")
	}
	return err
}

// validate checks a bet's parameters before any money moves, so a bad
// request is a clear 400 that changes nothing.
func validate(game Game, p games.Params) error {
	switch game {
	case Dice:
		_, err := dice.ParseTarget(p.Target)
		return invalid(err)
	case Plinko:
		risk, err := plinko.ParseRisk(p.Risk)
		if err != nil {
			return invalid(err)
		}
		_, err = plinko.Table(risk, p.Rows)
		return invalid(err)
	case Keno:
		if err := keno.ValidatePicks(p.Picks); err != nil {
			return invalid(err)
		}
		_, err := keno.ParseRisk(p.Risk)
		return invalid(err)
	}
	return fmt.Errorf("validate: unknown game %q", game)
}

// multiplierOf is the total return on the total stake of a replayed bet.
func multiplierOf(o games.Outcome) money.Multiplier {
	switch {
	case o.Dice != nil:
		return o.Dice.Multiplier
	case o.Plinko != nil:
		return o.Plinko.Multiplier
	case o.Keno != nil:
		return o.Keno.Multiplier
	case o.Mines != nil:
		return o.Mines.Multiplier
	case o.Pump != nil:
		return o.Pump.Multiplier
	case o.Blackjack != nil:
		return o.Blackjack.Multiplier
	}
	return 0
}

// returnOf is the total return per base stake of a replayed blackjack game
// (for a game of the classic rules, which does not record it, the return on
// the total stake times the stakes); 0 for the other games.
func returnOf(o games.Outcome) money.Multiplier {
	if o.Blackjack == nil {
		return 0
	}
	if o.Blackjack.Rules == 0 {
		return o.Blackjack.Multiplier * o.Blackjack.Stakes / money.One
	}
	return o.Blackjack.Return
}

// recordedOutcome is what a settled bet stores as its outcome: the game's
// own outcome, exactly as games.Replay recomputes it (for a stateful game,
// replayed with the player's recorded actions).
func recordedOutcome(o games.Outcome) any {
	switch {
	case o.Dice != nil:
		return o.Dice
	case o.Plinko != nil:
		return o.Plinko
	case o.Keno != nil:
		return o.Keno
	case o.Mines != nil:
		return o.Mines
	case o.Pump != nil:
		return o.Pump
	case o.Blackjack != nil:
		return o.Blackjack
	}
	return nil
}

// marshalOutcome is json.Marshal(recordedOutcome(o)), with the instant
// games' and Blackjack's outcomes written without reflection (their AppendJSON methods are
// held to Marshal's bytes by their tests), each into a buffer its longest
// outcome fits: one allocation whatever was drawn (drawInstant).
func marshalOutcome(o games.Outcome) ([]byte, error) {
	switch {
	case o.Dice != nil:
		return o.Dice.AppendJSON(make([]byte, 0, 64)), nil
	case o.Plinko != nil:
		return o.Plinko.AppendJSON(make([]byte, 0, 160)), nil
	case o.Keno != nil:
		return o.Keno.AppendJSON(make([]byte, 0, 256)), nil // the longest (ten picks, ten hits) is under 200 bytes
	case o.Blackjack != nil:
		// The deck's 52 cards take at most 436 bytes, and the longest two
		// split hands with the rest under 400 (checkStateSize).
		return o.Blackjack.AppendJSON(make([]byte, 0, blackjackOutcomeSize)), nil
	}
	return json.Marshal(recordedOutcome(o))
}

// drawInstant draws an instant bet at the pair's nonce and settles it. It
// runs before Postgres checks the stake, and a bet refused there (above the
// balance, or the player's limits) moves no nonce and can be asked again and
// again, so its work must not depend on the outcome: a review playing a
// hostile player found a Keno draw's allocations growing with the hits (the
// matches appended one by one, the outcome outgrowing its buffer), which
// told, refusal after refusal, which numbers the next draw holds
// (TestInstantDrawDoesTheSameWork).
func drawInstant(game Game, pair SeedPair, params games.Params, rawParams []byte, stake money.Amount, limits Limits) (games.Outcome, Draw, error) {
	out, err := games.Replay(game, fair.NewStream(pair.ServerSeed, pair.ClientSeed, uint64(pair.Nonce)), params)
	if err != nil {
		return games.Outcome{}, Draw{}, invalid(err)
	}
	mult := multiplierOf(out)
	payout := limits.payout(stake, mult)
	rawOut, err := marshalOutcome(out)
	if err != nil {
		return games.Outcome{}, Draw{}, err
	}
	return out, Draw{Status: StatusSettled, Multiplier: mult, Payout: payout, Params: rawParams, State: rawOut}, nil
}

// DiceResult is a settled dice bet.
type DiceResult struct {
	Settlement
	Outcome dice.Outcome
}

// PlayDice validates (bet, then target) and settles a dice bet.
func (s *Service) PlayDice(ctx context.Context, p accounts.Principal, betAmount, rollTarget string) (DiceResult, error) {
	st, out, err := s.placeInstant(ctx, p, Dice, betAmount, games.Params{Target: rollTarget})
	if err != nil {
		return DiceResult{}, err
	}
	return DiceResult{Settlement: st, Outcome: *out.Dice}, nil
}

// PlinkoResult is a settled plinko bet.
type PlinkoResult struct {
	Settlement
	Outcome plinko.Outcome
}

// PlayPlinko validates and settles one plinko ball.
func (s *Service) PlayPlinko(ctx context.Context, p accounts.Principal, betAmount string, rows int, risk string) (PlinkoResult, error) {
	st, out, err := s.placeInstant(ctx, p, Plinko, betAmount, games.Params{Rows: rows, Risk: risk})
	if err != nil {
		return PlinkoResult{}, err
	}
	return PlinkoResult{Settlement: st, Outcome: *out.Plinko}, nil
}

// KenoResult is a settled keno round.
type KenoResult struct {
	Settlement
	Outcome keno.Outcome
}

// PlayKeno validates in SPEC.md's order (a selection, then the bet, then the
// rest) and settles a keno round.
func (s *Service) PlayKeno(ctx context.Context, p accounts.Principal, betAmount string, picks []int, risk string) (KenoResult, error) {
	if len(picks) == 0 {
		return KenoResult{}, invalid(keno.ErrNoNumbers)
	}
	st, out, err := s.placeInstant(ctx, p, Keno, betAmount, games.Params{Picks: picks, Risk: risk})
	if err != nil {
		return KenoResult{}, err
	}
	return KenoResult{Settlement: st, Outcome: *out.Keno}, nil
}

// placeInstant validates the stake, then the parameters, and runs one
// single-request bet in one transaction.
func (s *Service) placeInstant(ctx context.Context, p accounts.Principal, game Game, betAmount string, params games.Params) (Settlement, games.Outcome, error) {
	stake, err := s.parseStake(betAmount)
	if err != nil {
		return Settlement{}, games.Outcome{}, err
	}
	if err := validate(game, params); err != nil {
		return Settlement{}, games.Outcome{}, err
	}
	if err := s.limitBets(ctx, p.UserID); err != nil {
		return Settlement{}, games.Outcome{}, err
	}
	rawParams := params.AppendJSON(make([]byte, 0, 64))
	bet := Bet{ID: uuid.Must(uuid.NewV7()), UserID: p.UserID, Game: game, Status: StatusSettled, Amount: stake,
		Params: rawParams, CreatedAt: s.now()}
	bet.SettledAt = &bet.CreatedAt
	var outcome games.Outcome
	pair, placed, err := s.placeBet(ctx, p, bet, func(pair SeedPair) (Draw, error) {
		out, d, err := drawInstant(game, pair, params, rawParams, stake, s.limits)
		if err != nil {
			return Draw{}, err
		}
		outcome, bet.Multiplier, bet.Payout, bet.State = out, d.Multiplier, d.Payout, d.State
		return d, nil
	})
	if err != nil {
		return Settlement{}, games.Outcome{}, fmt.Errorf("place %s bet: %w", game, err)
	}
	bet.SeedPairID, bet.ClientSeed, bet.Nonce = pair.ID, pair.ClientSeed, pair.Nonce
	st := Settlement{Bet: bet, Balance: placed.Balance, Pair: pair}
	if s.metrics != nil {
		s.metrics.BetSettled(string(game), stake, st.Bet.Payout)
	}
	s.publish(st.Bet, placed)
	return st, outcome, nil
}
