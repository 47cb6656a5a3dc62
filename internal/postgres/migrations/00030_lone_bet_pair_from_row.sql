-- +goose Up
-- fairplay_place_bet, the lone bet of the releases before 00013, answers a
-- stale bet with the active pair's nonce and client seed as the player's
-- row has them.
--
-- Since 00029 a bet moves the active pair's nonce on in the player's row
-- alone (users.seed_nonce); the pair's own row keeps the nonce it had when
-- it was made or last given a client seed. This function read its stale
-- answer's pair from the pair's row, so a release that calls it drew its
-- next try from a nonce already used, was refused as stale again, and gave
-- up: once its pair's row fell behind, no bet of it was placed. Its first bet from a pair it read itself is
-- still refused once (it reads the pair's row), then drawn again from this
-- answer and placed. docs/upgrades.md says how far back an image can roll
-- all the same; TestBetRulesOnEveryPath ("the pair's row behind").
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_place_bet(
    p_user uuid, p_session uuid, p_live_since timestamptz,
    p_pair uuid, p_client_seed text, p_nonce bigint,
    p_bet uuid, p_game text, p_status text, p_stake bigint, p_multiplier bigint, p_payout bigint,
    p_params jsonb, p_state jsonb, p_at timestamptz, p_settled_at timestamptz,
    OUT status text, OUT balance bigint, OUT pair seed_pairs)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    SELECT * INTO r FROM fairplay_place_bets(ARRAY[p_user], ARRAY[coalesce(p_session, '00000000-0000-0000-0000-000000000000')],
        ARRAY[p_live_since], ARRAY[p_pair], ARRAY[p_client_seed], ARRAY[p_nonce], ARRAY[p_bet], ARRAY[p_game],
        ARRAY[p_status], ARRAY[p_stake], ARRAY[p_multiplier], ARRAY[p_payout], ARRAY[p_params::text],
        ARRAY[p_state::text], ARRAY[p_at], ARRAY[p_settled_at IS NOT NULL], true) f;
    status := r.status;
    IF r.status IN ('placed', 'insufficient') THEN
        balance := r.balance;
    END IF;
    IF r.pair_id IS NOT NULL THEN
        -- The pair's row, with its nonce and client seed as the answer has
        -- them (the player's row).
        SELECT * INTO pair FROM seed_pairs sp WHERE sp.id = r.pair_id;
        pair.client_seed := r.client_seed;
        pair.nonce := r.nonce;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- The function as 00013 left it.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_place_bet(
    p_user uuid, p_session uuid, p_live_since timestamptz,
    p_pair uuid, p_client_seed text, p_nonce bigint,
    p_bet uuid, p_game text, p_status text, p_stake bigint, p_multiplier bigint, p_payout bigint,
    p_params jsonb, p_state jsonb, p_at timestamptz, p_settled_at timestamptz,
    OUT status text, OUT balance bigint, OUT pair seed_pairs)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    SELECT * INTO r FROM fairplay_place_bets(ARRAY[p_user], ARRAY[coalesce(p_session, '00000000-0000-0000-0000-000000000000')],
        ARRAY[p_live_since], ARRAY[p_pair], ARRAY[p_client_seed], ARRAY[p_nonce], ARRAY[p_bet], ARRAY[p_game],
        ARRAY[p_status], ARRAY[p_stake], ARRAY[p_multiplier], ARRAY[p_payout], ARRAY[p_params::text],
        ARRAY[p_state::text], ARRAY[p_at], ARRAY[p_settled_at IS NOT NULL], true) f;
    status := r.status;
    IF r.status IN ('placed', 'insufficient') THEN
        balance := r.balance;
    END IF;
    IF r.pair_id IS NOT NULL THEN
        SELECT * INTO pair FROM seed_pairs sp WHERE sp.id = r.pair_id;
    END IF;
END
$$;
-- +goose StatementEnd
