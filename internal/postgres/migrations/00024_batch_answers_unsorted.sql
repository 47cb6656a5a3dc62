-- +goose Up
-- The batch functions answer in no particular order.
--
-- fairplay_place_bets (migration 00022) inserted a batch's bets sorted by
-- their place in the batch and sorted its answers the same way, and
-- fairplay_play_actions (00023) sorted its answers: three sorts of every
-- row of a batch, the bets' with their parameters and outcome, and a merge
-- join the last one led the planner to. Nothing needs the order. The
-- callers (byOrd in internal/postgres/batch.go) put each answer in its
-- request's place by its ord and refuse a batch answered twice or short;
-- a batch holds at most one bet of a player, so no player's bets or ledger
-- entries are written in a different order among themselves (the ledger's
-- entries of one bet, its stake before its payout, stay sorted).
--
-- make bench-sql, instructions per bet in fairplay_place_bets (batches of
-- 32 dice bets): 345,247 before, 338,171 after (-2.0%);
-- PGCOST_SCENARIO=action-batches, per action in fairplay_play_actions:
-- 251,669 before, 248,981 after (-1.1%).
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
    ), pd AS MATERIALIZED (
        -- The periods' starts, once for the batch.
        SELECT fairplay_period_start('day') AS day, fairplay_period_start('week') AS week,
               fairplay_period_start('month') AS month
    ), locked AS MATERIALIZED (
        SELECT u.id, u.balance, u.deleted_at, u.username, u.hide_username, fairplay_play_rules_set(u) AS ruled,
               CASE WHEN fairplay_play_rules_set(u) THEN u END AS acct FROM users u
        WHERE u.id = ANY(p_users) FOR NO KEY UPDATE SKIP LOCKED
    ), live AS MATERIALIZED (
        SELECT id, user_id, revoked_at, last_used_at FROM sessions
        WHERE id = ANY(p_sessions) FOR KEY SHARE SKIP LOCKED
    ), pairs AS MATERIALIZED (
        SELECT id, user_id, server_seed, server_seed_hash, client_seed, nonce, created_at, revealed_at
        FROM seed_pairs WHERE id = ANY(p_pairs) FOR NO KEY UPDATE SKIP LOCKED
    ), chk AS (
        -- The rules of a bet, in the order of their answers.
        -- A player's second bet in the batch is busy: the player's first
        -- place in p_users is not the bet's own.
        SELECT b.*, l.balance AS bal, l.username AS player, l.hide_username AS hidden,
               CASE WHEN array_position(p_users, b.user_id) <> b.ord
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
                    WHEN rg.refusal IS NOT NULL THEN rg.refusal
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
        LEFT JOIN LATERAL (SELECT fairplay_play_refusal(l.acct, b.stake) AS refusal WHERE l.ruled) rg ON true
    ), adv AS (
        -- Only the columns the updates need come through the FROM (OFFSET 0
        -- keeps the subquery whole): Postgres copies each joined row whole
        -- in case the updated row must be checked again.
        UPDATE seed_pairs sp SET nonce = c.nonce
        FROM (SELECT c.user_id, c.bet_id, c.stake, c.payout, c.pair_id, c.client_seed, c.nonce, c.at, c.ord
              FROM chk c WHERE c.verdict = 'ok' OFFSET 0) c
        WHERE sp.id = c.pair_id AND sp.user_id = c.user_id AND sp.nonce = c.nonce - 1
          AND sp.revealed_at IS NULL AND sp.client_seed = c.client_seed
        RETURNING c.user_id, c.bet_id, c.stake, c.payout, c.at, c.ord
    ), upd AS (
        UPDATE users u SET balance = u.balance - a.stake + a.payout,
            play_day = greatest(u.play_day, pd.day),
            play_day_wagered = fairplay_count(pd.day, u.play_day, u.play_day_wagered, a.stake),
            play_day_lost = fairplay_count(pd.day, u.play_day, u.play_day_lost, a.stake - a.payout),
            play_week = greatest(u.play_week, pd.week),
            play_week_wagered = fairplay_count(pd.week, u.play_week, u.play_week_wagered, a.stake),
            play_week_lost = fairplay_count(pd.week, u.play_week, u.play_week_lost, a.stake - a.payout),
            play_month = greatest(u.play_month, pd.month),
            play_month_wagered = fairplay_count(pd.month, u.play_month, u.play_month_wagered, a.stake),
            play_month_lost = fairplay_count(pd.month, u.play_month, u.play_month_lost, a.stake - a.payout)
        FROM adv a, pd
        WHERE u.id = a.user_id
        -- What the ledger's entries and the answers need, so neither joins
        -- adv with upd again.
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
               coalesce(upd.balance, c.bal) AS balance, c.player, c.hidden
        FROM chk c
        LEFT JOIN upd ON upd.ord = c.ord
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
    ) cur ON true;
    -- In no particular order: the caller matches each row to its bet by ord.
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_play_actions(
    p_users uuid[], p_sessions uuid[], p_live_since timestamptz[], p_bets uuid[], p_games text[],
    p_old_amounts bigint[], p_old_params text[], p_old_states text[], p_stakes bigint[], p_payouts bigint[],
    p_statuses text[], p_amounts bigint[], p_multipliers bigint[], p_bet_payouts bigint[], p_params text[],
    p_states text[], p_at timestamptz[], p_settled_at timestamptz[])
RETURNS TABLE (ord bigint, status text, balance bigint, player text, hidden boolean, refusal text)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH a AS (
        SELECT user_id, session_id, live_since, bet_id, game, old_amount, old_params::jsonb AS old_params,
               old_state::jsonb AS old_state, stake, payout, status, amount, multiplier, bet_payout,
               params::jsonb AS params, state::jsonb AS state, at, settled_at, ord,
               stake <> 0 OR payout <> 0 AS moves,
               array_position(p_users, user_id) <> ord AS again
        FROM unnest(p_users, p_sessions, p_live_since, p_bets, p_games, p_old_amounts, p_old_params, p_old_states,
                    p_stakes, p_payouts, p_statuses, p_amounts, p_multipliers, p_bet_payouts, p_params, p_states,
                    p_at, p_settled_at)
             WITH ORDINALITY AS a(user_id, session_id, live_since, bet_id, game, old_amount, old_params, old_state,
                                  stake, payout, status, amount, multiplier, bet_payout, params, state, at,
                                  settled_at, ord)
    ), pd AS MATERIALIZED (
        SELECT fairplay_period_start('day') AS day, fairplay_period_start('week') AS week,
               fairplay_period_start('month') AS month
    ), s AS MATERIALIZED (
        -- The session found by its id and its player compared after, as
        -- actionSQL does.
        SELECT a.ord, a.session_id = '00000000-0000-0000-0000-000000000000' OR coalesce((
                   SELECT x.user_id = a.user_id FROM sessions x JOIN users y ON y.id = x.user_id
                   WHERE x.id = a.session_id AND x.revoked_at IS NULL AND x.last_used_at >= a.live_since
                     AND y.deleted_at IS NULL), false) AS live
        FROM a
    ), bl AS MATERIALIZED (
        -- The games' rows, locked without waiting. Only the rows themselves
        -- are locked and compared with the copies after (g): a row locked
        -- by a join would make Postgres copy every joined row in case the
        -- locked one must be checked again.
        SELECT b.id, b.user_id, b.game, b.amount, b.params, b.state FROM bets b
        WHERE b.id = ANY(p_bets) AND b.status = 'active'
        FOR UPDATE OF b SKIP LOCKED
    ), g AS MATERIALIZED (
        -- The actions whose session is live and whose game is the player's
        -- running game of that kind, still the copy.
        SELECT a.ord, a.user_id, a.bet_id, a.moves FROM a JOIN s ON s.ord = a.ord JOIN bl ON bl.id = a.bet_id
        WHERE s.live AND NOT a.again AND bl.user_id = a.user_id AND bl.game = a.game
          AND bl.amount = a.old_amount AND bl.params = a.old_params AND bl.state = a.old_state
    ), m AS MATERIALIZED (
        -- The players' rows of every action held, locked without waiting,
        -- whether its money moves or not (see the migration's comment),
        -- each found by its key from g's rows (a scan by p_users under
        -- the join would sort the array again for every row), with
        -- the limits' refusal of an extra stake decided on the row as it is
        -- once locked (the version u changes; a row changed since the
        -- statement began is read again as it is now), not as the
        -- statement's snapshot had it.
        SELECT y.id, y.balance, CASE WHEN k.stake <> 0 THEN fairplay_stake_refusal(y, k.stake) END AS why
        FROM users y JOIN (SELECT a.user_id, a.stake FROM a JOIN g ON g.ord = a.ord) k
             ON k.user_id = y.id
        FOR NO KEY UPDATE OF y SKIP LOCKED
    ), mv AS MATERIALIZED (
        SELECT a.ord, a.user_id, a.stake, a.payout, m.why FROM a JOIN g ON g.ord = a.ord JOIN m ON m.id = a.user_id
        WHERE a.moves
    ), u AS (
        UPDATE users y SET balance = y.balance - mv.stake + mv.payout,
            play_day = greatest(y.play_day, pd.day),
            play_day_wagered = fairplay_count(pd.day, y.play_day, y.play_day_wagered, mv.stake),
            play_day_lost = fairplay_count(pd.day, y.play_day, y.play_day_lost, mv.stake - mv.payout),
            play_week = greatest(y.play_week, pd.week),
            play_week_wagered = fairplay_count(pd.week, y.play_week, y.play_week_wagered, mv.stake),
            play_week_lost = fairplay_count(pd.week, y.play_week, y.play_week_lost, mv.stake - mv.payout),
            play_month = greatest(y.play_month, pd.month),
            play_month_wagered = fairplay_count(pd.month, y.play_month, y.play_month_wagered, mv.stake),
            play_month_lost = fairplay_count(pd.month, y.play_month, y.play_month_lost, mv.stake - mv.payout)
        FROM mv, pd
        WHERE y.id = mv.user_id AND y.balance - mv.stake >= 0 AND mv.why IS NULL
        RETURNING mv.ord, y.balance
    ), l AS (
        INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
        SELECT a.user_id, e.kind, e.amount, e.after, a.bet_id, '', a.at
        FROM a JOIN u ON u.ord = a.ord
        CROSS JOIN LATERAL (VALUES (1, 'bet', -a.stake, u.balance - a.payout),
                                   (2, 'payout', a.payout, u.balance)) e(k, kind, amount, after)
        WHERE e.amount <> 0
        ORDER BY a.ord, e.k
    ), sv AS MATERIALIZED (
        -- What is saved: the bet of every action held whose player's row
        -- it holds and whose money moved (or none had to).
        SELECT a.ord, a.bet_id, a.status, a.amount, a.multiplier, a.bet_payout, a.params, a.state, a.settled_at
        FROM a JOIN g ON g.ord = a.ord JOIN m ON m.id = a.user_id
        WHERE NOT a.moves OR EXISTS (SELECT 1 FROM u WHERE u.ord = a.ord)
    ), w AS (
        UPDATE bets b SET status = sv.status, amount = sv.amount, multiplier = sv.multiplier, payout = sv.bet_payout,
                          params = sv.params, state = sv.state, settled_at = sv.settled_at
        FROM sv
        WHERE b.id = sv.bet_id AND b.status = 'active'
        RETURNING sv.ord
    )
    SELECT a.ord,
           CASE WHEN NOT s.live THEN 'gone'
                WHEN a.again THEN 'busy'
                WHEN g.ord IS NULL THEN 'stale'
                WHEN mm.id IS NULL THEN 'busy'
                WHEN a.moves AND u.ord IS NULL AND mm.why IS NOT NULL THEN 'refused'
                WHEN a.moves AND u.ord IS NULL THEN 'short'
                WHEN w.ord IS NULL THEN 'unsaved'
                ELSE 'saved' END,
           coalesce(u.balance, mm.balance, x.balance, 0), coalesce(x.username, ''), coalesce(x.hide_username, false),
           CASE WHEN a.moves AND u.ord IS NULL THEN mm.why END
    FROM a
    JOIN s ON s.ord = a.ord
    LEFT JOIN g ON g.ord = a.ord
    LEFT JOIN m mm ON mm.id = a.user_id AND g.ord IS NOT NULL
    LEFT JOIN u ON u.ord = a.ord
    LEFT JOIN w ON w.ord = a.ord
    LEFT JOIN users x ON x.id = a.user_id AND x.id = ANY(p_users);
    -- In no particular order: the caller matches each row to its action by ord.
END
$$;
-- +goose StatementEnd

-- +goose Down
-- The functions as 00022 (bets) and 00023 (actions) left them.
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
    ), pd AS MATERIALIZED (
        -- The periods' starts, once for the batch.
        SELECT fairplay_period_start('day') AS day, fairplay_period_start('week') AS week,
               fairplay_period_start('month') AS month
    ), locked AS MATERIALIZED (
        SELECT u.id, u.balance, u.deleted_at, u.username, u.hide_username, fairplay_play_rules_set(u) AS ruled,
               CASE WHEN fairplay_play_rules_set(u) THEN u END AS acct FROM users u
        WHERE u.id = ANY(p_users) FOR NO KEY UPDATE SKIP LOCKED
    ), live AS MATERIALIZED (
        SELECT id, user_id, revoked_at, last_used_at FROM sessions
        WHERE id = ANY(p_sessions) FOR KEY SHARE SKIP LOCKED
    ), pairs AS MATERIALIZED (
        SELECT id, user_id, server_seed, server_seed_hash, client_seed, nonce, created_at, revealed_at
        FROM seed_pairs WHERE id = ANY(p_pairs) FOR NO KEY UPDATE SKIP LOCKED
    ), chk AS (
        -- The rules of a bet, in the order of their answers.
        -- A player's second bet in the batch is busy: the player's first
        -- place in p_users is not the bet's own.
        SELECT b.*, l.balance AS bal, l.username AS player, l.hide_username AS hidden,
               CASE WHEN array_position(p_users, b.user_id) <> b.ord
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
                    WHEN rg.refusal IS NOT NULL THEN rg.refusal
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
        LEFT JOIN LATERAL (SELECT fairplay_play_refusal(l.acct, b.stake) AS refusal WHERE l.ruled) rg ON true
    ), adv AS (
        -- Only the columns the updates need come through the FROM (OFFSET 0
        -- keeps the subquery whole): Postgres copies each joined row whole
        -- in case the updated row must be checked again.
        UPDATE seed_pairs sp SET nonce = c.nonce
        FROM (SELECT c.user_id, c.bet_id, c.stake, c.payout, c.pair_id, c.client_seed, c.nonce, c.at, c.ord
              FROM chk c WHERE c.verdict = 'ok' OFFSET 0) c
        WHERE sp.id = c.pair_id AND sp.user_id = c.user_id AND sp.nonce = c.nonce - 1
          AND sp.revealed_at IS NULL AND sp.client_seed = c.client_seed
        RETURNING c.user_id, c.bet_id, c.stake, c.payout, c.at, c.ord
    ), upd AS (
        UPDATE users u SET balance = u.balance - a.stake + a.payout,
            play_day = greatest(u.play_day, pd.day),
            play_day_wagered = fairplay_count(pd.day, u.play_day, u.play_day_wagered, a.stake),
            play_day_lost = fairplay_count(pd.day, u.play_day, u.play_day_lost, a.stake - a.payout),
            play_week = greatest(u.play_week, pd.week),
            play_week_wagered = fairplay_count(pd.week, u.play_week, u.play_week_wagered, a.stake),
            play_week_lost = fairplay_count(pd.week, u.play_week, u.play_week_lost, a.stake - a.payout),
            play_month = greatest(u.play_month, pd.month),
            play_month_wagered = fairplay_count(pd.month, u.play_month, u.play_month_wagered, a.stake),
            play_month_lost = fairplay_count(pd.month, u.play_month, u.play_month_lost, a.stake - a.payout)
        FROM adv a, pd
        WHERE u.id = a.user_id
        -- What the ledger's entries and the answers need, so neither joins
        -- adv with upd again.
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
        -- A bet is recorded where its money moved.
        FROM chk c JOIN upd ON upd.ord = c.ord ORDER BY c.ord
    ), r AS (
        SELECT c.ord, c.user_id,
               CASE WHEN c.verdict <> 'ok' THEN c.verdict WHEN upd.id IS NULL THEN 'stale' ELSE 'placed' END AS status,
               coalesce(upd.balance, c.bal) AS balance, c.player, c.hidden
        FROM chk c
        LEFT JOIN upd ON upd.ord = c.ord
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_play_actions(
    p_users uuid[], p_sessions uuid[], p_live_since timestamptz[], p_bets uuid[], p_games text[],
    p_old_amounts bigint[], p_old_params text[], p_old_states text[], p_stakes bigint[], p_payouts bigint[],
    p_statuses text[], p_amounts bigint[], p_multipliers bigint[], p_bet_payouts bigint[], p_params text[],
    p_states text[], p_at timestamptz[], p_settled_at timestamptz[])
RETURNS TABLE (ord bigint, status text, balance bigint, player text, hidden boolean, refusal text)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH a AS (
        SELECT user_id, session_id, live_since, bet_id, game, old_amount, old_params::jsonb AS old_params,
               old_state::jsonb AS old_state, stake, payout, status, amount, multiplier, bet_payout,
               params::jsonb AS params, state::jsonb AS state, at, settled_at, ord,
               stake <> 0 OR payout <> 0 AS moves,
               array_position(p_users, user_id) <> ord AS again
        FROM unnest(p_users, p_sessions, p_live_since, p_bets, p_games, p_old_amounts, p_old_params, p_old_states,
                    p_stakes, p_payouts, p_statuses, p_amounts, p_multipliers, p_bet_payouts, p_params, p_states,
                    p_at, p_settled_at)
             WITH ORDINALITY AS a(user_id, session_id, live_since, bet_id, game, old_amount, old_params, old_state,
                                  stake, payout, status, amount, multiplier, bet_payout, params, state, at,
                                  settled_at, ord)
    ), pd AS MATERIALIZED (
        SELECT fairplay_period_start('day') AS day, fairplay_period_start('week') AS week,
               fairplay_period_start('month') AS month
    ), s AS MATERIALIZED (
        -- The session found by its id and its player compared after, as
        -- actionSQL does.
        SELECT a.ord, a.session_id = '00000000-0000-0000-0000-000000000000' OR coalesce((
                   SELECT x.user_id = a.user_id FROM sessions x JOIN users y ON y.id = x.user_id
                   WHERE x.id = a.session_id AND x.revoked_at IS NULL AND x.last_used_at >= a.live_since
                     AND y.deleted_at IS NULL), false) AS live
        FROM a
    ), bl AS MATERIALIZED (
        -- The games' rows, locked without waiting. Only the rows themselves
        -- are locked and compared with the copies after (g): a row locked
        -- by a join would make Postgres copy every joined row in case the
        -- locked one must be checked again.
        SELECT b.id, b.user_id, b.game, b.amount, b.params, b.state FROM bets b
        WHERE b.id = ANY(p_bets) AND b.status = 'active'
        FOR UPDATE OF b SKIP LOCKED
    ), g AS MATERIALIZED (
        -- The actions whose session is live and whose game is the player's
        -- running game of that kind, still the copy.
        SELECT a.ord, a.user_id, a.bet_id, a.moves FROM a JOIN s ON s.ord = a.ord JOIN bl ON bl.id = a.bet_id
        WHERE s.live AND NOT a.again AND bl.user_id = a.user_id AND bl.game = a.game
          AND bl.amount = a.old_amount AND bl.params = a.old_params AND bl.state = a.old_state
    ), m AS MATERIALIZED (
        -- The players' rows of every action held, locked without waiting,
        -- whether its money moves or not (see the migration's comment),
        -- each found by its key from g's rows (a scan by p_users under
        -- the join would sort the array again for every row), with
        -- the limits' refusal of an extra stake decided on the row as it is
        -- once locked (the version u changes; a row changed since the
        -- statement began is read again as it is now), not as the
        -- statement's snapshot had it.
        SELECT y.id, y.balance, CASE WHEN k.stake <> 0 THEN fairplay_stake_refusal(y, k.stake) END AS why
        FROM users y JOIN (SELECT a.user_id, a.stake FROM a JOIN g ON g.ord = a.ord) k
             ON k.user_id = y.id
        FOR NO KEY UPDATE OF y SKIP LOCKED
    ), mv AS MATERIALIZED (
        SELECT a.ord, a.user_id, a.stake, a.payout, m.why FROM a JOIN g ON g.ord = a.ord JOIN m ON m.id = a.user_id
        WHERE a.moves
    ), u AS (
        UPDATE users y SET balance = y.balance - mv.stake + mv.payout,
            play_day = greatest(y.play_day, pd.day),
            play_day_wagered = fairplay_count(pd.day, y.play_day, y.play_day_wagered, mv.stake),
            play_day_lost = fairplay_count(pd.day, y.play_day, y.play_day_lost, mv.stake - mv.payout),
            play_week = greatest(y.play_week, pd.week),
            play_week_wagered = fairplay_count(pd.week, y.play_week, y.play_week_wagered, mv.stake),
            play_week_lost = fairplay_count(pd.week, y.play_week, y.play_week_lost, mv.stake - mv.payout),
            play_month = greatest(y.play_month, pd.month),
            play_month_wagered = fairplay_count(pd.month, y.play_month, y.play_month_wagered, mv.stake),
            play_month_lost = fairplay_count(pd.month, y.play_month, y.play_month_lost, mv.stake - mv.payout)
        FROM mv, pd
        WHERE y.id = mv.user_id AND y.balance - mv.stake >= 0 AND mv.why IS NULL
        RETURNING mv.ord, y.balance
    ), l AS (
        INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
        SELECT a.user_id, e.kind, e.amount, e.after, a.bet_id, '', a.at
        FROM a JOIN u ON u.ord = a.ord
        CROSS JOIN LATERAL (VALUES (1, 'bet', -a.stake, u.balance - a.payout),
                                   (2, 'payout', a.payout, u.balance)) e(k, kind, amount, after)
        WHERE e.amount <> 0
        ORDER BY a.ord, e.k
    ), sv AS MATERIALIZED (
        -- What is saved: the bet of every action held whose player's row
        -- it holds and whose money moved (or none had to).
        SELECT a.ord, a.bet_id, a.status, a.amount, a.multiplier, a.bet_payout, a.params, a.state, a.settled_at
        FROM a JOIN g ON g.ord = a.ord JOIN m ON m.id = a.user_id
        WHERE NOT a.moves OR EXISTS (SELECT 1 FROM u WHERE u.ord = a.ord)
    ), w AS (
        UPDATE bets b SET status = sv.status, amount = sv.amount, multiplier = sv.multiplier, payout = sv.bet_payout,
                          params = sv.params, state = sv.state, settled_at = sv.settled_at
        FROM sv
        WHERE b.id = sv.bet_id AND b.status = 'active'
        RETURNING sv.ord
    )
    SELECT a.ord,
           CASE WHEN NOT s.live THEN 'gone'
                WHEN a.again THEN 'busy'
                WHEN g.ord IS NULL THEN 'stale'
                WHEN mm.id IS NULL THEN 'busy'
                WHEN a.moves AND u.ord IS NULL AND mm.why IS NOT NULL THEN 'refused'
                WHEN a.moves AND u.ord IS NULL THEN 'short'
                WHEN w.ord IS NULL THEN 'unsaved'
                ELSE 'saved' END,
           coalesce(u.balance, mm.balance, x.balance, 0), coalesce(x.username, ''), coalesce(x.hide_username, false),
           CASE WHEN a.moves AND u.ord IS NULL THEN mm.why END
    FROM a
    JOIN s ON s.ord = a.ord
    LEFT JOIN g ON g.ord = a.ord
    LEFT JOIN m mm ON mm.id = a.user_id AND g.ord IS NOT NULL
    LEFT JOIN u ON u.ord = a.ord
    LEFT JOIN w ON w.ord = a.ord
    LEFT JOIN users x ON x.id = a.user_id AND x.id = ANY(p_users)
    ORDER BY a.ord;
END
$$;
-- +goose StatementEnd
