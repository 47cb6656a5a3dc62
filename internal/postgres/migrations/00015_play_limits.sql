-- +goose Up
-- Responsible gambling (issue 19): limits a player sets on their own play,
-- a break and self-exclusion, each enforced in the statement that places a
-- bet (fairplay_place_bets, below) and in the one that takes a running game's
-- extra stake (a Blackjack double, split or insurance: saveGameSQL in
-- internal/postgres/play.go), so on every replica and with no extra round
-- trip. They live on the player's row, which both statements lock and read
-- as it is now, so no bet can slip past a limit being set.
--
-- Limits, in units of 1e-8 (NULL: none): loss_limit_* bound the net loss
-- (stakes minus payouts) and wager_limit_* the stakes, per UTC day, ISO week
-- (from Monday) and calendar month. A tighter limit applies at once; a
-- looser one (or none) waits 24 hours: next_* are the limits as they will be
-- from next_limits_from (all six, NULL where none), until then loss_limit_*
-- and wager_limit_* apply. break_until and excluded_until ('infinity':
-- permanent) refuse every stake until then; sign-in, history and cashing out
-- a running game still work; neither can be shortened, by the player or an
-- admin. reality_check_minutes is how often the app reminds the player of
-- time played and net result (NULL: never).
--
-- play_* count the player's stakes and net loss in the current UTC day, week
-- and month (play_day etc. the period's start; a bet in a later period starts
-- it again from zero). They are counted for every player, with the balance
-- in the same update, so a limit set mid-period counts what was already
-- played in it (since this migration: earlier play is not counted).
ALTER TABLE users
    ADD COLUMN loss_limit_day         bigint,
    ADD COLUMN loss_limit_week        bigint,
    ADD COLUMN loss_limit_month       bigint,
    ADD COLUMN wager_limit_day        bigint,
    ADD COLUMN wager_limit_week       bigint,
    ADD COLUMN wager_limit_month      bigint,
    ADD COLUMN next_loss_limit_day    bigint,
    ADD COLUMN next_loss_limit_week   bigint,
    ADD COLUMN next_loss_limit_month  bigint,
    ADD COLUMN next_wager_limit_day   bigint,
    ADD COLUMN next_wager_limit_week  bigint,
    ADD COLUMN next_wager_limit_month bigint,
    ADD COLUMN next_limits_from       timestamptz,
    ADD COLUMN break_until            timestamptz,
    ADD COLUMN excluded_until         timestamptz,
    ADD COLUMN reality_check_minutes  integer,
    ADD COLUMN play_day               timestamptz NOT NULL DEFAULT '-infinity',
    ADD COLUMN play_day_wagered       bigint      NOT NULL DEFAULT 0,
    ADD COLUMN play_day_lost          bigint      NOT NULL DEFAULT 0,
    ADD COLUMN play_week              timestamptz NOT NULL DEFAULT '-infinity',
    ADD COLUMN play_week_wagered      bigint      NOT NULL DEFAULT 0,
    ADD COLUMN play_week_lost         bigint      NOT NULL DEFAULT 0,
    ADD COLUMN play_month             timestamptz NOT NULL DEFAULT '-infinity',
    ADD COLUMN play_month_wagered     bigint      NOT NULL DEFAULT 0,
    ADD COLUMN play_month_lost        bigint      NOT NULL DEFAULT 0,
    ADD CONSTRAINT users_limits_positive CHECK (
        loss_limit_day > 0 AND loss_limit_week > 0 AND loss_limit_month > 0 AND wager_limit_day > 0
        AND wager_limit_week > 0 AND wager_limit_month > 0 AND next_loss_limit_day > 0 AND next_loss_limit_week > 0
        AND next_loss_limit_month > 0 AND next_wager_limit_day > 0 AND next_wager_limit_week > 0
        AND next_wager_limit_month > 0 AND reality_check_minutes > 0);

-- fairplay_usage is a period's count after adding p_add: what it was, if
-- p_start is the current period's start (or later: another transaction
-- began the next one), else zero.
-- +goose StatementBegin
CREATE FUNCTION fairplay_usage(p_period text, p_start timestamptz, p_used bigint, p_add bigint) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_start >= date_trunc(p_period, now(), 'UTC') THEN p_used ELSE 0 END + p_add
$$;
-- +goose StatementEnd

-- fairplay_limit is a limit as it applies now: p_next from p_from (a
-- looser limit waiting out its 24 hours), else p_cur.
-- +goose StatementBegin
CREATE FUNCTION fairplay_limit(p_from timestamptz, p_cur bigint, p_next bigint) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_from <= now() THEN p_next ELSE p_cur END
$$;
-- +goose StatementEnd

-- fairplay_play_refusal is the one definition of the responsible-gambling
-- rules: why the player u may not stake p_stake now, or NULL. Decided on the
-- stake alone (a bet's outcome is drawn before it is placed, and must never
-- decide whether it is), in this order:
--   excluded:<unix seconds>, excluded:permanent  self-excluded until then
--   break:<unix seconds>                         on a break until then
--   loss_<period>:<limit>   the stake, lost, would take the period's net loss
--                           past the limit
--   wager_<period>:<limit>  the stake would take the period's stakes past the
--                           limit
-- with period day, week or month, shortest first. Every function here is
-- plain SQL, which Postgres inlines into the statement.
-- +goose StatementBegin
CREATE FUNCTION fairplay_play_refusal(u users, p_stake bigint) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN u.excluded_until > now() THEN 'excluded:' || CASE WHEN isfinite(u.excluded_until)
            THEN floor(extract(epoch FROM u.excluded_until))::bigint::text ELSE 'permanent' END
        WHEN u.break_until > now() THEN 'break:' || floor(extract(epoch FROM u.break_until))::bigint::text
        WHEN fairplay_usage('day', u.play_day, u.play_day_lost, p_stake) > fairplay_limit(u.next_limits_from, u.loss_limit_day, u.next_loss_limit_day)
            THEN 'loss_day:' || fairplay_limit(u.next_limits_from, u.loss_limit_day, u.next_loss_limit_day)
        WHEN fairplay_usage('week', u.play_week, u.play_week_lost, p_stake) > fairplay_limit(u.next_limits_from, u.loss_limit_week, u.next_loss_limit_week)
            THEN 'loss_week:' || fairplay_limit(u.next_limits_from, u.loss_limit_week, u.next_loss_limit_week)
        WHEN fairplay_usage('month', u.play_month, u.play_month_lost, p_stake) > fairplay_limit(u.next_limits_from, u.loss_limit_month, u.next_loss_limit_month)
            THEN 'loss_month:' || fairplay_limit(u.next_limits_from, u.loss_limit_month, u.next_loss_limit_month)
        WHEN fairplay_usage('day', u.play_day, u.play_day_wagered, p_stake) > fairplay_limit(u.next_limits_from, u.wager_limit_day, u.next_wager_limit_day)
            THEN 'wager_day:' || fairplay_limit(u.next_limits_from, u.wager_limit_day, u.next_wager_limit_day)
        WHEN fairplay_usage('week', u.play_week, u.play_week_wagered, p_stake) > fairplay_limit(u.next_limits_from, u.wager_limit_week, u.next_wager_limit_week)
            THEN 'wager_week:' || fairplay_limit(u.next_limits_from, u.wager_limit_week, u.next_wager_limit_week)
        WHEN fairplay_usage('month', u.play_month, u.play_month_wagered, p_stake) > fairplay_limit(u.next_limits_from, u.wager_limit_month, u.next_wager_limit_month)
            THEN 'wager_month:' || fairplay_limit(u.next_limits_from, u.wager_limit_month, u.next_wager_limit_month)
    END
$$;
-- +goose StatementEnd

-- fairplay_place_bets (migration 00013) with one more rule, the player's own
-- limits (after the balance limit, before insufficient), and the play_*
-- counts kept with the balance.
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

-- +goose Down
-- Migration 00013's fairplay_place_bets, without the limits.
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
DROP FUNCTION fairplay_play_refusal(users, bigint);
DROP FUNCTION fairplay_limit(timestamptz, bigint, bigint);
DROP FUNCTION fairplay_usage(text, timestamptz, bigint, bigint);
ALTER TABLE users DROP CONSTRAINT users_limits_positive,
    DROP COLUMN loss_limit_day,
    DROP COLUMN loss_limit_week,
    DROP COLUMN loss_limit_month,
    DROP COLUMN wager_limit_day,
    DROP COLUMN wager_limit_week,
    DROP COLUMN wager_limit_month,
    DROP COLUMN next_loss_limit_day,
    DROP COLUMN next_loss_limit_week,
    DROP COLUMN next_loss_limit_month,
    DROP COLUMN next_wager_limit_day,
    DROP COLUMN next_wager_limit_week,
    DROP COLUMN next_wager_limit_month,
    DROP COLUMN next_limits_from,
    DROP COLUMN break_until,
    DROP COLUMN excluded_until,
    DROP COLUMN reality_check_minutes,
    DROP COLUMN play_day,
    DROP COLUMN play_day_wagered,
    DROP COLUMN play_day_lost,
    DROP COLUMN play_week,
    DROP COLUMN play_week_wagered,
    DROP COLUMN play_week_lost,
    DROP COLUMN play_month,
    DROP COLUMN play_month_wagered,
    DROP COLUMN play_month_lost;
