-- +goose Up
-- Refresh tokens rotate: each refresh replaces sessions.refresh_hash and
-- retires the old hash here. A retired token presented again means two
-- parties hold the session's tokens, and the session is revoked (reuse
-- detection). Rows live as long as their session row; a session's absolute
-- lifetime (FAIRPLAY_SESSION_MAX_LIFETIME) bounds how many it can gather.
CREATE TABLE retired_refresh_tokens (
    hash       bytea       PRIMARY KEY,
    session_id uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    retired_at timestamptz NOT NULL
);
CREATE INDEX retired_refresh_tokens_session_idx ON retired_refresh_tokens (session_id);

-- +goose Down
DROP TABLE retired_refresh_tokens;
