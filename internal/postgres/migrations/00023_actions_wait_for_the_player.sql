-- +goose Up
-- A game action waits for its player's row whether its money moves or not.
--
-- fairplay_play_actions (migrations 00020 and 00022) locked the player's row
-- only for an action whose money moves, and answered only such an action
-- "busy" when another transaction held the row; one that moves no money was
-- saved all the same. Which of the two an action is depends on what it
-- drew: a blackjack hit that busts the second hand of a split ends the round
-- and pays the first, the same hit with a small card moves nothing. A busy
-- action is saved afterwards on its own, in the caller's request, so a
-- player who held their own row (a client seed change, a bet) and gave up
-- on a hit before its batch answered found the game unchanged exactly when
-- the card was one that moved money, and could stand instead (found by a
-- review playing a hostile player; test/security's
-- TestActionSavedWhateverItDrew). Now every action held needs its player's
-- row, taken without waiting as before: a held row makes every action of
-- that player busy, whatever it drew. The statements that save an action
-- alone (actionSQL, actionSameSQL, saveGameSQL) wait for the row the same
-- way for every action.
--
-- The answers are otherwise those of 00022's function.
--
-- The lock costs what locking and finding a row cost: make bench-sql
-- (PGCOST_SCENARIO=action-batches, pumps of 64 players in batches of 32,
-- which move no money) counted 193,906 instructions per action in the
-- function before, 251,652 after (280,492 with the players' rows found by
-- p_users as 00022 found them, which a join rescans for every row).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_play_actions(
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
               array_position(p_users, user_id) <> ord AS again
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
        -- The players' rows of every action held, locked without waiting,
        -- whether its money moves or not (see the migration's comment),
        -- each found by its key from g's rows (a scan by p_users under
        -- the join would sort the array again for every row), with
        -- the limits' refusal of an extra stake decided on the row as it is
        -- once locked (the version u changes; a row changed since the
        -- statement began is read again as it is now), not as the
        -- statement's snapshot had it.
        SELECT y.id, y.balance, CASE WHEN k.stake <> 0 THEN fairplay_stake_refusal(y, k.stake) END AS why
        FROM users y JOIN (SELECT a.user_id, a.stake FROM a JOIN g ON g.ord = a.ord) k
             ON k.user_id = y.id
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
        -- What is saved: the bet of every action held whose player's row
        -- it holds and whose money moved (or none had to).
        SELECT a.ord, a.bet_id, a.status, a.amount, a.multiplier, a.bet_payout, a.params, a.state, a.settled_at
        FROM a JOIN g ON g.ord = a.ord JOIN m ON m.id = a.user_id
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
                WHEN mm.id IS NULL THEN 'busy'
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
-- 00022's function.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_play_actions(
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
               array_position(p_users, user_id) <> ord AS again
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
