-- +goose Up
-- Accounts, sessions and the money ledger. Money is bigint counts of 1e-8 dollars.
CREATE TABLE users (
    id            uuid PRIMARY KEY,
    username      text        NOT NULL,
    email         text        NOT NULL,
    password_hash text        NOT NULL,
    balance       bigint      NOT NULL DEFAULT 0 CONSTRAINT users_balance_non_negative CHECK (balance >= 0),
    is_admin      boolean     NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    deleted_at    timestamptz,
    CONSTRAINT users_username_format CHECK (username ~ '^[a-z0-9_]{3,20}$')
);
-- Usernames and emails are unique among live accounts, case-insensitively.
CREATE UNIQUE INDEX users_username_key ON users (lower(username)) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX users_email_key ON users (lower(email)) WHERE deleted_at IS NULL;
CREATE INDEX users_created_at_idx ON users (created_at);

CREATE TABLE sessions (
    id           uuid PRIMARY KEY,
    user_id      uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    refresh_hash bytea       NOT NULL,
    ip_address   text        NOT NULL DEFAULT '',
    user_agent   text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);
CREATE UNIQUE INDEX sessions_refresh_hash_key ON sessions (refresh_hash);
CREATE INDEX sessions_user_active_idx ON sessions (user_id, last_used_at DESC) WHERE revoked_at IS NULL;

-- Every balance change is one row here, written in the same transaction as the
-- balance update; users.balance always equals the sum of a user's amounts.
CREATE TABLE ledger_entries (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id       uuid        NOT NULL REFERENCES users (id),
    kind          text        NOT NULL CONSTRAINT ledger_entries_kind_check
                  CHECK (kind IN ('signup_grant', 'bet', 'payout', 'refund', 'admin_adjustment')),
    amount        bigint      NOT NULL CONSTRAINT ledger_entries_amount_non_zero CHECK (amount <> 0),
    balance_after bigint      NOT NULL CHECK (balance_after >= 0),
    ref_id        uuid,
    actor_id      uuid,
    note          text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_entries_user_idx ON ledger_entries (user_id, id);

-- +goose Down
DROP TABLE ledger_entries;
DROP TABLE sessions;
DROP TABLE users;
