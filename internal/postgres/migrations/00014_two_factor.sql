-- +goose Up
-- Two-factor sign-in (TOTP, RFC 6238). totp_secret is the confirmed key (NULL:
-- 2FA off); totp_pending the key being set up, until the player confirms it
-- with a code; totp_last_step the time step of the last code accepted, so a
-- code is never accepted twice (RFC 6238 §5.2). The key is kept as it is,
-- since the server must compute codes from it: the database's access
-- controls and backups guard it like the password hashes beside it.
ALTER TABLE users
    ADD COLUMN totp_secret    bytea,
    ADD COLUMN totp_pending   bytea,
    ADD COLUMN totp_last_step bigint NOT NULL DEFAULT 0;

-- Single-use recovery codes, by hash (SHA-256: the codes are random).
CREATE TABLE recovery_codes (
    user_id   uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash bytea       NOT NULL,
    used_at   timestamptz,
    PRIMARY KEY (user_id, code_hash)
);

-- +goose Down
DROP TABLE recovery_codes;
ALTER TABLE users DROP COLUMN totp_secret, DROP COLUMN totp_pending, DROP COLUMN totp_last_step;
