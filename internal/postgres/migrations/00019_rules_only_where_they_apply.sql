-- +goose Up
-- Three costs every bet paid in Postgres, counted with make bench-sql
-- (hack/pgcost.sh: callgrind, batches of 32 dice bets, the same count every
-- run): 627,248 instructions per bet before this migration, 594,918 after
-- (572,849 with the one plan below).
--
-- The player's own limits (migration 00015). fairplay_place_bets evaluated
-- fairplay_play_refusal for every bet, and for a player who has set nothing
-- that is twelve period sums and limits compared with NULL, read from the
-- player's whole row: 17,400 instructions per bet (2.8%). A player with no
-- limit, break or self-exclusion, now or waiting (fairplay_play_rules_set is
-- false), can never be refused by the rule, so the batch evaluates it only
-- for the others. The play counters are still kept for every player, so a
-- limit set mid-period still counts what was played in it.
-- +goose StatementBegin
CREATE FUNCTION fairplay_play_rules_set(u users) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT u.excluded_until IS NOT NULL OR u.break_until IS NOT NULL
        OR u.loss_limit_day IS NOT NULL OR u.loss_limit_week IS NOT NULL OR u.loss_limit_month IS NOT NULL
        OR u.wager_limit_day IS NOT NULL OR u.wager_limit_week IS NOT NULL OR u.wager_limit_month IS NOT NULL
        OR u.next_loss_limit_day IS NOT NULL OR u.next_loss_limit_week IS NOT NULL
        OR u.next_loss_limit_month IS NOT NULL OR u.next_wager_limit_day IS NOT NULL
        OR u.next_wager_limit_week IS NOT NULL OR u.next_wager_limit_month IS NOT NULL
$$;
-- +goose StatementEnd

-- The play counters: fairplay_usage found the period's start for each of
-- the six counts of every bet, and the counters' own periods three more
-- times: 15,000 instructions per bet (2.5%). The batch now finds the
-- three starts once (fairplay_period_start) and counts with fairplay_count;
-- fairplay_usage, which the game actions and the limits' rule call, is the
-- two together, so a count is defined once.
-- +goose StatementBegin
CREATE FUNCTION fairplay_period_start(p_period text) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT date_trunc(p_period, now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
$$;
-- +goose StatementEnd

-- fairplay_count is a period's count after adding p_add: what it was
-- (p_used), if p_start is the current period's start p_period_start (or
-- later: another transaction began the next one), else zero.
-- +goose StatementBegin
CREATE FUNCTION fairplay_count(p_period_start timestamptz, p_start timestamptz, p_used bigint, p_add bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_start >= p_period_start THEN p_used ELSE 0 END + p_add
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_usage(p_period text, p_start timestamptz, p_used bigint, p_add bigint) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT fairplay_count(fairplay_period_start(p_period), p_start, p_used, p_add)
$$;
-- +goose StatementEnd

-- The statement's plan. PL/pgSQL planned fairplay_place_bets' statement
-- again on every call (its array arguments made a custom plan look cheaper
-- than the generic one), about a million instructions per batch: 23,600
-- per bet in batches of 32, 47,000 in the batches of 16 that 32 players
-- make. Every row the statement reads it finds by its key (the players, their
-- sessions and seed pairs by id, a running game by player and game), so the
-- plan built once per connection (plan_cache_mode = force_generic_plan) is
-- as good as any, provided it is made of index scans whatever the
-- statistics of a young or small database say: without enable_seqscan =
-- off the plans, the custom ones before too, scanned whole tables there
-- (TestBetBatchReadsOnlyItsRows), and the generic plan over the bench's 64
-- players cost 1,052,060 instructions per bet against the custom plans'
-- 482,497 (before the changes above). With both settings: 427,325 per bet
-- for the function, 572,849 in all. The settings hold for whatever runs
-- inside the call, so also for the triggers its inserts and updates fire
-- (today bets_stats_insert alone, which reads only its transition table);
-- a trigger or foreign key added to these tables later is planned with them
-- too. To see the function's plans otherwise, ALTER FUNCTION ... RESET.
--
-- fairplay_place_bets (migration 00015) with the rule evaluated only for a
-- player who has set one, the periods' starts found once, and one plan.
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
        UPDATE seed_pairs sp SET nonce = c.nonce
        FROM chk c
        WHERE c.verdict = 'ok' AND sp.id = c.pair_id AND sp.user_id = c.user_id AND sp.nonce = c.nonce - 1
          AND sp.revealed_at IS NULL AND sp.client_seed = c.client_seed
        RETURNING c.user_id, c.bet_id, c.game, c.status, c.stake, c.multiplier, c.payout, c.pair_id, c.client_seed,
                  c.nonce, c.params, c.state, c.at, c.settled, c.ord
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
        FROM adv a, pd WHERE u.id = a.user_id
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

-- +goose Down
-- fairplay_place_bets as migration 00015 left it.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_place_bets(
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
        SELECT u.id, u.balance, u.deleted_at, u.username, u.hide_username, u AS acct FROM users u
        WHERE u.id = ANY(p_users) FOR NO KEY UPDATE SKIP LOCKED
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
        LEFT JOIN LATERAL (SELECT fairplay_play_refusal(l.acct, b.stake) AS refusal) rg ON true
    ), adv AS (
        UPDATE seed_pairs sp SET nonce = c.nonce
        FROM chk c
        WHERE c.verdict = 'ok' AND sp.id = c.pair_id AND sp.user_id = c.user_id AND sp.nonce = c.nonce - 1
          AND sp.revealed_at IS NULL AND sp.client_seed = c.client_seed
        RETURNING c.user_id, c.bet_id, c.game, c.status, c.stake, c.multiplier, c.payout, c.pair_id, c.client_seed,
                  c.nonce, c.params, c.state, c.at, c.settled, c.ord
    ), upd AS (
        UPDATE users u SET balance = u.balance - a.stake + a.payout,
            play_day = greatest(u.play_day, date_trunc('day', now(), 'UTC')),
            play_day_wagered = fairplay_usage('day', u.play_day, u.play_day_wagered, a.stake),
            play_day_lost = fairplay_usage('day', u.play_day, u.play_day_lost, a.stake - a.payout),
            play_week = greatest(u.play_week, date_trunc('week', now(), 'UTC')),
            play_week_wagered = fairplay_usage('week', u.play_week, u.play_week_wagered, a.stake),
            play_week_lost = fairplay_usage('week', u.play_week, u.play_week_lost, a.stake - a.payout),
            play_month = greatest(u.play_month, date_trunc('month', now(), 'UTC')),
            play_month_wagered = fairplay_usage('month', u.play_month, u.play_month_wagered, a.stake),
            play_month_lost = fairplay_usage('month', u.play_month, u.play_month_lost, a.stake - a.payout)
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

DROP FUNCTION fairplay_play_rules_set(users);

-- fairplay_usage as migration 00017 left it.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_usage(p_period text, p_start timestamptz, p_used bigint, p_add bigint) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_start >= date_trunc(p_period, now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' THEN p_used ELSE 0 END
           + p_add
$$;
-- +goose StatementEnd
DROP FUNCTION fairplay_count(timestamptz, timestamptz, bigint, bigint);
DROP FUNCTION fairplay_period_start(text);
