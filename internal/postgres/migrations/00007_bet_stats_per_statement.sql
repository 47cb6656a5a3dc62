-- +goose Up
-- New bets reach bet_stats_pending once per statement instead of once per
-- row: a statement-level trigger reads the inserted rows from a transition
-- table and appends their differences in one INSERT. The row trigger's call
-- per bet cost Postgres 30–50 µs of a ~150 µs bet placed in a batch of 16
-- (pgbench on the batch's own statement). The rows written are the same —
-- one per bet, with its created_at, so readers' windows stay exact.
-- Deletions and updates keep the row triggers of 00004/00005 (an UPDATE OF
-- column list cannot have a transition table).
DROP TRIGGER bets_stats_insert_delete ON bets;

-- +goose StatementBegin
CREATE FUNCTION fairplay_bet_stats_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bet_stats_pending (created_at, game, bets, wagered, settled_wagered, paid_out)
    SELECT created_at, game, 1, amount, CASE WHEN status = 'settled' THEN amount ELSE 0 END, payout
    FROM inserted_bets;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER bets_stats_insert AFTER INSERT ON bets
    REFERENCING NEW TABLE AS inserted_bets
    FOR EACH STATEMENT EXECUTE FUNCTION fairplay_bet_stats_inserted();
CREATE TRIGGER bets_stats_delete AFTER DELETE ON bets
    FOR EACH ROW EXECUTE FUNCTION fairplay_bet_stats_trigger();

-- +goose Down
DROP TRIGGER bets_stats_delete ON bets;
DROP TRIGGER bets_stats_insert ON bets;
DROP FUNCTION fairplay_bet_stats_inserted();
CREATE TRIGGER bets_stats_insert_delete AFTER INSERT OR DELETE ON bets
    FOR EACH ROW EXECUTE FUNCTION fairplay_bet_stats_trigger();
