-- +goose Up
-- fairplay_place_bets is the one definition of placing a bet: every bet the
-- server places goes through it, a batch of players' bets (p_wait false,
-- internal/postgres/batch.go) and a bet placed on its own (p_wait true,
-- a batch of one). The rules are its CASE in chk, once; a new rule is one
-- more WHEN there (in the order of the answers below) and, if it needs a
-- column of the player, one more column in locked.
--
-- Each bet was drawn by the server in advance from the seed pair and nonce it
-- names. Its answer, per bet (ord is its place in the arrays, from 1):
--   busy         (only when p_wait is false) its player's or pair's row is
--                held by another transaction, or its player has an earlier
--                bet in these arrays: nothing waited, the server places it
--                again with p_wait true
--   gone         the player is deleted, or the session (the zero uuid: no
--                session to check) is revoked, expired (last used before
--                p_live_since) or not the player's
--   limit        the balance is above play.MaxBalance (10^18 units): no
--                credit can then overflow a bigint
--   insufficient the stake is above the balance
--   in_progress  the player already plays a game of this kind (even if this
--                deal would end at once)
--   stale        the pair is not the player's active pair with that client
--                seed, or the nonce is not its next one; pair_* is the
--                player's active pair as it is now (NULL when none)
--   placed       balance is the balance after
-- player and hidden are the player's username and hide_username (for the
-- live feed). Only placed bets write anything: the nonce, the balance, a
-- ledger entry for the stake and one for a payout (when there is one), and
-- the bet row. A refusal changes nothing; an error aborts the whole call.
--
-- Locks: the players' and pairs' rows FOR NO KEY UPDATE (the lock a balance
-- or nonce update takes anyway, so a new seed pair's foreign-key check still
-- proceeds) and the sessions' FOR KEY SHARE (which a revocation's update does
-- not wait for), all SKIP LOCKED, so the statement never waits: the locked
-- rows are read as they are now, whatever the statement's snapshot. A
-- session row another transaction holds is read from the snapshot instead.
-- With p_wait the function first waits for the players' rows, then the
-- pairs' (ordered by id, the order every bet and seed change takes them),
-- then runs the same statement, with a snapshot taken after the wait: its
-- own locks are never skipped, so it never answers busy.
-- +goose StatementBegin
CREATE FUNCTION fairplay_place_bets(
    p_users uuid[], p_sessions uuid[], p_live_since timestamptz[], p_pairs uuid[], p_client_seeds text[],
    p_nonces bigint[], p_bets uuid[], p_games text[], p_statuses text[], p_stakes bigint[], p_multipliers bigint[],
    p_payouts bigint[], p_params text[], p_states text[], p_at timestamptz[], p_settled boolean[], p_wait boolean)
RETURNS TABLE (ord bigint, status text, balance bigint, player text, hidden boolean, pair_id uuid, pair_user uuid,
               server_seed text, server_seed_hash text, client_seed text, nonce bigint, pair_created timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    IF p_wait THEN
        PERFORM 1 FROM users u WHERE u.id = ANY(p_users) ORDER BY u.id FOR NO KEY UPDATE OF u;
        PERFORM 1 FROM seed_pairs sp WHERE sp.id = ANY(p_pairs) AND sp.user_id = ANY(p_users) ORDER BY sp.id
            FOR NO KEY UPDATE OF sp;
    END IF;
    RETURN QUERY
    WITH b AS (
        SELECT user_id, session_id, live_since, pair_id, client_seed, nonce, bet_id, game, status, stake, multiplier,
               payout, params::jsonb AS params, state::jsonb AS state, at, settled, ord
        FROM unnest(p_users, p_sessions, p_live_since, p_pairs, p_client_seeds, p_nonces, p_bets, p_games, p_statuses,
                    p_stakes, p_multipliers, p_payouts, p_params, p_states, p_at, p_settled)
             WITH ORDINALITY AS b(user_id, session_id, live_since, pair_id, client_seed, nonce, bet_id, game, status,
                                  stake, multiplier, payout, params, state, at, settled, ord)
    ), locked AS MATERIALIZED (
        SELECT id, balance, deleted_at, username, hide_username FROM users
        WHERE id = ANY(p_users) FOR NO KEY UPDATE SKIP LOCKED
    ), live AS MATERIALIZED (
        SELECT id, user_id, revoked_at, last_used_at FROM sessions
        WHERE id = ANY(p_sessions) FOR KEY SHARE SKIP LOCKED
    ), pairs AS MATERIALIZED (
        SELECT id, user_id, server_seed, server_seed_hash, client_seed, nonce, created_at, revealed_at
        FROM seed_pairs WHERE id = ANY(p_pairs) FOR NO KEY UPDATE SKIP LOCKED
    ), chk AS (
        -- The rules of a bet, in the order of their answers.
        SELECT b.*, l.balance AS bal, l.username AS player, l.hide_username AS hidden,
               CASE WHEN row_number() OVER (PARTITION BY b.user_id ORDER BY b.ord) > 1
                         OR (l.id IS NULL AND EXISTS (SELECT 1 FROM users x WHERE x.id = b.user_id))
                         OR (p.id IS NULL AND EXISTS (
                                 SELECT 1 FROM seed_pairs x WHERE x.id = b.pair_id AND x.user_id = b.user_id))
                         THEN 'busy'
                    WHEN l.id IS NULL OR l.deleted_at IS NOT NULL
                         OR (b.session_id <> '00000000-0000-0000-0000-000000000000' AND NOT coalesce(
                                 s.user_id = b.user_id AND s.revoked_at IS NULL AND s.last_used_at >= b.live_since,
                                 EXISTS (SELECT 1 FROM sessions x
                                         WHERE x.id = b.session_id AND x.user_id = b.user_id AND x.revoked_at IS NULL
                                           AND x.last_used_at >= b.live_since)))
                         THEN 'gone'
                    WHEN l.balance > 1000000000000000000 THEN 'limit' -- play.MaxBalance
                    WHEN l.balance < b.stake THEN 'insufficient'
                    WHEN EXISTS (
                             SELECT 1 FROM bets x WHERE x.user_id = b.user_id AND x.game = b.game AND x.status = 'active')
                         THEN 'in_progress'
                    WHEN p.id IS NULL OR p.user_id <> b.user_id OR p.revealed_at IS NOT NULL
                         OR p.client_seed <> b.client_seed OR p.nonce <> b.nonce - 1 THEN 'stale'
                    ELSE 'ok' END AS verdict
        FROM b
        LEFT JOIN locked l ON l.id = b.user_id
        LEFT JOIN live s ON s.id = b.session_id
        LEFT JOIN pairs p ON p.id = b.pair_id
    ), adv AS (
        UPDATE seed_pairs sp SET nonce = c.nonce
        FROM chk c
        WHERE c.verdict = 'ok' AND sp.id = c.pair_id AND sp.user_id = c.user_id AND sp.nonce = c.nonce - 1
          AND sp.revealed_at IS NULL AND sp.client_seed = c.client_seed
        RETURNING c.user_id, c.bet_id, c.game, c.status, c.stake, c.multiplier, c.payout, c.pair_id, c.client_seed,
                  c.nonce, c.params, c.state, c.at, c.settled, c.ord
    ), upd AS (
        UPDATE users u SET balance = u.balance - a.stake + a.payout
        FROM adv a WHERE u.id = a.user_id
        RETURNING u.id, u.balance
    ), led AS (
        INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
        SELECT a.user_id, e.kind, e.amount, e.after, a.bet_id, '', a.at
        FROM adv a JOIN upd ON upd.id = a.user_id
        CROSS JOIN LATERAL (VALUES (1, 'bet', -a.stake, upd.balance - a.payout),
                                   (2, 'payout', a.payout, upd.balance)) e(k, kind, amount, after)
        WHERE e.k = 1 OR a.payout <> 0
        ORDER BY a.ord, e.k
    ), ins AS (
        INSERT INTO bets (id, user_id, game, status, amount, multiplier, payout, seed_pair_id, client_seed, nonce,
                          params, state, created_at, settled_at)
        SELECT a.bet_id, a.user_id, a.game, a.status, a.stake, a.multiplier, a.payout, a.pair_id, a.client_seed,
               a.nonce, a.params, a.state, a.at, CASE WHEN a.settled THEN a.at END
        FROM adv a ORDER BY a.ord
    ), r AS (
        SELECT c.ord, c.user_id,
               CASE WHEN c.verdict <> 'ok' THEN c.verdict WHEN upd.id IS NULL THEN 'stale' ELSE 'placed' END AS status,
               coalesce(upd.balance, c.bal) AS balance, c.player, c.hidden
        FROM chk c
        LEFT JOIN adv a ON a.bet_id = c.bet_id
        LEFT JOIN upd ON upd.id = a.user_id
    )
    SELECT r.ord, r.status, r.balance, r.player, r.hidden, cur.id, cur.user_id, cur.server_seed, cur.server_seed_hash,
           cur.client_seed, cur.nonce, cur.created_at
    FROM r
    LEFT JOIN LATERAL (
        (SELECT sp.id, sp.user_id, sp.server_seed, sp.server_seed_hash, sp.client_seed, sp.nonce, sp.created_at
         FROM pairs sp WHERE r.status = 'stale' AND sp.user_id = r.user_id AND sp.revealed_at IS NULL)
        UNION ALL
        (SELECT sp.id, sp.user_id, sp.server_seed, sp.server_seed_hash, sp.client_seed, sp.nonce, sp.created_at
         FROM seed_pairs sp WHERE r.status = 'stale' AND sp.user_id = r.user_id AND sp.revealed_at IS NULL)
        LIMIT 1
    ) cur ON true
    ORDER BY r.ord;
END
$$;
-- +goose StatementEnd

-- fairplay_place_bet (migrations 00006, 00008, 00009) keeps its signature
-- and answers for the releases before this one, which place a lone bet with
-- it, but is now a bet of one through fairplay_place_bets: its rules are
-- that function's.
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

-- +goose Down
-- The releases before this one still call fairplay_place_bet, which now
-- needs fairplay_place_bets: going down restores 00009's definition first.
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
DROP FUNCTION fairplay_place_bets(uuid[], uuid[], timestamptz[], uuid[], text[], bigint[], uuid[], text[], text[],
    bigint[], bigint[], bigint[], text[], text[], timestamptz[], boolean[], boolean);
