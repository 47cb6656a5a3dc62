-- +goose Up
-- Bets stop updating the statistics rollups themselves. Under load the three
-- upserts per bet (hourly, daily and total rows, locked until commit) cost a
-- third of a bet's time in Postgres (`make bench`, dice at 32 players: 695
-- bets/s with them, 1055 without). Now each change of a bet appends one row of
-- differences to bet_stats_pending — an insert into a table without indexes,
-- which no two bets contend for — and fairplay_fold_bet_stats(), which every
-- server runs about once a second, moves the pending rows into the rollups in
-- one transaction. Readers add the pending rows to the rollups in the same
-- statement, so the figures stay exact at every moment (see
-- internal/postgres/admin.go). The rollups keep their shard column; the folder
-- writes shard 0.
CREATE TABLE bet_stats_pending (
    created_at      timestamptz NOT NULL,
    game            text        NOT NULL,
    bets            bigint      NOT NULL,
    wagered         bigint      NOT NULL,
    settled_wagered bigint      NOT NULL,
    paid_out        bigint      NOT NULL
);

-- A bet counts in the hour and day of its created_at; a settlement or a
-- doubled stake adds the difference.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_bet_stats_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.created_at = NEW.created_at AND OLD.game = NEW.game THEN
        INSERT INTO bet_stats_pending (created_at, game, bets, wagered, settled_wagered, paid_out)
        VALUES (NEW.created_at, NEW.game, 0, NEW.amount - OLD.amount,
                CASE WHEN NEW.status = 'settled' THEN NEW.amount ELSE 0 END
                  - CASE WHEN OLD.status = 'settled' THEN OLD.amount ELSE 0 END,
                NEW.payout - OLD.payout);
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO bet_stats_pending (created_at, game, bets, wagered, settled_wagered, paid_out)
        VALUES (OLD.created_at, OLD.game, -1, -OLD.amount,
                CASE WHEN OLD.status = 'settled' THEN -OLD.amount ELSE 0 END, -OLD.payout);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO bet_stats_pending (created_at, game, bets, wagered, settled_wagered, paid_out)
        VALUES (NEW.created_at, NEW.game, 1, NEW.amount,
                CASE WHEN NEW.status = 'settled' THEN NEW.amount ELSE 0 END, NEW.payout);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- fairplay_fold_bet_stats moves the pending rows into the rollups and
-- returns how many it moved. One server folds at a time (the others return
-- 0 at once); the rows it deletes are exactly the ones it adds, in one
-- statement, so a reader sees every difference exactly once.
-- +goose StatementBegin
CREATE FUNCTION fairplay_fold_bet_stats() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    IF NOT pg_try_advisory_xact_lock(hashtext('fairplay_fold_bet_stats')) THEN
        RETURN 0;
    END IF;
    WITH d AS (
        DELETE FROM bet_stats_pending RETURNING *
    ), h AS (
        SELECT fairplay_stats_bucket('1 hour', created_at) AS bucket, game, sum(bets) AS bets,
               sum(wagered) AS wagered, sum(settled_wagered) AS settled_wagered, sum(paid_out) AS paid_out
        FROM d GROUP BY 1, 2
    ), hourly AS (
        INSERT INTO bet_stats_hourly AS r (bucket, game, shard, bets, wagered, settled_wagered, paid_out)
        SELECT bucket, game, 0, bets, wagered, settled_wagered, paid_out FROM h
        ON CONFLICT (bucket, game, shard) DO UPDATE SET
            bets = r.bets + excluded.bets, wagered = r.wagered + excluded.wagered,
            settled_wagered = r.settled_wagered + excluded.settled_wagered, paid_out = r.paid_out + excluded.paid_out
    ), daily AS (
        INSERT INTO bet_stats_daily AS r (bucket, game, shard, bets, wagered, settled_wagered, paid_out)
        SELECT fairplay_stats_bucket('1 day', bucket), game, 0, sum(bets), sum(wagered), sum(settled_wagered),
               sum(paid_out)
        FROM h GROUP BY 1, 2
        ON CONFLICT (bucket, game, shard) DO UPDATE SET
            bets = r.bets + excluded.bets, wagered = r.wagered + excluded.wagered,
            settled_wagered = r.settled_wagered + excluded.settled_wagered, paid_out = r.paid_out + excluded.paid_out
    ), total AS (
        INSERT INTO bet_stats_total AS r (game, shard, bets, wagered, settled_wagered, paid_out)
        SELECT game, 0, sum(bets), sum(wagered), sum(settled_wagered), sum(paid_out)
        FROM h GROUP BY 1
        ON CONFLICT (game, shard) DO UPDATE SET
            bets = r.bets + excluded.bets, wagered = r.wagered + excluded.wagered,
            settled_wagered = r.settled_wagered + excluded.settled_wagered, paid_out = r.paid_out + excluded.paid_out
    )
    SELECT count(*) INTO n FROM d;
    RETURN n;
END
$$;
-- +goose StatementEnd

-- A rebuild recomputes the rollups from the base tables, so nothing is
-- pending afterwards.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_rebuild_stats() RETURNS void LANGUAGE sql AS $$
    TRUNCATE user_stats_hourly, user_stats_daily, user_stats_total, bet_stats_hourly, bet_stats_daily, bet_stats_total,
             bet_stats_pending;
    INSERT INTO user_stats_hourly (bucket, shard, users)
    SELECT fairplay_stats_bucket('1 hour', created_at), fairplay_stats_shard(id), count(*)
    FROM users WHERE deleted_at IS NULL GROUP BY 1, 2;
    INSERT INTO user_stats_daily (bucket, shard, users)
    SELECT fairplay_stats_bucket('1 day', bucket), shard, sum(users) FROM user_stats_hourly GROUP BY 1, 2;
    INSERT INTO user_stats_total (shard, users)
    SELECT shard, sum(users) FROM user_stats_daily GROUP BY shard;
    INSERT INTO bet_stats_hourly (bucket, game, shard, bets, wagered, settled_wagered, paid_out)
    SELECT fairplay_stats_bucket('1 hour', created_at), game, 0, count(*), sum(amount),
           coalesce(sum(amount) FILTER (WHERE status = 'settled'), 0), sum(payout)
    FROM bets GROUP BY 1, 2;
    INSERT INTO bet_stats_daily (bucket, game, shard, bets, wagered, settled_wagered, paid_out)
    SELECT fairplay_stats_bucket('1 day', bucket), game, 0, sum(bets), sum(wagered), sum(settled_wagered), sum(paid_out)
    FROM bet_stats_hourly GROUP BY 1, 2;
    INSERT INTO bet_stats_total (game, shard, bets, wagered, settled_wagered, paid_out)
    SELECT game, 0, sum(bets), sum(wagered), sum(settled_wagered), sum(paid_out)
    FROM bet_stats_daily GROUP BY 1;
$$;
-- +goose StatementEnd

-- +goose Down
SELECT fairplay_fold_bet_stats();
DROP FUNCTION fairplay_fold_bet_stats();
-- The previous trigger function and rebuild come back with 00004's text, and
-- the rollups are rebuilt with its shards.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_bet_stats_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
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
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_rebuild_stats() RETURNS void LANGUAGE sql AS $$
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
SELECT fairplay_rebuild_stats();
DROP TABLE bet_stats_pending;
