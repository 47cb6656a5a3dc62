-- +goose NO TRANSACTION
-- +goose Up
-- A break or a self-exclusion outlives the account's deletion: a new
-- account registered with the email of a deleted account that was on a
-- break or self-excluded takes over the later end of each
-- (AccountStore.CreateUser). Before this, a permanently self-excluded
-- player whose account an administrator deleted ("delete my data") could
-- register again under the same username and email and bet at once,
-- though neither can be lifted by any route (found by a review).
--
-- The new account's registration looks the deleted accounts up by email
-- through this index; it holds only deleted accounts that ever had a
-- restriction, so it stays small and the registration costs one probe.
-- Built CONCURRENTLY (outside a transaction) so registrations and bets go
-- on meanwhile; a run cut off half-way leaves an invalid index behind and
-- no goose version: the next run drops it first. Bets update users' rows
-- without touching its columns, so their updates stay HOT.
DROP INDEX CONCURRENTLY IF EXISTS users_deleted_restricted_idx;
CREATE INDEX CONCURRENTLY users_deleted_restricted_idx ON users (lower(email))
    WHERE deleted_at IS NOT NULL AND (break_until IS NOT NULL OR excluded_until IS NOT NULL);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS users_deleted_restricted_idx;
