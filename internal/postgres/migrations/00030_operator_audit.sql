-- +goose Up
-- The operator's commands are in the audit log: `fairplay admin create`
-- (create_admin), `admin promote` and `admin create --if-missing` on an
-- existing account (promote), `admin create --reset-password`
-- (set_password) and `user reset-2fa` (reset_2fa). They run with the
-- database's credentials, not as an administrator, so their rows have no
-- actor (actor_id NULL); an administrator's action always has one.
-- Before this, they wrote log lines only: who became an administrator, or
-- lost their sessions and second factor, could not be read back where the
-- dashboard's own changes are (found by a review).
--
-- The release before this one lists the log joined with the actor's row:
-- it leaves these rows out of its pages (still counted in its total).
--
-- admin_audit is written by administrators' actions alone, and read by the
-- log's page; the constraints' checks read its few rows once.
SET LOCAL lock_timeout = '5s';
ALTER TABLE admin_audit
    ALTER COLUMN actor_id DROP NOT NULL,
    DROP CONSTRAINT admin_audit_action_check,
    ADD CONSTRAINT admin_audit_action_check
        CHECK (action IN ('adjust_balance', 'delete_user', 'create_admin', 'promote', 'set_password', 'reset_2fa')),
    ADD CONSTRAINT admin_audit_actor_check
        CHECK (actor_id IS NOT NULL OR action IN ('create_admin', 'promote', 'set_password', 'reset_2fa'));
COMMENT ON COLUMN admin_audit.actor_id IS
    'The administrator who acted; NULL for an operator''s command (fairplay admin ..., fairplay user ...), '
    'run with the database''s credentials (migration 00030).';

-- +goose Down
-- The operator's rows cannot go back to a log whose every row has an
-- administrator, and the log is never rewritten: the way back refuses
-- while any is there.
SET LOCAL lock_timeout = '5s';
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM admin_audit WHERE actor_id IS NULL
                                             OR action NOT IN ('adjust_balance', 'delete_user')) THEN
        RAISE EXCEPTION 'admin_audit holds rows of operator commands (migration 00030); the log is never rewritten, '
                        'so 00030 cannot be undone';
    END IF;
END
$$;
-- +goose StatementEnd
COMMENT ON COLUMN admin_audit.actor_id IS NULL;
ALTER TABLE admin_audit
    DROP CONSTRAINT admin_audit_actor_check,
    DROP CONSTRAINT admin_audit_action_check,
    ADD CONSTRAINT admin_audit_action_check CHECK (action IN ('adjust_balance', 'delete_user')),
    ALTER COLUMN actor_id SET NOT NULL;
