-- +goose Up
-- A bet's parameters and state are read as JSON only for the bets placed,
-- when they are inserted, not for every bet of the batch before the rules
-- are checked.
--
-- A bet is drawn before Postgres checks its stake, and a bet refused here
-- (a short balance, the limits, a game in progress) moves no nonce: the
-- player can have the same outcome drawn and refused again and again. The
-- state sent with a Blackjack deal is the settled outcome when the deal
-- ends the game at once (a natural: ~520 bytes, the deck's cards as text)
-- and the running game's when it does not (~240 bytes), and 00029's
-- function parsed it into jsonb before refusing it: a few microseconds more
-- for a refused natural, the signal play.evenWork hides on the server's
-- side (found by a review playing a hostile player; the refused row's state
-- is now never read: TestRefusedBetsStateIsNeverRead). Placed bets parse
-- the same text once, in the insert, as before.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_place_bets(
    p_users uuid[], p_sessions uuid[], p_live_since timestamptz[], p_pairs uuid[], p_client_seeds text[],
    p_nonces bigint[], p_bets uuid[], p_games text[], p_statuses text[], p_stakes bigint[], p_multipliers bigint[],
    p_payouts bigint[], p_params text[], p_states text[], p_at timestamptz[], p_settled boolean[], p_wait boolean)
RETURNS TABLE (ord bigint, status text, balance bigint, player text, hidden boolean, pair_id uuid, pair_user uuid,
               server_seed text, server_seed_hash text, client_seed text, nonce bigint, pair_created timestamptz)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    IF p_wait THEN
        PERFORM 1 FROM users u WHERE u.id = ANY(p_users) ORDER BY u.id FOR NO KEY UPDATE OF u;
    END IF;
    RETURN QUERY
    WITH b AS (
        SELECT user_id, session_id, live_since, pair_id, client_seed, nonce, bet_id, game, status, stake, multiplier,
               payout, params, state, at, settled, ord
        FROM unnest(p_users, p_sessions, p_live_since, p_pairs, p_client_seeds, p_nonces, p_bets, p_games, p_statuses,
                    p_stakes, p_multipliers, p_payouts, p_params, p_states, p_at, p_settled)
             WITH ORDINALITY AS b(user_id, session_id, live_since, pair_id, client_seed, nonce, bet_id, game, status,
                                  stake, multiplier, payout, params, state, at, settled, ord)
    ), pd AS MATERIALIZED (
        -- The periods' starts, once for the batch.
        SELECT fairplay_period_start('day') AS day, fairplay_period_start('week') AS week,
               fairplay_period_start('month') AS month
    ), locked AS MATERIALIZED (
        SELECT u.id, u.balance, u.deleted_at, u.username, u.hide_username, u.seed_pair, u.seed_client, u.seed_nonce,
               fairplay_play_rules_set(u) AS ruled, CASE WHEN fairplay_play_rules_set(u) THEN u END AS acct FROM users u
        WHERE u.id = ANY(p_users) FOR NO KEY UPDATE SKIP LOCKED
    ), live AS MATERIALIZED (
        SELECT id, user_id, revoked_at, last_used_at FROM sessions
        WHERE id = ANY(p_sessions) FOR KEY SHARE SKIP LOCKED
    ), chk AS (
        -- The rules of a bet, in the order of their answers.
        -- A player's second bet in the batch is busy: the player's first
        -- place in p_users is not the bet's own.
        SELECT b.*, l.balance AS bal, l.username AS player, l.hide_username AS hidden, l.seed_pair AS now_pair,
               l.seed_client AS now_client, l.seed_nonce AS now_nonce,
               CASE WHEN array_position(p_users, b.user_id) <> b.ord
                         OR (l.id IS NULL AND EXISTS (SELECT 1 FROM users x WHERE x.id = b.user_id))
                         THEN 'busy'
                    WHEN l.id IS NULL OR l.deleted_at IS NOT NULL
                         OR (b.session_id <> '00000000-0000-0000-0000-000000000000' AND NOT coalesce(
                                 s.user_id = b.user_id AND s.revoked_at IS NULL AND s.last_used_at >= b.live_since,
                                 EXISTS (SELECT 1 FROM sessions x
                                         WHERE x.id = b.session_id AND x.user_id = b.user_id AND x.revoked_at IS NULL
                                           AND x.last_used_at >= b.live_since)))
                         THEN 'gone'
                    WHEN l.balance > 1000000000000000000 THEN 'limit' -- play.MaxBalance
                    WHEN rg.refusal IS NOT NULL THEN rg.refusal
                    WHEN l.balance < b.stake THEN 'insufficient'
                    WHEN EXISTS (
                             SELECT 1 FROM bets x WHERE x.user_id = b.user_id AND x.game = b.game AND x.status = 'active')
                         THEN 'in_progress'
                    WHEN l.seed_pair IS DISTINCT FROM b.pair_id OR l.seed_client <> b.client_seed
                         OR l.seed_nonce <> b.nonce - 1 THEN 'stale'
                    ELSE 'ok' END AS verdict
        FROM b
        LEFT JOIN locked l ON l.id = b.user_id
        LEFT JOIN live s ON s.id = b.session_id
        LEFT JOIN LATERAL (SELECT fairplay_play_refusal(l.acct, b.stake) AS refusal WHERE l.ruled) rg ON true
    ), upd AS (
        -- The pair's nonce moves on in the player's row, checked again on
        -- the row as it is when updated. Only the columns the update needs
        -- come through the FROM (OFFSET 0 keeps the subquery whole):
        -- Postgres copies each joined row whole in case the updated row must
        -- be checked again.
        UPDATE users u SET balance = u.balance - a.stake + a.payout, seed_nonce = a.nonce,
            play_day = greatest(u.play_day, pd.day),
            play_day_wagered = fairplay_count(pd.day, u.play_day, u.play_day_wagered, a.stake),
            play_day_lost = fairplay_count(pd.day, u.play_day, u.play_day_lost, a.stake - a.payout),
            play_week = greatest(u.play_week, pd.week),
            play_week_wagered = fairplay_count(pd.week, u.play_week, u.play_week_wagered, a.stake),
            play_week_lost = fairplay_count(pd.week, u.play_week, u.play_week_lost, a.stake - a.payout),
            play_month = greatest(u.play_month, pd.month),
            play_month_wagered = fairplay_count(pd.month, u.play_month, u.play_month_wagered, a.stake),
            play_month_lost = fairplay_count(pd.month, u.play_month, u.play_month_lost, a.stake - a.payout)
        FROM (SELECT c.user_id, c.bet_id, c.stake, c.payout, c.pair_id, c.client_seed, c.nonce, c.at, c.ord
              FROM chk c WHERE c.verdict = 'ok' OFFSET 0) a, pd
        WHERE u.id = a.user_id AND u.seed_pair = a.pair_id AND u.seed_client = a.client_seed
          AND u.seed_nonce = a.nonce - 1
        -- What the ledger's entries and the answers need.
        RETURNING u.id, u.balance, a.bet_id, a.stake, a.payout, a.at, a.ord
    ), led AS (
        INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
        SELECT upd.id, e.kind, e.amount, e.after, upd.bet_id, '', upd.at
        FROM upd
        CROSS JOIN LATERAL (VALUES (1, 'bet', -upd.stake, upd.balance - upd.payout),
                                   (2, 'payout', upd.payout, upd.balance)) e(k, kind, amount, after)
        WHERE e.k = 1 OR upd.payout <> 0
        ORDER BY upd.ord, e.k
    ), ins AS (
        INSERT INTO bets (id, user_id, game, status, amount, multiplier, payout, seed_pair_id, client_seed, nonce,
                          params, state, created_at, settled_at)
        SELECT c.bet_id, c.user_id, c.game, c.status, c.stake, c.multiplier, c.payout, c.pair_id, c.client_seed,
               c.nonce, c.params::jsonb, c.state::jsonb, c.at, CASE WHEN c.settled THEN c.at END
        -- A bet is recorded where its money moved (in no particular order:
        -- one bet per player, and nothing reads the order of their rows).
        FROM chk c JOIN upd ON upd.ord = c.ord
    ), r AS (
        SELECT c.ord, c.user_id,
               CASE WHEN c.verdict <> 'ok' THEN c.verdict WHEN upd.id IS NULL THEN 'stale' ELSE 'placed' END AS status,
               coalesce(upd.balance, c.bal) AS balance, c.player, c.hidden, c.now_pair, c.now_client, c.now_nonce
        FROM chk c
        LEFT JOIN upd ON upd.ord = c.ord
    )
    SELECT r.ord, r.status, r.balance, r.player, r.hidden, cur.id, cur.user_id, cur.server_seed, cur.server_seed_hash,
           cur.client_seed, cur.nonce, cur.created_at
    FROM r
    LEFT JOIN LATERAL (
        -- The pair as the player's row has it now (the row read once
        -- locked); a pair made since the statement began is not seen here,
        -- and the caller reads it.
        SELECT sp.id, sp.user_id, sp.server_seed, sp.server_seed_hash, r.now_client AS client_seed,
               r.now_nonce AS nonce, sp.created_at
        FROM seed_pairs sp WHERE r.status = 'stale' AND sp.id = r.now_pair AND sp.user_id = r.user_id
    ) cur ON true;
    -- In no particular order: the caller matches each row to its bet by ord.
END
$$;
-- +goose StatementEnd

-- +goose Down
-- 00029's function.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_place_bets(
    p_users uuid[], p_sessions uuid[], p_live_since timestamptz[], p_pairs uuid[], p_client_seeds text[],
    p_nonces bigint[], p_bets uuid[], p_games text[], p_statuses text[], p_stakes bigint[], p_multipliers bigint[],
    p_payouts bigint[], p_params text[], p_states text[], p_at timestamptz[], p_settled boolean[], p_wait boolean)
RETURNS TABLE (ord bigint, status text, balance bigint, player text, hidden boolean, pair_id uuid, pair_user uuid,
               server_seed text, server_seed_hash text, client_seed text, nonce bigint, pair_created timestamptz)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    IF p_wait THEN
        PERFORM 1 FROM users u WHERE u.id = ANY(p_users) ORDER BY u.id FOR NO KEY UPDATE OF u;
    END IF;
    RETURN QUERY
    WITH b AS (
        SELECT user_id, session_id, live_since, pair_id, client_seed, nonce, bet_id, game, status, stake, multiplier,
               payout, params::jsonb AS params, state::jsonb AS state, at, settled, ord
        FROM unnest(p_users, p_sessions, p_live_since, p_pairs, p_client_seeds, p_nonces, p_bets, p_games, p_statuses,
                    p_stakes, p_multipliers, p_payouts, p_params, p_states, p_at, p_settled)
             WITH ORDINALITY AS b(user_id, session_id, live_since, pair_id, client_seed, nonce, bet_id, game, status,
                                  stake, multiplier, payout, params, state, at, settled, ord)
    ), pd AS MATERIALIZED (
        -- The periods' starts, once for the batch.
        SELECT fairplay_period_start('day') AS day, fairplay_period_start('week') AS week,
               fairplay_period_start('month') AS month
    ), locked AS MATERIALIZED (
        SELECT u.id, u.balance, u.deleted_at, u.username, u.hide_username, u.seed_pair, u.seed_client, u.seed_nonce,
               fairplay_play_rules_set(u) AS ruled, CASE WHEN fairplay_play_rules_set(u) THEN u END AS acct FROM users u
        WHERE u.id = ANY(p_users) FOR NO KEY UPDATE SKIP LOCKED
    ), live AS MATERIALIZED (
        SELECT id, user_id, revoked_at, last_used_at FROM sessions
        WHERE id = ANY(p_sessions) FOR KEY SHARE SKIP LOCKED
    ), chk AS (
        -- The rules of a bet, in the order of their answers.
        -- A player's second bet in the batch is busy: the player's first
        -- place in p_users is not the bet's own.
        SELECT b.*, l.balance AS bal, l.username AS player, l.hide_username AS hidden, l.seed_pair AS now_pair,
               l.seed_client AS now_client, l.seed_nonce AS now_nonce,
               CASE WHEN array_position(p_users, b.user_id) <> b.ord
                         OR (l.id IS NULL AND EXISTS (SELECT 1 FROM users x WHERE x.id = b.user_id))
                         THEN 'busy'
                    WHEN l.id IS NULL OR l.deleted_at IS NOT NULL
                         OR (b.session_id <> '00000000-0000-0000-0000-000000000000' AND NOT coalesce(
                                 s.user_id = b.user_id AND s.revoked_at IS NULL AND s.last_used_at >= b.live_since,
                                 EXISTS (SELECT 1 FROM sessions x
                                         WHERE x.id = b.session_id AND x.user_id = b.user_id AND x.revoked_at IS NULL
                                           AND x.last_used_at >= b.live_since)))
                         THEN 'gone'
                    WHEN l.balance > 1000000000000000000 THEN 'limit' -- play.MaxBalance
                    WHEN rg.refusal IS NOT NULL THEN rg.refusal
                    WHEN l.balance < b.stake THEN 'insufficient'
                    WHEN EXISTS (
                             SELECT 1 FROM bets x WHERE x.user_id = b.user_id AND x.game = b.game AND x.status = 'active')
                         THEN 'in_progress'
                    WHEN l.seed_pair IS DISTINCT FROM b.pair_id OR l.seed_client <> b.client_seed
                         OR l.seed_nonce <> b.nonce - 1 THEN 'stale'
                    ELSE 'ok' END AS verdict
        FROM b
        LEFT JOIN locked l ON l.id = b.user_id
        LEFT JOIN live s ON s.id = b.session_id
        LEFT JOIN LATERAL (SELECT fairplay_play_refusal(l.acct, b.stake) AS refusal WHERE l.ruled) rg ON true
    ), upd AS (
        -- The pair's nonce moves on in the player's row, checked again on
        -- the row as it is when updated. Only the columns the update needs
        -- come through the FROM (OFFSET 0 keeps the subquery whole):
        -- Postgres copies each joined row whole in case the updated row must
        -- be checked again.
        UPDATE users u SET balance = u.balance - a.stake + a.payout, seed_nonce = a.nonce,
            play_day = greatest(u.play_day, pd.day),
            play_day_wagered = fairplay_count(pd.day, u.play_day, u.play_day_wagered, a.stake),
            play_day_lost = fairplay_count(pd.day, u.play_day, u.play_day_lost, a.stake - a.payout),
            play_week = greatest(u.play_week, pd.week),
            play_week_wagered = fairplay_count(pd.week, u.play_week, u.play_week_wagered, a.stake),
            play_week_lost = fairplay_count(pd.week, u.play_week, u.play_week_lost, a.stake - a.payout),
            play_month = greatest(u.play_month, pd.month),
            play_month_wagered = fairplay_count(pd.month, u.play_month, u.play_month_wagered, a.stake),
            play_month_lost = fairplay_count(pd.month, u.play_month, u.play_month_lost, a.stake - a.payout)
        FROM (SELECT c.user_id, c.bet_id, c.stake, c.payout, c.pair_id, c.client_seed, c.nonce, c.at, c.ord
              FROM chk c WHERE c.verdict = 'ok' OFFSET 0) a, pd
        WHERE u.id = a.user_id AND u.seed_pair = a.pair_id AND u.seed_client = a.client_seed
          AND u.seed_nonce = a.nonce - 1
        -- What the ledger's entries and the answers need.
        RETURNING u.id, u.balance, a.bet_id, a.stake, a.payout, a.at, a.ord
    ), led AS (
        INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
        SELECT upd.id, e.kind, e.amount, e.after, upd.bet_id, '', upd.at
        FROM upd
        CROSS JOIN LATERAL (VALUES (1, 'bet', -upd.stake, upd.balance - upd.payout),
                                   (2, 'payout', upd.payout, upd.balance)) e(k, kind, amount, after)
        WHERE e.k = 1 OR upd.payout <> 0
        ORDER BY upd.ord, e.k
    ), ins AS (
        INSERT INTO bets (id, user_id, game, status, amount, multiplier, payout, seed_pair_id, client_seed, nonce,
                          params, state, created_at, settled_at)
        SELECT c.bet_id, c.user_id, c.game, c.status, c.stake, c.multiplier, c.payout, c.pair_id, c.client_seed,
               c.nonce, c.params, c.state, c.at, CASE WHEN c.settled THEN c.at END
        -- A bet is recorded where its money moved (in no particular order:
        -- one bet per player, and nothing reads the order of their rows).
        FROM chk c JOIN upd ON upd.ord = c.ord
    ), r AS (
        SELECT c.ord, c.user_id,
               CASE WHEN c.verdict <> 'ok' THEN c.verdict WHEN upd.id IS NULL THEN 'stale' ELSE 'placed' END AS status,
               coalesce(upd.balance, c.bal) AS balance, c.player, c.hidden, c.now_pair, c.now_client, c.now_nonce
        FROM chk c
        LEFT JOIN upd ON upd.ord = c.ord
    )
    SELECT r.ord, r.status, r.balance, r.player, r.hidden, cur.id, cur.user_id, cur.server_seed, cur.server_seed_hash,
           cur.client_seed, cur.nonce, cur.created_at
    FROM r
    LEFT JOIN LATERAL (
        -- The pair as the player's row has it now (the row read once
        -- locked); a pair made since the statement began is not seen here,
        -- and the caller reads it.
        SELECT sp.id, sp.user_id, sp.server_seed, sp.server_seed_hash, r.now_client AS client_seed,
               r.now_nonce AS nonce, sp.created_at
        FROM seed_pairs sp WHERE r.status = 'stale' AND sp.id = r.now_pair AND sp.user_id = r.user_id
    ) cur ON true;
    -- In no particular order: the caller matches each row to its bet by ord.
END
$$;
-- +goose StatementEnd
