-- +goose Up
-- Postgres evaluates every CHECK constraint of a table on every row an
-- UPDATE writes, whichever columns it sets. Each bet and each game action
-- that moves money updates the player's balance and play counters, and so
-- matched the username against users_username_format's regular expression
-- and compared the twelve limits and the reality check with zero
-- (users_limits_positive), though neither can change there. Counted with
-- make bench-sql (hack/pgcost.sh: callgrind, batches of 16 dice bets, the
-- batches 32 players make): 463,105 instructions per bet in
-- fairplay_place_bets with the two constraints, 444,910 without the
-- username's, 434,454 without both (6.2%).
--
-- The two rules are now constraint triggers that fire only when a row is
-- inserted or one of their columns is set: the same rules (a NULL passes,
-- as it passes a CHECK), the same names in pg_constraint, the same SQLSTATE
-- (23514, check_violation) and message, raised at the end of the statement
-- that breaks them. They are not deferrable (SET CONSTRAINTS cannot put
-- them off to the commit), they fire under session_replication_role =
-- replica too (ENABLE ALWAYS), as a CHECK is evaluated there, and their
-- functions resolve their operators in pg_catalog whatever the session's
-- search_path, as a CHECK resolved them once. An UPDATE that sets only
-- other columns (the balance, the counters) does not run them at all. The
-- table's other constraints and users_balance_non_negative stay CHECKs:
-- the balance is what these updates change.
--
-- Dropping a constraint locks users for a moment; behind a long read of it
-- the migration would wait, and every bet with it, so it gives up after 5
-- seconds, changing nothing (the operator's migrations Job tries again).
SET LOCAL lock_timeout = '5s';

-- +goose StatementBegin
CREATE FUNCTION fairplay_check_username() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    IF NOT (NEW.username ~ '^[a-z0-9_]{3,20}$') THEN
        RAISE EXCEPTION 'new row for relation "users" violates check constraint "users_username_format"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'users_username_format', SCHEMA = TG_TABLE_SCHEMA,
                  TABLE = TG_TABLE_NAME;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION fairplay_check_limits() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    IF NOT (NEW.loss_limit_day > 0 AND NEW.loss_limit_week > 0 AND NEW.loss_limit_month > 0
            AND NEW.wager_limit_day > 0 AND NEW.wager_limit_week > 0 AND NEW.wager_limit_month > 0
            AND NEW.next_loss_limit_day > 0 AND NEW.next_loss_limit_week > 0 AND NEW.next_loss_limit_month > 0
            AND NEW.next_wager_limit_day > 0 AND NEW.next_wager_limit_week > 0 AND NEW.next_wager_limit_month > 0
            AND NEW.reality_check_minutes > 0) THEN
        RAISE EXCEPTION 'new row for relation "users" violates check constraint "users_limits_positive"'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'users_limits_positive', SCHEMA = TG_TABLE_SCHEMA,
                  TABLE = TG_TABLE_NAME;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

ALTER TABLE users DROP CONSTRAINT users_username_format, DROP CONSTRAINT users_limits_positive;

CREATE CONSTRAINT TRIGGER users_username_format AFTER INSERT OR UPDATE OF username ON users
    FOR EACH ROW EXECUTE FUNCTION fairplay_check_username();

CREATE CONSTRAINT TRIGGER users_limits_positive
    AFTER INSERT OR UPDATE OF loss_limit_day, loss_limit_week, loss_limit_month, wager_limit_day, wager_limit_week,
        wager_limit_month, next_loss_limit_day, next_loss_limit_week, next_loss_limit_month, next_wager_limit_day,
        next_wager_limit_week, next_wager_limit_month, reality_check_minutes ON users
    FOR EACH ROW EXECUTE FUNCTION fairplay_check_limits();

ALTER TABLE users ENABLE ALWAYS TRIGGER users_username_format, ENABLE ALWAYS TRIGGER users_limits_positive;

-- +goose Down
-- Adding the CHECKs back reads all of users under the table's lock (goose
-- runs a migration in one transaction, so a NOT VALID constraint validated
-- after it would hold the same lock): a short stop of play for a table of
-- players. A row written while the triggers were disabled by hand that
-- breaks a rule makes this Down fail, changing nothing: put the row right
-- first.
SET LOCAL lock_timeout = '5s';
DROP TRIGGER users_username_format ON users;
DROP TRIGGER users_limits_positive ON users;
DROP FUNCTION fairplay_check_username();
DROP FUNCTION fairplay_check_limits();
ALTER TABLE users
    ADD CONSTRAINT users_username_format CHECK (username ~ '^[a-z0-9_]{3,20}$'),
    ADD CONSTRAINT users_limits_positive CHECK (
        loss_limit_day > 0 AND loss_limit_week > 0 AND loss_limit_month > 0 AND wager_limit_day > 0
        AND wager_limit_week > 0 AND wager_limit_month > 0 AND next_loss_limit_day > 0 AND next_loss_limit_week > 0
        AND next_loss_limit_month > 0 AND next_wager_limit_day > 0 AND next_wager_limit_week > 0
        AND next_wager_limit_month > 0 AND reality_check_minutes > 0);
