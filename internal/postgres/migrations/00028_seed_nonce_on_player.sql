-- +goose Up
-- The active seed pair's nonce moves on in the player's row; the pair's
-- row keeps a copy for the previous release (expand: a later release stops
-- writing it, docs/upgrades.md).
--
-- fairplay_place_bets (migration 00024) locked each bet's seed pair (FOR NO
-- KEY UPDATE SKIP LOCKED), checked the pair, client seed and nonce on it and
-- moved its nonce on there, besides locking and updating the player's row
-- for the balance and the period counts. Now users holds the player's active
-- pair as a bet needs it (seed_pair, seed_client, seed_nonce), and a bet
-- checks it and moves it on in the row it locks and updates anyway. The
-- pair's row is no longer locked or checked; this release still writes its
-- nonce (a plain update by key), because the previous release reads it
-- there (the seeds panel, a rotation's last nonce). The release after this
-- one drops that write (make bench-sql: 299,863 instructions per bet in the
-- function without it).
--
-- Why the check stays sound: every change of a player's active pair (a new
-- pair, a rotation's reveal, a new client seed) goes through seed_pairs,
-- whose triggers write it to the player's row in the same transaction. A
-- batch reads the player's row as it locks it, so it sees the newest
-- committed version: a pair revealed or reseeded after the statement began
-- is seen as such, and the bet is refused as stale (the update checks the
-- row once more). The server's seed changes lock the player's row first
-- (PlayStore.ActiveSeedPair, InsertSeedPair), so a batch never waits on
-- them, and while a batch holds a player's row no one else holds the
-- pair's. bets_nonce_key (seed_pair_id, nonce) still refuses a nonce used
-- twice. The triggers fire in every session_replication_role, as the
-- checks of migration 00021 do: a reveal written with triggers off would
-- leave its pair open to bets.
--
-- make bench-sql, instructions per bet in fairplay_place_bets (batches of 32
-- dice bets): 342,464 before, 335,605 after (-2.0%).
ALTER TABLE users ADD COLUMN seed_pair uuid, ADD COLUMN seed_client text, ADD COLUMN seed_nonce bigint;
-- No pair changes while the players' rows are filled in (after users, which
-- ALTER TABLE holds: every bet and seed change locks the player's row
-- first). One statement over the players with a pair; a table of a million
-- players is rewritten once.
LOCK TABLE seed_pairs IN EXCLUSIVE MODE;
UPDATE users u SET seed_pair = p.id, seed_client = p.client_seed, seed_nonce = p.nonce
FROM seed_pairs p WHERE p.user_id = u.id AND p.revealed_at IS NULL;

-- +goose StatementBegin
-- A new client seed or a reveal of the active pair takes the player's
-- nonce: a revealed pair keeps the nonce it ended at. The player's row is
-- locked (the server's changes hold it already), so the nonce read is the
-- newest and no bet moves it on before the trigger below writes the row.
CREATE FUNCTION fairplay_seed_pair_nonce() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    SELECT CASE WHEN u.seed_pair = OLD.id THEN u.seed_nonce END INTO n
    FROM users u WHERE u.id = OLD.user_id FOR NO KEY UPDATE;
    NEW.nonce := coalesce(n, NEW.nonce);
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER seed_pairs_nonce BEFORE UPDATE OF client_seed, revealed_at ON seed_pairs
    FOR EACH ROW WHEN (OLD.revealed_at IS NULL) EXECUTE FUNCTION fairplay_seed_pair_nonce();

-- +goose StatementBegin
-- The player's row follows its active pair: set by a new pair or a new
-- client seed, cleared when that pair is revealed.
CREATE FUNCTION fairplay_seed_pair_player() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.revealed_at IS NULL THEN
        UPDATE users SET seed_pair = NEW.id, seed_client = NEW.client_seed, seed_nonce = NEW.nonce
        WHERE id = NEW.user_id;
    ELSE
        UPDATE users SET seed_pair = NULL, seed_client = NULL, seed_nonce = NULL
        WHERE id = NEW.user_id AND seed_pair = NEW.id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER seed_pairs_player AFTER INSERT OR UPDATE OF client_seed, revealed_at ON seed_pairs
    FOR EACH ROW EXECUTE FUNCTION fairplay_seed_pair_player();

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

-- +goose StatementBegin
-- A new pair takes its player's row before it enters the pair's unique
-- index, as every change of a pair does (PlayStore.InsertSeedPair locks it
-- first too; the release before this one does not): the trigger above
-- writes the row, and an insert that took it only then would deadlock with
-- a rotation or a new client seed holding the row and waiting for the
-- inserted pair.
CREATE FUNCTION fairplay_seed_pair_lock_player() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM users WHERE id = NEW.user_id FOR NO KEY UPDATE;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER seed_pairs_lock_player BEFORE INSERT ON seed_pairs
    FOR EACH ROW EXECUTE FUNCTION fairplay_seed_pair_lock_player();
ALTER TABLE seed_pairs ENABLE ALWAYS TRIGGER seed_pairs_nonce, ENABLE ALWAYS TRIGGER seed_pairs_player,
    ENABLE ALWAYS TRIGGER seed_pairs_nonce_moved, ENABLE ALWAYS TRIGGER seed_pairs_lock_player;

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

-- +goose Down
-- The pairs' nonces back from the players' rows (the same but where a pair's
-- copy was not written), with no bet or seed change meanwhile: both tables
-- taken at once, in the mode the DROPs below need, rather than upgraded
-- from a weaker lock while a game action waits behind it.
SET LOCAL lock_timeout = '10s';
LOCK TABLE users, seed_pairs IN ACCESS EXCLUSIVE MODE;
DROP TRIGGER seed_pairs_lock_player ON seed_pairs;
DROP TRIGGER seed_pairs_nonce_moved ON seed_pairs;
DROP TRIGGER seed_pairs_player ON seed_pairs;
DROP TRIGGER seed_pairs_nonce ON seed_pairs;
DROP FUNCTION fairplay_seed_pair_lock_player();
DROP FUNCTION fairplay_seed_pair_nonce_moved();
DROP FUNCTION fairplay_seed_pair_player();
DROP FUNCTION fairplay_seed_pair_nonce();
UPDATE seed_pairs p SET nonce = u.seed_nonce FROM users u
WHERE u.seed_pair = p.id AND p.revealed_at IS NULL AND p.nonce <> u.seed_nonce;
-- The function as 00024 left it.
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

ALTER TABLE users DROP COLUMN seed_pair, DROP COLUMN seed_client, DROP COLUMN seed_nonce;
