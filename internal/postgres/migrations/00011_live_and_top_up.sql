-- +goose Up
-- hide_username keeps a player's name off the live bets feed (the feed
-- shows "Hidden"). Every bet statement reads it with the player's row it
-- locks anyway, so the feed needs no extra query per bet.
ALTER TABLE users ADD COLUMN hide_username boolean NOT NULL DEFAULT false;
-- top_up_at is the player's last daily top-up (NULL: never claimed). A
-- claim locks the player's row, checks it and sets it in one transaction,
-- so two racing claims credit once.
ALTER TABLE users ADD COLUMN top_up_at timestamptz;
-- The top-up is a ledger entry of its own kind. The constraint is replaced
-- NOT VALID so this migration does not scan the ledger under an exclusive
-- lock; 00012 validates it without blocking writes.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check
    CHECK (kind IN ('signup_grant', 'bet', 'payout', 'refund', 'admin_adjustment', 'top_up')) NOT VALID;

-- +goose Down
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
DELETE FROM ledger_entries WHERE kind = 'top_up';
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check
    CHECK (kind IN ('signup_grant', 'bet', 'payout', 'refund', 'admin_adjustment'));
ALTER TABLE users DROP COLUMN top_up_at;
ALTER TABLE users DROP COLUMN hide_username;
