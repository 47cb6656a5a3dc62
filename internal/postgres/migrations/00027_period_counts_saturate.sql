-- +goose Up
-- A period's counts (play_*_wagered, play_*_lost) stop at the ends of
-- bigint instead of failing the statement that would pass them.
--
-- fairplay_count added a bet's stake (or net loss) to a bigint count, which
-- Postgres refuses past 9,223,372,036,854,775,807 ("bigint out of range").
-- A month's wagers reach that after 9.2 million maximum bets (play's
-- DefaultMaxBet, 10^12 units; a few days of one player's bets at an
-- operator's higher limits), and a winner's net loss goes as far below zero.
-- Then every batch holding that player's bet failed whole, and each of the
-- other players' bets in it was placed again on its own: one player could
-- cost every other player a statement per bet, and could never bet again
-- that period. A count at an end of bigint is past any limit a player can
-- set (the limits are bigints), so the refusals are those the exact sum
-- would give (fairplay_stake_headroom computes in numeric already).
-- TestPeriodCountsStopAtTheEndsOfBigint.
--
-- The count before the bet is clamped to what leaves room for it (one
-- expression; a CASE testing each end cost 1,000 instructions a bet more).
-- make bench-sql, instructions per bet in fairplay_place_bets (batches of
-- 32 dice bets, six counts each): 336,706 before, 342,331 after (+1.7%).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_count(p_period_start timestamptz, p_start timestamptz, p_used bigint, p_add bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_start >= p_period_start
                THEN least(greatest(p_used, -9223372036854775807 - least(p_add, 0)),
                           9223372036854775807 - greatest(p_add, 0))
                ELSE 0 END + p_add
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_count(p_period_start timestamptz, p_start timestamptz, p_used bigint, p_add bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_start >= p_period_start THEN p_used ELSE 0 END + p_add
$$;
-- +goose StatementEnd
