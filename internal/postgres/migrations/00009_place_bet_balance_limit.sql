-- +goose Up
-- fairplay_place_bet answers 'limit', changing nothing, when the player's
-- balance is above play.MaxBalance (ten billion play dollars, 10^18 units):
-- a balance can then grow by at most the payouts of the bets placed below
-- it, so no credit can overflow a bigint — an overflow would fail only a
-- winning bet, and that failure would tell the player the outcome. The
-- batch (internal/postgres/batch.go) and the two-round-trip statement check
-- the same bound.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_place_bet(
    p_user uuid, p_session uuid, p_live_since timestamptz,
    p_pair uuid, p_client_seed text, p_nonce bigint,
    p_bet uuid, p_game text, p_status text, p_stake bigint, p_multiplier bigint, p_payout bigint,
    p_params jsonb, p_state jsonb, p_at timestamptz, p_settled_at timestamptz,
    OUT status text, OUT balance bigint, OUT pair seed_pairs)
LANGUAGE plpgsql AS $$
DECLARE
    bal bigint;
BEGIN
    SELECT u.balance INTO bal FROM users u WHERE u.id = p_user AND u.deleted_at IS NULL FOR NO KEY UPDATE;
    IF NOT FOUND OR (p_session IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM sessions s
            WHERE s.id = p_session AND s.user_id = p_user AND s.revoked_at IS NULL AND s.last_used_at >= p_live_since)) THEN
        status := 'gone';
        RETURN;
    END IF;
    IF bal > 1000000000000000000 THEN  -- play.MaxBalance in units of 1e-8
        status := 'limit';
        RETURN;
    END IF;
    IF bal < p_stake THEN
        status := 'insufficient';
        balance := bal;
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM bets b WHERE b.user_id = p_user AND b.game = p_game AND b.status = 'active') THEN
        status := 'in_progress';
        RETURN;
    END IF;
    UPDATE seed_pairs sp SET nonce = p_nonce
    WHERE sp.id = p_pair AND sp.user_id = p_user AND sp.nonce = p_nonce - 1 AND sp.revealed_at IS NULL
      AND sp.client_seed = p_client_seed;
    IF NOT FOUND THEN
        status := 'stale';
        SELECT * INTO pair FROM seed_pairs sp WHERE sp.user_id = p_user AND sp.revealed_at IS NULL;
        RETURN;
    END IF;
    UPDATE users u SET balance = u.balance - p_stake + p_payout WHERE u.id = p_user RETURNING u.balance INTO bal;
    INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
    VALUES (p_user, 'bet', -p_stake, bal - p_payout, p_bet, '', p_at);
    IF p_payout <> 0 THEN
        INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
        VALUES (p_user, 'payout', p_payout, bal, p_bet, '', p_at);
    END IF;
    INSERT INTO bets (id, user_id, game, status, amount, multiplier, payout, seed_pair_id, client_seed, nonce,
                      params, state, created_at, settled_at)
    VALUES (p_bet, p_user, p_game, p_status, p_stake, p_multiplier, p_payout, p_pair, p_client_seed, p_nonce,
            p_params, p_state, p_at, p_settled_at);
    status := 'placed';
    balance := bal;
END
$$;
-- +goose StatementEnd


-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_place_bet(
    p_user uuid, p_session uuid, p_live_since timestamptz,
    p_pair uuid, p_client_seed text, p_nonce bigint,
    p_bet uuid, p_game text, p_status text, p_stake bigint, p_multiplier bigint, p_payout bigint,
    p_params jsonb, p_state jsonb, p_at timestamptz, p_settled_at timestamptz,
    OUT status text, OUT balance bigint, OUT pair seed_pairs)
LANGUAGE plpgsql AS $$
DECLARE
    bal bigint;
BEGIN
    SELECT u.balance INTO bal FROM users u WHERE u.id = p_user AND u.deleted_at IS NULL FOR NO KEY UPDATE;
    IF NOT FOUND OR (p_session IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM sessions s
            WHERE s.id = p_session AND s.user_id = p_user AND s.revoked_at IS NULL AND s.last_used_at >= p_live_since)) THEN
        status := 'gone';
        RETURN;
    END IF;
    IF bal < p_stake THEN
        status := 'insufficient';
        balance := bal;
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM bets b WHERE b.user_id = p_user AND b.game = p_game AND b.status = 'active') THEN
        status := 'in_progress';
        RETURN;
    END IF;
    UPDATE seed_pairs sp SET nonce = p_nonce
    WHERE sp.id = p_pair AND sp.user_id = p_user AND sp.nonce = p_nonce - 1 AND sp.revealed_at IS NULL
      AND sp.client_seed = p_client_seed;
    IF NOT FOUND THEN
        status := 'stale';
        SELECT * INTO pair FROM seed_pairs sp WHERE sp.user_id = p_user AND sp.revealed_at IS NULL;
        RETURN;
    END IF;
    UPDATE users u SET balance = u.balance - p_stake + p_payout WHERE u.id = p_user RETURNING u.balance INTO bal;
    INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
    VALUES (p_user, 'bet', -p_stake, bal - p_payout, p_bet, '', p_at);
    IF p_payout <> 0 THEN
        INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
        VALUES (p_user, 'payout', p_payout, bal, p_bet, '', p_at);
    END IF;
    INSERT INTO bets (id, user_id, game, status, amount, multiplier, payout, seed_pair_id, client_seed, nonce,
                      params, state, created_at, settled_at)
    VALUES (p_bet, p_user, p_game, p_status, p_stake, p_multiplier, p_payout, p_pair, p_client_seed, p_nonce,
            p_params, p_state, p_at, p_settled_at);
    status := 'placed';
    balance := bal;
END
$$;
-- +goose StatementEnd

