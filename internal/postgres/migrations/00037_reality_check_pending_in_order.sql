-- +goose Up
-- fairplay_reality_check (00036) keeps the games still running in id
-- order. The list was aggregated in the order the rows came: the first time
-- by when the games began (the player's bets by time), afterwards by id (the
-- kept list's lookup by key), so with two or more running games whose ids
-- are not in the order they began, a call with nothing new found the list
-- changed and rewrote the session's row once more
-- (TestRealityCheckKeepsRunningGamesInOneOrder).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_reality_check(p_user uuid, p_session uuid)
RETURNS TABLE (signed_in timestamptz, bets bigint, wagered bigint, net bigint, minutes integer)
LANGUAGE plpgsql AS $$
DECLARE
    s record;
    mark timestamptz;
    new_mark timestamptz;
    f_bets bigint;
    f_wagered numeric;
    f_net numeric;
    still uuid[];
    t_bets bigint;
    t_wagered numeric;
    t_net numeric;
BEGIN
    -- The session's row, locked: two calls of one session fold in turn.
    -- Bets hold it FOR KEY SHARE, which this lock does not wait for.
    SELECT x.created_at, x.rc_through, x.rc_bets, x.rc_wagered, x.rc_net, x.rc_pending,
           coalesce(u.reality_check_minutes, 0) AS minutes INTO s
    FROM sessions x JOIN users u ON u.id = x.user_id AND u.deleted_at IS NULL
    WHERE x.id = p_session AND x.user_id = p_user
    FOR NO KEY UPDATE OF x;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    mark := coalesce(s.rc_through, s.created_at);
    -- Two minutes before the player's latest bet, and never past two
    -- minutes before now: a replica whose clock runs ahead would otherwise
    -- stamp a bet that moves the mark past bets still being saved by
    -- another.
    SELECT greatest(mark, least(max(b.created_at), statement_timestamp()) - interval '2 minutes') INTO new_mark
    FROM bets b WHERE b.user_id = p_user;
    new_mark := coalesce(new_mark, mark);

    -- What is kept from this call: the settled bets between the marks and
    -- the pending games settled since; the games still running stay
    -- pending.
    SELECT count(*) FILTER (WHERE f.status <> 'active'),
           coalesce(sum(f.amount) FILTER (WHERE f.status <> 'active'), 0),
           coalesce(sum(f.payout - f.amount) FILTER (WHERE f.status <> 'active'), 0),
           coalesce(array_agg(f.id ORDER BY f.id) FILTER (WHERE f.status = 'active'), '{}')
    INTO f_bets, f_wagered, f_net, still
    FROM (SELECT b.id, b.status, b.amount, b.payout FROM bets b
          WHERE b.user_id = p_user AND b.created_at >= mark AND b.created_at < new_mark
          UNION ALL
          -- By their keys alone: the player's, placed before mark (a
          -- condition on either would let the planner walk the player's
          -- bets instead).
          SELECT b.id, b.status, b.amount, b.payout FROM bets b WHERE b.id = ANY(s.rc_pending)) f;
    -- Written only when something changed: a running game polled for
    -- would otherwise rewrite the row on every call.
    IF new_mark > mark OR f_bets > 0 OR still IS DISTINCT FROM s.rc_pending THEN
        UPDATE sessions SET rc_through = new_mark, rc_bets = rc_bets + f_bets, rc_wagered = rc_wagered + f_wagered,
                            rc_net = rc_net + f_net, rc_pending = still
        WHERE id = p_session;
    END IF;

    -- What is summed anew each call: the bets from the new mark on, and the
    -- games still running.
    SELECT count(*), coalesce(sum(t.amount), 0), coalesce(sum(t.payout - t.amount), 0)
    INTO t_bets, t_wagered, t_net
    FROM (SELECT b.amount, b.payout FROM bets b WHERE b.user_id = p_user AND b.created_at >= new_mark
          UNION ALL
          SELECT b.amount, b.payout FROM bets b WHERE b.id = ANY(still)) t; -- placed before new_mark

    -- Clamped to bigint as the period counts are (migration 00027): a long
    -- session's wagers can pass it.
    RETURN QUERY SELECT s.created_at, s.rc_bets + f_bets + t_bets,
        least(s.rc_wagered + f_wagered + t_wagered, 9223372036854775807)::bigint,
        greatest(least(s.rc_net + f_net + t_net, 9223372036854775807), -9223372036854775807)::bigint,
        s.minutes;
END
$$;
-- +goose StatementEnd


-- +goose Down
-- 00036's function.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION fairplay_reality_check(p_user uuid, p_session uuid)
RETURNS TABLE (signed_in timestamptz, bets bigint, wagered bigint, net bigint, minutes integer)
LANGUAGE plpgsql AS $$
DECLARE
    s record;
    mark timestamptz;
    new_mark timestamptz;
    f_bets bigint;
    f_wagered numeric;
    f_net numeric;
    still uuid[];
    t_bets bigint;
    t_wagered numeric;
    t_net numeric;
BEGIN
    -- The session's row, locked: two calls of one session fold in turn.
    -- Bets hold it FOR KEY SHARE, which this lock does not wait for.
    SELECT x.created_at, x.rc_through, x.rc_bets, x.rc_wagered, x.rc_net, x.rc_pending,
           coalesce(u.reality_check_minutes, 0) AS minutes INTO s
    FROM sessions x JOIN users u ON u.id = x.user_id AND u.deleted_at IS NULL
    WHERE x.id = p_session AND x.user_id = p_user
    FOR NO KEY UPDATE OF x;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    mark := coalesce(s.rc_through, s.created_at);
    -- Two minutes before the player's latest bet, and never past two
    -- minutes before now: a replica whose clock runs ahead would otherwise
    -- stamp a bet that moves the mark past bets still being saved by
    -- another.
    SELECT greatest(mark, least(max(b.created_at), statement_timestamp()) - interval '2 minutes') INTO new_mark
    FROM bets b WHERE b.user_id = p_user;
    new_mark := coalesce(new_mark, mark);

    -- What is kept from this call: the settled bets between the marks and
    -- the pending games settled since; the games still running stay
    -- pending.
    SELECT count(*) FILTER (WHERE f.status <> 'active'),
           coalesce(sum(f.amount) FILTER (WHERE f.status <> 'active'), 0),
           coalesce(sum(f.payout - f.amount) FILTER (WHERE f.status <> 'active'), 0),
           coalesce(array_agg(f.id) FILTER (WHERE f.status = 'active'), '{}')
    INTO f_bets, f_wagered, f_net, still
    FROM (SELECT b.id, b.status, b.amount, b.payout FROM bets b
          WHERE b.user_id = p_user AND b.created_at >= mark AND b.created_at < new_mark
          UNION ALL
          -- By their keys alone: the player's, placed before mark (a
          -- condition on either would let the planner walk the player's
          -- bets instead).
          SELECT b.id, b.status, b.amount, b.payout FROM bets b WHERE b.id = ANY(s.rc_pending)) f;
    -- Written only when something changed: a running game polled for
    -- would otherwise rewrite the row on every call.
    IF new_mark > mark OR f_bets > 0 OR still IS DISTINCT FROM s.rc_pending THEN
        UPDATE sessions SET rc_through = new_mark, rc_bets = rc_bets + f_bets, rc_wagered = rc_wagered + f_wagered,
                            rc_net = rc_net + f_net, rc_pending = still
        WHERE id = p_session;
    END IF;

    -- What is summed anew each call: the bets from the new mark on, and the
    -- games still running.
    SELECT count(*), coalesce(sum(t.amount), 0), coalesce(sum(t.payout - t.amount), 0)
    INTO t_bets, t_wagered, t_net
    FROM (SELECT b.amount, b.payout FROM bets b WHERE b.user_id = p_user AND b.created_at >= new_mark
          UNION ALL
          SELECT b.amount, b.payout FROM bets b WHERE b.id = ANY(still)) t; -- placed before new_mark

    -- Clamped to bigint as the period counts are (migration 00027): a long
    -- session's wagers can pass it.
    RETURN QUERY SELECT s.created_at, s.rc_bets + f_bets + t_bets,
        least(s.rc_wagered + f_wagered + t_wagered, 9223372036854775807)::bigint,
        greatest(least(s.rc_net + f_net + t_net, 9223372036854775807), -9223372036854775807)::bigint,
        s.minutes;
END
$$;
-- +goose StatementEnd

