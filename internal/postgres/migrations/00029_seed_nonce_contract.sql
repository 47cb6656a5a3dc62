-- +goose Up
-- The contract half of migration 00028: a bet no longer writes its seed
-- pair's copy of the nonce.
--
-- 00028 (the expand half, landed and run a release before this one) moved
-- the active pair's nonce into the player's row: a bet checks it and moves
-- it on there. Its fairplay_place_bets still wrote the pair's own copy by
-- key, because the release before 00028 read the nonce there (its seeds
-- panel, a rotation's last nonce). The release before this one reads the
-- active pair's nonce from the player's row (PlayStore.ActiveSeedPair), and
-- a reveal or a new client seed takes it from there into the pair's row
-- (00028's seed_pairs_nonce trigger), so nothing it runs reads the copy.
-- Rolling back past the release before this one is no longer rolling back
-- the image (docs/upgrades.md): a release from 00013 to 00027 reads the
-- nonce from the pair's row, which no longer keeps up with the bets. Its
-- bets are refused as stale once and drawn again from the nonce the
-- refusal answers, but its seeds panel shows the pair's nonce as it was
-- when the pair was made or last given a client seed. A release before
-- 00013 moves the pair's nonce with statements of its own, which nothing
-- carries to the player's row any more: it cannot run on this schema.
--
-- Also gone: seed_pairs_nonce_moved, which moved the player's row on after
-- a bet of 00024's function that began before 00028 committed. No such
-- function is left to call, and no release since 00013 writes a pair's
-- nonce alone.
--
-- make bench-sql, instructions per bet in fairplay_place_bets (batches of
-- 32 dice bets): see README's "Measuring".
--
-- Dropping the trigger locks seed_pairs whole for a moment; behind a long
-- read of it (a report, a dump) it would wait, and every bet with it (a bet
-- reads its pair). So it gives up after 5 seconds, changing nothing, and
-- the migration is run again (the operator's migrations Job tries three
-- times), as 00016 and 00021 do.
SET LOCAL lock_timeout = '5s';
DROP TRIGGER seed_pairs_nonce_moved ON seed_pairs;
DROP FUNCTION fairplay_seed_pair_nonce_moved();
COMMENT ON COLUMN seed_pairs.nonce IS
    'The last nonce of a revealed pair, or of the active pair when it was made or last given a client seed; the '
    'active pair''s current nonce is its player''s users.seed_nonce (migrations 00028 and 00029).';

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

-- +goose Down
-- The pairs' copies caught up with the players' rows, then the function of
-- 00028 that writes them per bet, with no bet in between: bets update the
-- players' rows, so the lock waits for those running and holds the next.
-- A bet whose statement began before this committed runs the function
-- above and leaves its pair's copy one behind; the next bet of that pair
-- writes the copy whole (SET nonce = the bet's nonce), and the release
-- before 00028 would refuse a bet drawn from the copy as stale and draw it
-- again from the pair as the row has it. Both tables are taken in one
-- statement before anything is written, as 00028's way back takes them:
-- with users alone, the catch-up's writes of seed_pairs would wait behind a
-- new client seed that itself waits for users (00028's seed_pairs_nonce
-- trigger takes the pair's row, then its player's), a deadlock. The LOCK
-- itself takes users first and can still meet a change of a pair already
-- running halfway (a new client seed holding seed_pairs and waiting for
-- users; in the other order, a rotation holding users and waiting for
-- seed_pairs): Postgres then ends one of the two, and a failed way back is
-- run again.
SET LOCAL lock_timeout = '10s';
LOCK TABLE users, seed_pairs IN EXCLUSIVE MODE;
UPDATE seed_pairs p SET nonce = u.seed_nonce FROM users u
WHERE u.seed_pair = p.id AND p.revealed_at IS NULL AND p.nonce <> u.seed_nonce;
COMMENT ON COLUMN seed_pairs.nonce IS NULL;
-- +goose StatementBegin
-- A pair's nonce moved on in the pair's row alone moves the player's row on
-- too: a bet that began before this migration committed runs 00024's
-- function, which writes only the pair's row, and without this the
-- player's row would fall behind a bet already placed (the next bet at that
-- nonce refused by bets_nonce_key, again and again). fairplay_place_bets
-- below writes the pair's copy after the player's row and says so for its
-- transaction (fairplay.nonce_in_row): the trigger does not run for it
-- (make bench-sql: 373,970 instructions per bet with it running, 42,000
-- more than without).
CREATE FUNCTION fairplay_seed_pair_nonce_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE users SET seed_nonce = NEW.nonce
    WHERE id = NEW.user_id AND seed_pair = NEW.id AND seed_nonce < NEW.nonce;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER seed_pairs_nonce_moved AFTER UPDATE OF nonce ON seed_pairs
    FOR EACH ROW WHEN (NEW.nonce > OLD.nonce AND NEW.revealed_at IS NULL
                       AND current_setting('fairplay.nonce_in_row', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION fairplay_seed_pair_nonce_moved();
ALTER TABLE seed_pairs ENABLE ALWAYS TRIGGER seed_pairs_nonce_moved;

-- The function as 00028 left it.
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
    -- This transaction's writes of the pairs' copies follow the players'
    -- rows (seed_pairs_nonce_moved need not run for them).
    PERFORM set_config('fairplay.nonce_in_row', 'on', true);
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
        -- What the ledger's entries, the pair's copy and the answers need.
        RETURNING u.id, u.balance, a.bet_id, a.stake, a.payout, a.at, a.ord, a.pair_id, a.nonce
    ), pn AS (
        -- The pair's copy of the nonce, which the previous release reads
        -- (a later release stops writing it). No lock is waited for: every
        -- change of a pair holds its player's row first, and upd holds it.
        UPDATE seed_pairs sp SET nonce = upd.nonce FROM upd WHERE sp.id = upd.pair_id
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
