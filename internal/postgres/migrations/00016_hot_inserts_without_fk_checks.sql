-- +goose Up
-- Every bet inserts a bet row and one or two ledger entries, and Postgres
-- checked each of them against its player (and the bet against its seed
-- pair) with a foreign-key trigger: a query of its own per row, started and
-- ended like any other. Counted with make bench-sql (hack/pgcost.sh:
-- callgrind, batches of 32 dice bets, the same count every run), they were
-- 30% of fairplay_place_bets' instructions per bet with the bench's 64
-- players (711,574 with them, 499,744 without; the checks scan such small
-- tables) and 20% with 2,000 players (661,150 and 528,926).
--
-- The checks can never fail. Every statement that inserts a bet or a ledger
-- entry takes its player from the player's row it updates or locks in the
-- same statement (fairplay_place_bets: the locked players and pairs; a game
-- action, a top-up, an admin adjustment: UPDATE users ... RETURNING; sign-up:
-- the user inserted in the same transaction), and no player or seed pair is
-- ever deleted: a player leaves by deleted_at. What the foreign keys also
-- did was refuse to delete a player or a pair with bets or entries; the
-- triggers below refuse every DELETE and TRUNCATE of users and seed_pairs
-- instead, so no entry can lose its player. sessions, two-factor codes and
-- the other tables keep their foreign keys: they are not on the bet's path.
--
-- Dropping a key locks both its tables (bets or ledger_entries, and users or
-- seed_pairs) for a moment; behind a long read of one of them (a report, a
-- dump) it would wait, and every bet and sign-in with it. So it gives up
-- after 5 seconds, changing nothing, and the migration is run again (the
-- operator's migrations Job tries three times).
SET LOCAL lock_timeout = '5s';
ALTER TABLE bets
    DROP CONSTRAINT bets_user_id_fkey,
    DROP CONSTRAINT bets_seed_pair_id_fkey;
ALTER TABLE ledger_entries
    DROP CONSTRAINT ledger_entries_user_id_fkey;

-- +goose StatementBegin
CREATE FUNCTION fairplay_refuse_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% rows are never deleted: bets and ledger entries refer to them', TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation',
              HINT = 'A player leaves by users.deleted_at; a seed pair is retired by revealed_at.';
END
$$;
-- +goose StatementEnd

CREATE TRIGGER users_never_deleted BEFORE DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION fairplay_refuse_delete();
CREATE TRIGGER users_never_truncated BEFORE TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION fairplay_refuse_delete();
CREATE TRIGGER seed_pairs_never_deleted BEFORE DELETE ON seed_pairs
    FOR EACH STATEMENT EXECUTE FUNCTION fairplay_refuse_delete();
CREATE TRIGGER seed_pairs_never_truncated BEFORE TRUNCATE ON seed_pairs
    FOR EACH STATEMENT EXECUTE FUNCTION fairplay_refuse_delete();

-- +goose Down
SET LOCAL lock_timeout = '5s';
DROP TRIGGER seed_pairs_never_truncated ON seed_pairs;
DROP TRIGGER seed_pairs_never_deleted ON seed_pairs;
DROP TRIGGER users_never_truncated ON users;
DROP TRIGGER users_never_deleted ON users;
DROP FUNCTION fairplay_refuse_delete();
-- The rows were written by the same statements as before, so the keys
-- hold. goose runs this in one transaction: the tables stay locked against
-- writes until every row is checked, and one row whose player or pair does
-- not exist (inserted by hand, or left by a DELETE run with
-- session_replication_role = replica, which skips the refusal triggers)
-- fails the whole way back. Such rows are found with
--   SELECT id FROM bets b WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = b.user_id)
--     OR NOT EXISTS (SELECT 1 FROM seed_pairs p WHERE p.id = b.seed_pair_id);
--   SELECT id FROM ledger_entries l WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = l.user_id);
ALTER TABLE ledger_entries
    ADD CONSTRAINT ledger_entries_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id);
ALTER TABLE bets
    ADD CONSTRAINT bets_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id),
    ADD CONSTRAINT bets_seed_pair_id_fkey FOREIGN KEY (seed_pair_id) REFERENCES seed_pairs (id);
