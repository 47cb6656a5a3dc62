-- +goose Up
-- A statement's inserted bets append their statistics' differences as one
-- row per hour and game instead of one row per bet.
--
-- fairplay_bet_stats_inserted (migration 00007) appended a row to
-- bet_stats_pending for every bet a statement inserted, and the fold
-- deleted each again: a batch of 32 dice bets (fairplay_place_bets) wrote 32
-- rows there and the fold 32 deletions. The rows are only ever read by
-- hour: the fold bins them by hour (fairplay_stats_bucket('1 hour', ...))
-- and readers add them to rollup spans of whole UTC hours and days
-- (internal/postgres/admin.go: spans), so a row dated at the start of its
-- hour counts in exactly the spans its bets' rows did. Now a batch appends
-- one row per hour and game it holds (one, nearly always). The per-row
-- triggers of updates and deletes are unchanged.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_bet_stats_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bet_stats_pending (created_at, game, bets, wagered, settled_wagered, paid_out)
    SELECT fairplay_stats_bucket('1 hour', created_at), game, count(*), sum(amount),
           coalesce(sum(amount) FILTER (WHERE status = 'settled'), 0), sum(payout)
    FROM inserted_bets
    GROUP BY 1, 2;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_bet_stats_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bet_stats_pending (created_at, game, bets, wagered, settled_wagered, paid_out)
    SELECT created_at, game, 1, amount, CASE WHEN status = 'settled' THEN amount ELSE 0 END, payout
    FROM inserted_bets;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
