-- +goose Up
-- Game actions of different players saved together, as bets are
-- (fairplay_place_bets). An action decided from the replica's copy of its
-- game (internal/postgres, actionSQL) was one statement of its own, and most
-- of what Postgres spent on it was the statement's start and end, whatever
-- it saved: starting the executor, building the checks of bets, the
-- commit. make bench-sql (PGCOST_SCENARIO=actions) counted 1,033,390
-- instructions per pump, of which 898,758 in the statement.
--
-- fairplay_play_actions saves a batch of such actions, each from its own
-- arrays' element, with the same parts as actionSQL, per row:
--   * the session live (the zero session is not checked);
--   * the game's row locked only if it is the player's running game of that
--     kind and still the copy (old amount, params and state): FOR UPDATE
--     SKIP LOCKED, so a batch never waits for a row another transaction
--     holds (that action's copy may be stale: the server runs it again on
--     the locking path, which waits and reads the row as it is);
--   * when money moves (an extra stake out, a payout in), the player's row
--     locked without waiting, then the balance changed, not below zero, an
--     extra stake only within the player's own limits
--     (fairplay_stake_refusal), with the play counters and a ledger entry for
--     each amount that is not zero;
--   * the bet saved only if the money moved (or none had to).
-- A player's second action in one batch is not run ('busy'), nor one whose
-- player's row another transaction holds: the server runs those alone, with
-- the statement that waits. So a batch never waits for a row lock and
-- cannot deadlock, and a player's row is changed at most once per batch.
--
-- It answers each action with its ord (1-based), a status, the balance
-- after (or as it is, when nothing moved), the player's username and
-- hide_username (the live feed), and the limits' refusal of an extra stake:
--   gone      the session is not live (or the player was deleted)
--   busy      as above; nothing was done
--   stale     the row is not the copy, or another transaction holds it
--   short     the balance does not cover the extra stake (balance: as it is)
--   refused   the player's limits refuse the extra stake (refusal says how),
--             decided on the player's row as it is once locked
--   unsaved   the money moved but the bet was not saved (never: the row was
--             locked as the copy; the server reports it as an error)
--   saved     done
-- Like fairplay_place_bets it has one generic plan of index scans. The
-- games' and the players' rows are first found by the batch's keys (= ANY
-- of its arrays), so that a plan made when a young table had few rows (a
-- hash join over all of users, read through its index) never reads the
-- whole table (TestActionBatchReadsOnlyItsRows).
-- +goose StatementBegin
CREATE FUNCTION fairplay_play_actions(
    p_users uuid[], p_sessions uuid[], p_live_since timestamptz[], p_bets uuid[], p_games text[],
    p_old_amounts bigint[], p_old_params text[], p_old_states text[], p_stakes bigint[], p_payouts bigint[],
    p_statuses text[], p_amounts bigint[], p_multipliers bigint[], p_bet_payouts bigint[], p_params text[],
    p_states text[], p_at timestamptz[], p_settled_at timestamptz[])
RETURNS TABLE (ord bigint, status text, balance bigint, player text, hidden boolean, refusal text)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH a AS (
        SELECT user_id, session_id, live_since, bet_id, game, old_amount, old_params::jsonb AS old_params,
               old_state::jsonb AS old_state, stake, payout, status, amount, multiplier, bet_payout,
               params::jsonb AS params, state::jsonb AS state, at, settled_at, ord,
               stake <> 0 OR payout <> 0 AS moves,
               row_number() OVER (PARTITION BY user_id ORDER BY ord) > 1 AS again
        FROM unnest(p_users, p_sessions, p_live_since, p_bets, p_games, p_old_amounts, p_old_params, p_old_states,
                    p_stakes, p_payouts, p_statuses, p_amounts, p_multipliers, p_bet_payouts, p_params, p_states,
                    p_at, p_settled_at)
             WITH ORDINALITY AS a(user_id, session_id, live_since, bet_id, game, old_amount, old_params, old_state,
                                  stake, payout, status, amount, multiplier, bet_payout, params, state, at,
                                  settled_at, ord)
    ), pd AS MATERIALIZED (
        SELECT fairplay_period_start('day') AS day, fairplay_period_start('week') AS week,
               fairplay_period_start('month') AS month
    ), s AS MATERIALIZED (
        -- The session found by its id and its player compared after, as
        -- actionSQL does.
        SELECT a.ord, a.session_id = '00000000-0000-0000-0000-000000000000' OR coalesce((
                   SELECT x.user_id = a.user_id FROM sessions x JOIN users y ON y.id = x.user_id
                   WHERE x.id = a.session_id AND x.revoked_at IS NULL AND x.last_used_at >= a.live_since
                     AND y.deleted_at IS NULL), false) AS live
        FROM a
    ), bl AS MATERIALIZED (
        -- The games' rows, locked without waiting. Only the rows themselves
        -- are locked and compared with the copies after (g): a row locked
        -- by a join would make Postgres copy every joined row in case the
        -- locked one must be checked again.
        SELECT b.id, b.user_id, b.game, b.amount, b.params, b.state FROM bets b
        WHERE b.id = ANY(p_bets) AND b.status = 'active'
        FOR UPDATE OF b SKIP LOCKED
    ), g AS MATERIALIZED (
        -- The actions whose session is live and whose game is the player's
        -- running game of that kind, still the copy.
        SELECT a.ord, a.user_id, a.bet_id, a.moves FROM a JOIN s ON s.ord = a.ord JOIN bl ON bl.id = a.bet_id
        WHERE s.live AND NOT a.again AND bl.user_id = a.user_id AND bl.game = a.game
          AND bl.amount = a.old_amount AND bl.params = a.old_params AND bl.state = a.old_state
    ), m AS MATERIALIZED (
        -- The players' rows where money moves, locked without waiting, with
        -- the limits' refusal of an extra stake decided on the row as it is
        -- once locked (the version u changes; a row changed since the
        -- statement began is read again as it is now), not as the
        -- statement's snapshot had it.
        SELECT y.id, y.balance, CASE WHEN k.stake <> 0 THEN fairplay_stake_refusal(y, k.stake) END AS why
        FROM users y JOIN (SELECT a.user_id, a.stake FROM a JOIN g ON g.ord = a.ord WHERE a.moves) k
             ON k.user_id = y.id
        WHERE y.id = ANY(p_users)
        FOR NO KEY UPDATE OF y SKIP LOCKED
    ), mv AS MATERIALIZED (
        SELECT a.ord, a.user_id, a.stake, a.payout, m.why FROM a JOIN g ON g.ord = a.ord JOIN m ON m.id = a.user_id
        WHERE a.moves
    ), u AS (
        UPDATE users y SET balance = y.balance - mv.stake + mv.payout,
            play_day = greatest(y.play_day, pd.day),
            play_day_wagered = fairplay_count(pd.day, y.play_day, y.play_day_wagered, mv.stake),
            play_day_lost = fairplay_count(pd.day, y.play_day, y.play_day_lost, mv.stake - mv.payout),
            play_week = greatest(y.play_week, pd.week),
            play_week_wagered = fairplay_count(pd.week, y.play_week, y.play_week_wagered, mv.stake),
            play_week_lost = fairplay_count(pd.week, y.play_week, y.play_week_lost, mv.stake - mv.payout),
            play_month = greatest(y.play_month, pd.month),
            play_month_wagered = fairplay_count(pd.month, y.play_month, y.play_month_wagered, mv.stake),
            play_month_lost = fairplay_count(pd.month, y.play_month, y.play_month_lost, mv.stake - mv.payout)
        FROM mv, pd
        WHERE y.id = mv.user_id AND y.balance - mv.stake >= 0 AND mv.why IS NULL
        RETURNING mv.ord, y.balance
    ), l AS (
        INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, note, created_at)
        SELECT a.user_id, e.kind, e.amount, e.after, a.bet_id, '', a.at
        FROM a JOIN u ON u.ord = a.ord
        CROSS JOIN LATERAL (VALUES (1, 'bet', -a.stake, u.balance - a.payout),
                                   (2, 'payout', a.payout, u.balance)) e(k, kind, amount, after)
        WHERE e.amount <> 0
        ORDER BY a.ord, e.k
    ), sv AS MATERIALIZED (
        -- What is saved: the bet of every action held whose money moved
        -- (or none had to).
        SELECT a.ord, a.bet_id, a.status, a.amount, a.multiplier, a.bet_payout, a.params, a.state, a.settled_at
        FROM a JOIN g ON g.ord = a.ord
        WHERE NOT a.moves OR EXISTS (SELECT 1 FROM u WHERE u.ord = a.ord)
    ), w AS (
        UPDATE bets b SET status = sv.status, amount = sv.amount, multiplier = sv.multiplier, payout = sv.bet_payout,
                          params = sv.params, state = sv.state, settled_at = sv.settled_at
        FROM sv
        WHERE b.id = sv.bet_id AND b.status = 'active'
        RETURNING sv.ord
    )
    SELECT a.ord,
           CASE WHEN NOT s.live THEN 'gone'
                WHEN a.again THEN 'busy'
                WHEN g.ord IS NULL THEN 'stale'
                WHEN a.moves AND mm.id IS NULL THEN 'busy'
                WHEN a.moves AND u.ord IS NULL AND mm.why IS NOT NULL THEN 'refused'
                WHEN a.moves AND u.ord IS NULL THEN 'short'
                WHEN w.ord IS NULL THEN 'unsaved'
                ELSE 'saved' END,
           coalesce(u.balance, mm.balance, x.balance, 0), coalesce(x.username, ''), coalesce(x.hide_username, false),
           CASE WHEN a.moves AND u.ord IS NULL THEN mm.why END
    FROM a
    JOIN s ON s.ord = a.ord
    LEFT JOIN g ON g.ord = a.ord
    LEFT JOIN m mm ON mm.id = a.user_id AND g.ord IS NOT NULL
    LEFT JOIN u ON u.ord = a.ord
    LEFT JOIN w ON w.ord = a.ord
    LEFT JOIN users x ON x.id = a.user_id AND x.id = ANY(p_users)
    ORDER BY a.ord;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION fairplay_play_actions(uuid[], uuid[], timestamptz[], uuid[], text[], bigint[], text[], text[], bigint[],
                                    bigint[], text[], bigint[], bigint[], bigint[], text[], text[], timestamptz[],
                                    timestamptz[]);
