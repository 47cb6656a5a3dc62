-- +goose Up
-- The admin dashboard: user search, the audit log of admin actions, and the
-- rollups that keep the statistics fast on large tables (see docs/admin.md).

-- User search: case-insensitive substring matches on username and email
-- (LIKE '%text%'), served by trigram indexes over live accounts. pg_trgm ships
-- with Postgres (contrib) and is a trusted extension, so the database owner
-- may create it without superuser rights.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX users_username_trgm_idx ON users USING gin (lower(username) gin_trgm_ops) WHERE deleted_at IS NULL;
CREATE INDEX users_email_trgm_idx ON users USING gin (lower(email) gin_trgm_ops) WHERE deleted_at IS NULL;
-- The admin user list: live accounts, newest first, ties broken by id.
CREATE INDEX users_live_created_idx ON users (created_at DESC, id DESC) WHERE deleted_at IS NULL;
-- The live administrators (the "last administrator" rule locks them).
CREATE INDEX users_admins_idx ON users (id) WHERE is_admin AND deleted_at IS NULL;

-- Every change an administrator makes, written in the same transaction as the
-- change. before and after are the target's relevant fields (money as exact
-- decimal strings); the rows are never updated or deleted.
CREATE TABLE admin_audit (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    actor_id       uuid        NOT NULL REFERENCES users (id),
    action         text        NOT NULL CONSTRAINT admin_audit_action_check
                   CHECK (action IN ('adjust_balance', 'delete_user')),
    target_user_id uuid        REFERENCES users (id),
    before         jsonb       NOT NULL DEFAULT '{}',
    after          jsonb       NOT NULL DEFAULT '{}',
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX admin_audit_target_idx ON admin_audit (target_user_id, id DESC);
CREATE INDEX admin_audit_actor_idx ON admin_audit (actor_id, id DESC);

-- Statistics rollups. Counting 1 million users or summing 10 million bets on
-- every dashboard load takes a second or more, so triggers keep running
-- figures per UTC day and hour (for the time windows) and in total, in the
-- same transaction as the write, so they are always exact. A window is cut
-- into whole days (daily rows), the whole hours at its ends (hourly rows) and
-- the partial hours at its very ends (the base table, through
-- users_created_at_idx and bets_created_idx); see internal/postgres/admin.go.
--
-- Each figure is spread over 8 shards chosen by the user's id, so concurrent
-- bets of different players rarely wait for the same rollup row; readers sum
-- the shards, and only that sum is meaningful. Money is numeric so no total,
-- however large, can overflow and block a bet. The tables are small and
-- updated in place all the time: fillfactor 50 keeps those updates HOT.
CREATE TABLE user_stats_hourly (
    bucket timestamptz NOT NULL,
    shard  smallint    NOT NULL,
    users  bigint      NOT NULL,
    PRIMARY KEY (bucket, shard)
) WITH (fillfactor = 50);
CREATE TABLE user_stats_daily (LIKE user_stats_hourly INCLUDING ALL) WITH (fillfactor = 50);
CREATE TABLE user_stats_total (
    shard smallint PRIMARY KEY,
    users bigint   NOT NULL
) WITH (fillfactor = 50);
-- bets counts bets placed (by created_at), wagered sums their stakes,
-- settled_wagered the stakes of the settled ones and paid_out their payouts.
CREATE TABLE bet_stats_hourly (
    bucket          timestamptz NOT NULL,
    game            text        NOT NULL,
    shard           smallint    NOT NULL,
    bets            bigint      NOT NULL,
    wagered         numeric     NOT NULL,
    settled_wagered numeric     NOT NULL,
    paid_out        numeric     NOT NULL,
    PRIMARY KEY (bucket, game, shard)
) WITH (fillfactor = 50);
CREATE TABLE bet_stats_daily (LIKE bet_stats_hourly INCLUDING ALL) WITH (fillfactor = 50);
CREATE TABLE bet_stats_total (
    game            text     NOT NULL,
    shard           smallint NOT NULL,
    bets            bigint   NOT NULL,
    wagered         numeric  NOT NULL,
    settled_wagered numeric  NOT NULL,
    paid_out        numeric  NOT NULL,
    PRIMARY KEY (game, shard)
) WITH (fillfactor = 50);

-- Buckets are absolute UTC hours and days whatever the session's time zone.
-- +goose StatementBegin
CREATE FUNCTION fairplay_stats_bucket(width interval, at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT date_bin(width, at, timestamptz '2000-01-01 00:00:00+00')
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION fairplay_stats_shard(id uuid) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (hashtext(id::text) & 7)::smallint
$$;
-- +goose StatementEnd

-- The rollup writers are PL/pgSQL so their statements' plans are cached for
-- the session (a SQL function called from a trigger would be planned again
-- for every row).
-- +goose StatementBegin
CREATE FUNCTION fairplay_add_user_stats(at timestamptz, id uuid, n bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    s smallint := fairplay_stats_shard(id);
BEGIN
    INSERT INTO user_stats_hourly AS r (bucket, shard, users) VALUES (fairplay_stats_bucket('1 hour', at), s, n)
    ON CONFLICT (bucket, shard) DO UPDATE SET users = r.users + excluded.users;
    INSERT INTO user_stats_daily AS r (bucket, shard, users) VALUES (fairplay_stats_bucket('1 day', at), s, n)
    ON CONFLICT (bucket, shard) DO UPDATE SET users = r.users + excluded.users;
    INSERT INTO user_stats_total AS r (shard, users) VALUES (s, n)
    ON CONFLICT (shard) DO UPDATE SET users = r.users + excluded.users;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION fairplay_add_bet_stats(at timestamptz, g text, uid uuid, n bigint, w numeric, sw numeric, p numeric)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s smallint := fairplay_stats_shard(uid);
BEGIN
    INSERT INTO bet_stats_hourly AS r (bucket, game, shard, bets, wagered, settled_wagered, paid_out)
    VALUES (fairplay_stats_bucket('1 hour', at), g, s, n, w, sw, p)
    ON CONFLICT (bucket, game, shard) DO UPDATE SET
        bets = r.bets + excluded.bets, wagered = r.wagered + excluded.wagered,
        settled_wagered = r.settled_wagered + excluded.settled_wagered, paid_out = r.paid_out + excluded.paid_out;
    INSERT INTO bet_stats_daily AS r (bucket, game, shard, bets, wagered, settled_wagered, paid_out)
    VALUES (fairplay_stats_bucket('1 day', at), g, s, n, w, sw, p)
    ON CONFLICT (bucket, game, shard) DO UPDATE SET
        bets = r.bets + excluded.bets, wagered = r.wagered + excluded.wagered,
        settled_wagered = r.settled_wagered + excluded.settled_wagered, paid_out = r.paid_out + excluded.paid_out;
    INSERT INTO bet_stats_total AS r (game, shard, bets, wagered, settled_wagered, paid_out)
    VALUES (g, s, n, w, sw, p)
    ON CONFLICT (game, shard) DO UPDATE SET
        bets = r.bets + excluded.bets, wagered = r.wagered + excluded.wagered,
        settled_wagered = r.settled_wagered + excluded.settled_wagered, paid_out = r.paid_out + excluded.paid_out;
END
$$;
-- +goose StatementEnd

-- A live user counts once, in the hour and day of its created_at.
-- +goose StatementBegin
CREATE FUNCTION fairplay_user_stats_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
        PERFORM fairplay_add_user_stats(OLD.created_at, OLD.id, -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
        PERFORM fairplay_add_user_stats(NEW.created_at, NEW.id, 1);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- A bet counts in the hour and day of its created_at; a settlement or a
-- doubled stake updates the same rows by the difference.
-- +goose StatementBegin
CREATE FUNCTION fairplay_bet_stats_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.created_at = NEW.created_at AND OLD.game = NEW.game AND OLD.user_id = NEW.user_id THEN
        PERFORM fairplay_add_bet_stats(NEW.created_at, NEW.game, NEW.user_id, 0, NEW.amount - OLD.amount,
            CASE WHEN NEW.status = 'settled' THEN NEW.amount ELSE 0 END
              - CASE WHEN OLD.status = 'settled' THEN OLD.amount ELSE 0 END,
            NEW.payout - OLD.payout);
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM fairplay_add_bet_stats(OLD.created_at, OLD.game, OLD.user_id, -1, -OLD.amount,
            CASE WHEN OLD.status = 'settled' THEN -OLD.amount ELSE 0 END, -OLD.payout);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM fairplay_add_bet_stats(NEW.created_at, NEW.game, NEW.user_id, 1, NEW.amount,
            CASE WHEN NEW.status = 'settled' THEN NEW.amount ELSE 0 END, NEW.payout);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- fairplay_rebuild_stats recomputes every rollup from the base tables. The
-- migration runs it once; bulk loads that bypass the triggers (test/seed) run
-- it afterwards. Callers lock users and bets against writes first.
-- +goose StatementBegin
CREATE FUNCTION fairplay_rebuild_stats() RETURNS void LANGUAGE sql AS $$
    TRUNCATE user_stats_hourly, user_stats_daily, user_stats_total, bet_stats_hourly, bet_stats_daily, bet_stats_total;
    INSERT INTO user_stats_hourly (bucket, shard, users)
    SELECT fairplay_stats_bucket('1 hour', created_at), fairplay_stats_shard(id), count(*)
    FROM users WHERE deleted_at IS NULL GROUP BY 1, 2;
    INSERT INTO user_stats_daily (bucket, shard, users)
    SELECT fairplay_stats_bucket('1 day', bucket), shard, sum(users) FROM user_stats_hourly GROUP BY 1, 2;
    INSERT INTO user_stats_total (shard, users)
    SELECT shard, sum(users) FROM user_stats_daily GROUP BY shard;
    INSERT INTO bet_stats_hourly (bucket, game, shard, bets, wagered, settled_wagered, paid_out)
    SELECT fairplay_stats_bucket('1 hour', created_at), game, fairplay_stats_shard(user_id), count(*), sum(amount),
           coalesce(sum(amount) FILTER (WHERE status = 'settled'), 0), sum(payout)
    FROM bets GROUP BY 1, 2, 3;
    INSERT INTO bet_stats_daily (bucket, game, shard, bets, wagered, settled_wagered, paid_out)
    SELECT fairplay_stats_bucket('1 day', bucket), game, shard, sum(bets), sum(wagered), sum(settled_wagered), sum(paid_out)
    FROM bet_stats_hourly GROUP BY 1, 2, 3;
    INSERT INTO bet_stats_total (game, shard, bets, wagered, settled_wagered, paid_out)
    SELECT game, shard, sum(bets), sum(wagered), sum(settled_wagered), sum(paid_out)
    FROM bet_stats_daily GROUP BY game, shard;
$$;
-- +goose StatementEnd

-- Creating the triggers takes locks that hold off writers until this
-- migration commits, so the rebuild below sees every row and misses none.
CREATE TRIGGER users_stats_insert_delete AFTER INSERT OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION fairplay_user_stats_trigger();
CREATE TRIGGER users_stats_update AFTER UPDATE OF deleted_at, created_at ON users
    FOR EACH ROW WHEN (OLD.deleted_at IS DISTINCT FROM NEW.deleted_at OR OLD.created_at IS DISTINCT FROM NEW.created_at)
    EXECUTE FUNCTION fairplay_user_stats_trigger();
CREATE TRIGGER bets_stats_insert_delete AFTER INSERT OR DELETE ON bets
    FOR EACH ROW EXECUTE FUNCTION fairplay_bet_stats_trigger();
CREATE TRIGGER bets_stats_update AFTER UPDATE OF amount, payout, status, created_at, game, user_id ON bets
    FOR EACH ROW WHEN (OLD.amount IS DISTINCT FROM NEW.amount OR OLD.payout IS DISTINCT FROM NEW.payout
        OR OLD.status IS DISTINCT FROM NEW.status OR OLD.created_at IS DISTINCT FROM NEW.created_at
        OR OLD.game IS DISTINCT FROM NEW.game OR OLD.user_id IS DISTINCT FROM NEW.user_id)
    EXECUTE FUNCTION fairplay_bet_stats_trigger();
SELECT fairplay_rebuild_stats();

-- +goose Down
DROP TRIGGER bets_stats_update ON bets;
DROP TRIGGER bets_stats_insert_delete ON bets;
DROP TRIGGER users_stats_update ON users;
DROP TRIGGER users_stats_insert_delete ON users;
DROP FUNCTION fairplay_rebuild_stats();
DROP FUNCTION fairplay_bet_stats_trigger();
DROP FUNCTION fairplay_user_stats_trigger();
DROP FUNCTION fairplay_add_bet_stats(timestamptz, text, uuid, bigint, numeric, numeric, numeric);
DROP FUNCTION fairplay_add_user_stats(timestamptz, uuid, bigint);
DROP FUNCTION fairplay_stats_shard(uuid);
DROP FUNCTION fairplay_stats_bucket(interval, timestamptz);
DROP TABLE bet_stats_total;
DROP TABLE bet_stats_daily;
DROP TABLE bet_stats_hourly;
DROP TABLE user_stats_total;
DROP TABLE user_stats_daily;
DROP TABLE user_stats_hourly;
DROP TABLE admin_audit;
DROP INDEX users_admins_idx;
DROP INDEX users_live_created_idx;
DROP INDEX users_email_trgm_idx;
DROP INDEX users_username_trgm_idx;
