package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/games"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/test/apitest"
)

// The split and insurance rules (blackjack rules 1) over /api and Connect.
// As in stateful_test.go the test knows the server seed and picks a client
// seed that deals the situation it wants; the server draws everything.

const (
	msgCannotSplit     = "Split is not allowed now: only the first two cards of equal rank, once per game"
	msgInsuranceFirst  = "Accept or decline insurance first"
	msgNoInsurance     = "Insurance is not offered now"
	msgAcceptMissing   = "accept is required: true to take insurance (or even money), false to decline"
	msgShortSplit      = "Insufficient balance to split"
	msgShortInsurance  = "Insufficient balance for insurance"
	msgAlreadyOver     = "This game is already over"
	splitRules         = 1
	blackjackStartPath = "/api/games/blackjack/start"
)

// rigBJ picks a client seed whose next game, played with actions under the
// split rules, satisfies want.
func rigBJ(t *testing.T, env *apitest.Env, c *apitest.Client, actions string, want func(*games.BlackjackReplay) bool) *games.BlackjackReplay {
	t.Helper()
	return rig(t, env, c, games.Blackjack, games.Params{Actions: actions, Rules: splitRules},
		func(o games.Outcome) bool { return want(o.Blackjack) }).Blackjack
}

// betEntries returns the amounts of a bet's "bet" ledger entries.
func betEntries(t *testing.T, env *apitest.Env, id string) []money.Amount {
	t.Helper()
	rows, err := env.App.Postgres.Query(context.Background(),
		`SELECT amount FROM ledger_entries WHERE ref_id = $1 AND kind = 'bet' ORDER BY id`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []money.Amount
	for rows.Next() {
		var a int64
		if err := rows.Scan(&a); err != nil {
			t.Fatal(err)
		}
		out = append(out, money.Amount(a))
	}
	return out
}

func TestBlackjackSplit(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("splitter")
	bet := money.Dollars(10)

	// A pair (not aces) split, both hands stood: the second stake is a second
	// "bet" entry of the same bet, each hand is settled, the total credited.
	want := rigBJ(t, env, c, "pss", func(r *games.BlackjackReplay) bool {
		return r.Second != "" && r.Result != "" && r.Return > 0
	})
	bal := balance(t, c)
	res := ok(t, c.Do("POST", blackjackStartPath, `{"betAmount": 10}`))
	id := res.Str("gameId")
	if res.Get("hands.canSplit") != true || res.Get("hands.insurance") != "" || len(res.Get("hands.secondHand").([]any)) != 0 {
		t.Fatalf("pair dealt: %s", res.Raw)
	}
	split := ok(t, c.Do("POST", "/api/games/blackjack/split", map[string]any{"gameId": id}))
	second, _ := split.Get("hands.secondHand").([]any)
	if len(hand(split, "playerHand")) != 2 || len(second) != 2 || split.Get("hands.canSplit") != false ||
		amount(t, split.Body["newBalance"]) != bal-2*bet || amount(t, split.Get("hands.betAmount")) != 2*bet ||
		card(hand(split, "dealerHand")[1])["hidden"] != true || split.Body["gameOver"] != false {
		t.Fatalf("split: %s", split.Raw)
	}
	expect(t, c.Do("POST", "/api/games/blackjack/split", map[string]any{"gameId": id}), 400, msgCannotSplit)
	var end apitest.Response
	for end.Body["gameOver"] != true {
		end = ok(t, c.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
	}
	win, err := money.MulFloor(bet, want.Return)
	if err != nil {
		t.Fatal(err)
	}
	results, _ := end.Get("hands.handResults").([]any)
	if end.Str("result") != want.Result || len(results) != 2 || !strings.HasPrefix(want.Result, "Hand 1: ") ||
		amount(t, end.Body["winAmount"]) != win || amount(t, end.Body["newBalance"]) != bal-2*bet+win {
		t.Fatalf("split settled: %s (want %s, return %s)", end.Raw, want.Result, want.Return)
	}
	if h := c.Do("GET", "/api/games/bets/"+id, nil); amount(t, h.Get("bet.amount")) != 2*bet || amount(t, h.Get("bet.payout")) != win {
		t.Fatalf("split bet in the history: %s", h.Raw)
	}
	if e := betEntries(t, env, id); len(e) != 2 || e[0] != -bet || e[1] != -bet {
		t.Fatalf("split bet entries %v", e)
	}

	// Split refused without the balance for the second stake: nothing changes.
	poor := env.Client()
	poor.Register("split_short")
	rig(t, env, poor, games.Blackjack, games.Params{Actions: "p", Rules: splitRules}, func(o games.Outcome) bool {
		return o.Blackjack.Second != "" && o.Blackjack.Result == ""
	})
	id = ok(t, poor.Do("POST", blackjackStartPath, `{"betAmount": 600}`)).Str("gameId")
	expect(t, poor.Do("POST", "/api/games/blackjack/split", map[string]any{"gameId": id}), 400, msgShortSplit)
	if b := balance(t, poor); b != money.Dollars(400) {
		t.Fatalf("refused split changed the balance to %s", b)
	}
	if a := poor.Do("GET", "/api/games/active", nil); a.Str("blackjack.gameId") != id || a.Get("blackjack.hands.canSplit") != true ||
		len(a.Get("blackjack.hands.secondHand").([]any)) != 0 || amount(t, a.Get("blackjack.betAmount")) != money.Dollars(600) {
		t.Fatalf("refused split changed the game: %s", a.Raw)
	}
	if e := betEntries(t, env, id); len(e) != 1 {
		t.Fatalf("refused split wrote %d bet entries", len(e))
	}
	ok(t, poor.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))

	// A hand that is no pair cannot split.
	rigBJ(t, env, c, "", func(r *games.BlackjackReplay) bool {
		return r.Result == "" && r.Insurance == "" && !strings.Contains(r.Deck[0], strings.TrimRight(r.Deck[2], "♦♥♠♣"))
	})
	id = ok(t, c.Do("POST", blackjackStartPath, `{"betAmount": 1}`)).Str("gameId")
	expect(t, c.Do("POST", "/api/games/blackjack/split", map[string]any{"gameId": id}), 400, msgCannotSplit)
	ok(t, c.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
	expect(t, c.Do("POST", "/api/games/blackjack/split", map[string]any{"gameId": id}), 409, msgAlreadyOver)
	expect(t, c.Do("POST", "/api/games/blackjack/split", map[string]any{"gameId": "nope"}), 400, "Invalid game id")

	// Over Connect: split, then stand both hands.
	rigBJ(t, env, c, "pss", func(r *games.BlackjackReplay) bool { return r.Second != "" && r.Result != "" })
	id = ok(t, c.Do("POST", blackjackStartPath, `{"betAmount": 1}`)).Str("gameId")
	client := fairplayv1connect.NewGameServiceClient(http.DefaultClient, env.URL, connect.WithProtoJSON())
	req := connect.NewRequest(&fairplayv1.SplitBlackjackRequest{GameId: id})
	req.Header().Set("Authorization", "Bearer "+c.Token)
	sres, err := client.SplitBlackjack(context.Background(), req)
	if err != nil || len(sres.Msg.GetHands().GetSecondHand()) != 2 || len(sres.Msg.GetPlayerHand()) != 2 ||
		sres.Msg.GetHands().GetBetAmount() != "2" || !sres.Msg.GetDealerHand()[1].GetHidden() {
		t.Fatalf("split over connect: %v %v", sres, err)
	}
	if _, err := client.SplitBlackjack(context.Background(), connect.NewRequest(&fairplayv1.SplitBlackjackRequest{GameId: id})); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("connect split without token: %v", err)
	}
	for over := false; !over; {
		res := ok(t, c.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
		over = res.Body["gameOver"] == true
	}

	ledgerClean(t, env)
	verifyAll(t, c)
	verifyAll(t, poor)
}

func TestBlackjackInsurance(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("insurer")
	bet := money.Dollars(10)

	// Ace up: insurance is offered before anything else; the hole card stays
	// hidden and every other action waits for the decision.
	rigBJ(t, env, c, "i", func(r *games.BlackjackReplay) bool {
		return r.Insurance == "taken" && strings.HasSuffix(r.Result, "Insurance pays 2:1")
	})
	bal := balance(t, c)
	res := ok(t, c.Do("POST", blackjackStartPath, `{"betAmount": 10}`))
	id := res.Str("gameId")
	if res.Get("hands.insurance") != "offered" || res.Get("hands.evenMoney") != false || res.Body["gameOver"] != false ||
		res.Body["canDouble"] != false || res.Get("hands.canSplit") != false || card(hand(res, "dealerHand")[1])["hidden"] != true ||
		card(hand(res, "dealerHand")[0])["value"] != "A" {
		t.Fatalf("insurance offer: %s", res.Raw)
	}
	for _, a := range []string{"hit", "stand", "double", "split"} {
		expect(t, c.Do("POST", "/api/games/blackjack/"+a, map[string]any{"gameId": id}), 400, msgInsuranceFirst)
	}
	expect(t, c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id}), 400, msgAcceptMissing)
	expect(t, c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": "yes"}), 400, "")
	if b := balance(t, c); b != bal-bet {
		t.Fatalf("refusals changed the balance: %s", b)
	}
	ins := ok(t, c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": true}))
	// Dealer natural: the main stake is lost, insurance pays 2:1 on 5: 15 back.
	if ins.Body["gameOver"] != true || ins.Str("result") != "Dealer has Blackjack! Dealer wins. Insurance pays 2:1" ||
		amount(t, ins.Body["winAmount"]) != money.Dollars(15) || amount(t, ins.Body["newBalance"]) != bal ||
		amount(t, ins.Get("hands.betAmount")) != money.Dollars(15) || ins.Get("hands.insurance") != "taken" ||
		card(hand(ins, "dealerHand")[1])["hidden"] != false {
		t.Fatalf("insurance paid: %s", ins.Raw)
	}
	if e := betEntries(t, env, id); len(e) != 2 || e[0] != -bet || e[1] != -bet/2 {
		t.Fatalf("insurance bet entries %v", e)
	}
	expect(t, c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": true}), 409, msgAlreadyOver)

	// Insurance taken, no dealer natural: the half stake is lost and play goes on.
	want := rigBJ(t, env, c, "is", func(r *games.BlackjackReplay) bool { return r.Insurance == "taken" && r.Result != "" })
	bal = balance(t, c)
	id = ok(t, c.Do("POST", blackjackStartPath, `{"betAmount": 10}`)).Str("gameId")
	ins = ok(t, c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": true}))
	if ins.Body["gameOver"] != false || card(hand(ins, "dealerHand")[1])["hidden"] != true || amount(t, ins.Body["newBalance"]) != bal-bet-bet/2 {
		t.Fatalf("insurance lost: %s", ins.Raw)
	}
	stand := ok(t, c.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
	win, _ := money.MulFloor(bet, want.Return)
	if stand.Str("result") != want.Result || amount(t, stand.Body["winAmount"]) != win || amount(t, stand.Body["newBalance"]) != bal-bet-bet/2+win {
		t.Fatalf("stand after insurance: %s (want %s, return %s)", stand.Raw, want.Result, want.Return)
	}

	// Declined: no stake; the dealer peeks.
	rigBJ(t, env, c, "n", func(r *games.BlackjackReplay) bool { return r.Result == "Dealer has Blackjack! Dealer wins" })
	bal = balance(t, c)
	id = ok(t, c.Do("POST", blackjackStartPath, `{"betAmount": 10}`)).Str("gameId")
	dec := ok(t, c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": false}))
	if dec.Body["gameOver"] != true || dec.Get("hands.insurance") != "declined" || amount(t, dec.Body["newBalance"]) != bal-bet {
		t.Fatalf("declined: %s", dec.Raw)
	}

	// Even money: a natural against an ace takes 1:1 at once, no stake.
	rigBJ(t, env, c, "i", func(r *games.BlackjackReplay) bool { return r.Insurance == "even_money" })
	bal = balance(t, c)
	res = ok(t, c.Do("POST", blackjackStartPath, `{"betAmount": 10}`))
	id = res.Str("gameId")
	if res.Get("hands.evenMoney") != true || res.Get("hands.insurance") != "offered" || res.Body["gameOver"] != false {
		t.Fatalf("even money offer: %s", res.Raw)
	}
	em := ok(t, c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": true}))
	if em.Str("result") != "Even money! You win" || amount(t, em.Body["winAmount"]) != 2*bet || amount(t, em.Body["newBalance"]) != bal+bet {
		t.Fatalf("even money: %s", em.Raw)
	}

	// No offer without an ace up.
	rigBJ(t, env, c, "", func(r *games.BlackjackReplay) bool { return r.Result == "" && r.Insurance == "" })
	id = ok(t, c.Do("POST", blackjackStartPath, `{"betAmount": 1}`)).Str("gameId")
	expect(t, c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": true}), 400, msgNoInsurance)
	ok(t, c.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))

	// Insurance needs half a stake of balance; refused, nothing changes, and
	// declining still works.
	poor := env.Client()
	poor.Register("ins_short")
	rigBJ(t, env, poor, "", func(r *games.BlackjackReplay) bool {
		return r.Insurance == "offered" && !strings.Contains(r.Player, "21")
	})
	id = ok(t, poor.Do("POST", blackjackStartPath, `{"betAmount": 900}`)).Str("gameId")
	expect(t, poor.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": true}), 400, msgShortInsurance)
	if b := balance(t, poor); b != money.Dollars(100) {
		t.Fatalf("refused insurance changed the balance to %s", b)
	}
	if a := poor.Do("GET", "/api/games/active", nil); a.Get("blackjack.hands.insurance") != "offered" {
		t.Fatalf("refused insurance changed the game: %s", a.Raw)
	}

	// Over Connect: decline.
	client := fairplayv1connect.NewGameServiceClient(http.DefaultClient, env.URL, connect.WithProtoJSON())
	no := false
	req := connect.NewRequest(&fairplayv1.InsureBlackjackRequest{GameId: id, Accept: &no})
	req.Header().Set("Authorization", "Bearer "+poor.Token)
	ires, err := client.InsureBlackjack(context.Background(), req)
	if err != nil || ires.Msg.GetHands().GetInsurance() != "declined" || ires.Msg.GetHands().GetBetAmount() != "900" {
		t.Fatalf("insurance over connect: %v %v", ires, err)
	}
	missing := connect.NewRequest(&fairplayv1.InsureBlackjackRequest{GameId: id})
	missing.Header().Set("Authorization", "Bearer "+poor.Token)
	if _, err := client.InsureBlackjack(context.Background(), missing); connect.CodeOf(err) != connect.CodeInvalidArgument ||
		!strings.Contains(err.Error(), msgAcceptMissing) {
		t.Fatalf("connect insurance without accept: %v", err)
	}
	if !ires.Msg.GetGameOver() {
		ok(t, poor.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
	}

	ledgerClean(t, env)
	verifyAll(t, c)
	verifyAll(t, poor)
}

// Racing splits, and racing insurance decisions, take their stake once: of
// several identical requests at once exactly one succeeds, the others are
// refused with the rules' message (or find the game over), and the bet holds
// exactly one extra "bet" entry.
func TestRacingSplitAndInsuranceDebitOnce(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("double_clicker")
	race := func(path string, body map[string]any, n int) []apitest.Response {
		res := make([]apitest.Response, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { res[i] = c.Do("POST", path, body) })
		}
		wg.Wait()
		return res
	}
	const rounds = 6
	for round := range rounds {
		// Splits.
		rigBJ(t, env, c, "p", func(r *games.BlackjackReplay) bool { return r.Second != "" && r.Result == "" })
		id := ok(t, c.Do("POST", blackjackStartPath, `{"betAmount": 1}`)).Str("gameId")
		won := 0
		for _, r := range race("/api/games/blackjack/split", map[string]any{"gameId": id}, 5) {
			switch {
			case r.Status == 200 && r.Body["success"] == true:
				won++
			case r.Status == 400 && r.Message() == msgCannotSplit:
			default:
				t.Fatalf("round %d: split: %d %s", round, r.Status, r.Raw)
			}
		}
		if e := betEntries(t, env, id); won != 1 || len(e) != 2 {
			t.Fatalf("round %d: %d splits won, %d bet entries", round, won, len(e))
		}
		for over := false; !over; {
			over = ok(t, c.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id})).Body["gameOver"] == true
		}

		// Insurance: accepts race declines; a non-natural against an ace.
		rigBJ(t, env, c, "", func(r *games.BlackjackReplay) bool {
			return r.Insurance == "offered" && !strings.Contains(r.Player, "21")
		})
		id = ok(t, c.Do("POST", blackjackStartPath, `{"betAmount": 1}`)).Str("gameId")
		res := make([]apitest.Response, 6)
		var wg sync.WaitGroup
		for i := range res {
			wg.Go(func() {
				res[i] = c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": i%2 == 0})
			})
		}
		wg.Wait()
		won, accepted := 0, false
		for i, r := range res {
			switch {
			case r.Status == 200 && r.Body["success"] == true:
				won++
				accepted = i%2 == 0
			case r.Status == 400 && r.Message() == msgNoInsurance:
			case r.Status == 409 && r.Message() == msgAlreadyOver:
			default:
				t.Fatalf("round %d: insurance: %d %s", round, r.Status, r.Raw)
			}
		}
		wantEntries := 1
		if accepted {
			wantEntries = 2
		}
		if e := betEntries(t, env, id); won != 1 || len(e) != wantEntries {
			t.Fatalf("round %d: %d decisions won (accepted %v), %d bet entries", round, won, accepted, len(e))
		}
		if a := c.Do("GET", "/api/games/active", nil); a.Body["blackjack"] != nil {
			ok(t, c.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
		}
	}
	ledgerClean(t, env)
	verifyAll(t, c)
}
