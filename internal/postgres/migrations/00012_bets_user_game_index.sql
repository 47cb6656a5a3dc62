-- +goose NO TRANSACTION
-- +goose Up
-- The bet history filtered by game (GET /api/games/bets?game=) pages
-- through one player's bets of one game, newest first: without this index
-- Postgres would walk bets_user_idx over every game of a player to find one
-- game's page. Built CONCURRENTLY (outside a transaction) so a large bets
-- table keeps taking bets meanwhile. A run cut off half-way leaves an
-- invalid index behind and no goose version: the next run drops it first.
DROP INDEX CONCURRENTLY IF EXISTS bets_user_game_idx;
CREATE INDEX CONCURRENTLY bets_user_game_idx ON bets (user_id, game, created_at DESC, id DESC);
ALTER TABLE ledger_entries VALIDATE CONSTRAINT ledger_entries_kind_check;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS bets_user_game_idx;
