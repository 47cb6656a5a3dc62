-- +goose Up
-- fairplay_stake_headroom is the most the player u may stake now under their
-- own rules (fairplay_play_refusal, migration 00015): NULL when no rule caps
-- it, -1 on a break or a self-exclusion. For every stake s > 0,
-- fairplay_play_refusal(u, s) IS NULL exactly when the headroom is NULL or
-- s <= the headroom (TestStakeHeadroomIsTheRefusalsBound).
--
-- A running game's extra stake (a Blackjack double, split or insurance) is
-- decided before its card is drawn: PlayOn reads the headroom with the
-- player's row locked, in its first round trip, and the action refuses a
-- stake above it before drawing, so no refusal of a limit comes after a
-- draw and times it (found by a review playing a hostile player:
-- a double refused by a wager limit after the draw took longer when the
-- dealer then drew cards than when the double busted).
--
-- Computed in numeric: a net loss can be far below zero (a winning player),
-- and limit minus it is clamped to the bigint range.
-- +goose StatementBegin
CREATE FUNCTION fairplay_stake_headroom(u users) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN u.excluded_until > now() OR u.break_until > now() THEN -1
        ELSE (SELECT CASE WHEN h IS NULL THEN NULL ELSE greatest(least(h, 9223372036854775807), -1)::bigint END
              FROM (SELECT least(
                  fairplay_limit(u.next_limits_from, u.loss_limit_day, u.next_loss_limit_day)::numeric
                      - fairplay_usage('day', u.play_day, u.play_day_lost, 0),
                  fairplay_limit(u.next_limits_from, u.loss_limit_week, u.next_loss_limit_week)::numeric
                      - fairplay_usage('week', u.play_week, u.play_week_lost, 0),
                  fairplay_limit(u.next_limits_from, u.loss_limit_month, u.next_loss_limit_month)::numeric
                      - fairplay_usage('month', u.play_month, u.play_month_lost, 0),
                  fairplay_limit(u.next_limits_from, u.wager_limit_day, u.next_wager_limit_day)::numeric
                      - fairplay_usage('day', u.play_day, u.play_day_wagered, 0),
                  fairplay_limit(u.next_limits_from, u.wager_limit_week, u.next_wager_limit_week)::numeric
                      - fairplay_usage('week', u.play_week, u.play_week_wagered, 0),
                  fairplay_limit(u.next_limits_from, u.wager_limit_month, u.next_wager_limit_month)::numeric
                      - fairplay_usage('month', u.play_month, u.play_month_wagered, 0)) AS h) t)
    END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION fairplay_stake_headroom(users);
