-- +goose Up
-- fairplay_stake_refusal is fairplay_play_refusal (migration 00015) as one
-- call that Postgres does not inline. A game action's statements (actionSQL
-- and saveGameSQL in internal/postgres) need the rule only for an extra
-- stake (a Blackjack double, split or insurance), but an inlined rule is a
-- large expression that the executor prepares on every execution, whether
-- it runs or not: 15% of a pump's instructions in Postgres (make bench-sql,
-- PGCOST_SCENARIO=actions). Called, it costs only the actions that stake.
-- The batch of bets keeps the inlined rule: it is evaluated for every bet,
-- and prepared once per batch.
-- +goose StatementBegin
CREATE FUNCTION fairplay_stake_refusal(u users, p_stake bigint) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN fairplay_play_refusal(u, p_stake);
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION fairplay_stake_refusal(users, bigint);
