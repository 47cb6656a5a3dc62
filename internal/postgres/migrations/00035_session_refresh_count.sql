-- +goose Up
-- A session counts its refreshes, and one refreshed accounts.MaxRefreshes
-- times is revoked at the next (RotateRefreshToken): every refresh retires
-- a token, kept while the session lives so that any of them presented again
-- revokes the session (reuse detection), and nothing bounded how many one
-- session gathered: one address refreshing at its rate limit (300 a minute)
-- added ~430,000 a day to one session (found by a review playing a hostile
-- client). The web app refreshes about every 15 minutes while open, under
-- 3,000 times in a session's 30 days.
--
-- ADD COLUMN with a constant default changes no row, but locks sessions
-- whole for a moment; behind a long read of it, it gives up after 5 seconds
-- rather than hold every bet behind its wait, and the migration is run again.
SET LOCAL lock_timeout = '5s';
ALTER TABLE sessions ADD COLUMN refreshes integer NOT NULL DEFAULT 0;

-- +goose Down
SET LOCAL lock_timeout = '5s';
ALTER TABLE sessions DROP COLUMN refreshes;
