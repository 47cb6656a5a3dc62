-- +goose Up
-- fairplay_place_bet places a bet whose outcome the server has already drawn
-- from the seed pair and nonce it names, in one statement (one round trip):
-- the server keeps each player's active seed pair in memory, draws the next
-- bet from it, and this function accepts the bet only if that pair is still
-- the player's active pair with that client seed and that nonce is the next
-- one. Otherwise it answers 'stale' and the server places the bet the long
-- way (internal/postgres PlaceBet), which reads the pair first.
--
-- status is 'placed' (balance is the balance after), 'gone' (the session or
-- the player is gone), 'insufficient' (the stake is above the balance) or
-- 'stale', with the player's active pair as it is now (NULL when there is
-- none), so the server can draw again and retry at once. Every answer but 'placed' has changed nothing: the checks come
-- before the first write, and an error in a write aborts the statement.
-- +goose StatementBegin
CREATE FUNCTION fairplay_place_bet(
    p_user uuid, p_session uuid, p_live_since timestamptz,
    p_pair uuid, p_client_seed text, p_nonce bigint,
    p_bet uuid, p_game text, p_status text, p_stake bigint, p_multiplier bigint, p_payout bigint,
    p_params jsonb, p_state jsonb, p_at timestamptz, p_settled_at timestamptz,
    OUT status text, OUT balance bigint, OUT pair seed_pairs)
LANGUAGE plpgsql AS $$
DECLARE
    bal bigint;
BEGIN
    SELECT u.balance INTO bal FROM users u WHERE u.id = p_user AND u.deleted_at IS NULL FOR UPDATE;
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
DROP FUNCTION fairplay_place_bet(uuid, uuid, timestamptz, uuid, text, bigint, uuid, text, text, bigint, bigint, bigint,
    jsonb, jsonb, timestamptz, timestamptz);
