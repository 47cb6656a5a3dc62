-- +goose Up
-- The reality check reads each of a session's bets once.
--
-- GET /api/limits/reality-check summed every bet the player had placed
-- since the session signed in, read from the table (bets_user_idx does not
-- hold the amounts) on every call. A session lives up to 30 days and a
-- player may bet 50 times a second: a day of betting is 4.3 million rows,
-- and with a million behind one session a call took ~260 ms of a pool
-- connection. Two calls at a time per player (the per-player line), from a
-- few accounts, kept every replica's pool busy (found by a review playing a
-- hostile player).
--
-- Now the session keeps what it has already summed: the settled bets placed
-- before rc_through are in rc_bets, rc_wagered and rc_net, and each call
-- adds the bets placed since, up to two minutes before the player's latest
-- bet, and moves rc_through on. Younger bets are summed on every call but
-- not kept: a bet is stamped when it is drawn, by the replica's clock, and
-- committed up to the 20 s its save may take later, so a bet younger than
-- that may not be visible yet. A bet still running when it is passed (a
-- Mines, Pump or Blackjack game, whose stake and payout change until it
-- settles) is kept by id in rc_pending, summed as it is on every call and
-- kept once settled: at most one per game kind. So a call reads the bets of
-- the last two minutes of play, those placed since the last call, and the
-- running games, by index, whatever the session's length.
--
-- ADD COLUMN with a constant default changes no row, but locks sessions
-- whole for a moment: behind a long read of it (a report, a dump) it would
-- wait, and every bet with it (a bet holds its session's row). So it gives
-- up after 5 seconds, changing nothing, and the migration is run again (the
-- operator's migrations Job tries three times), as 00016, 00021 and 00029 do.
SET LOCAL lock_timeout = '5s';
ALTER TABLE sessions
    ADD COLUMN rc_through timestamptz,
    ADD COLUMN rc_bets bigint NOT NULL DEFAULT 0,
    ADD COLUMN rc_wagered numeric NOT NULL DEFAULT 0,
    ADD COLUMN rc_net numeric NOT NULL DEFAULT 0,
    ADD COLUMN rc_pending uuid[] NOT NULL DEFAULT '{}';
COMMENT ON COLUMN sessions.rc_through IS
    'The reality check has kept the session''s settled bets placed before this in rc_bets, rc_wagered and rc_net '
    '(fairplay_reality_check); NULL: none yet (from created_at).';

-- +goose StatementBegin
CREATE FUNCTION fairplay_reality_check(p_user uuid, p_session uuid)
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
    SELECT greatest(mark, max(b.created_at) - interval '2 minutes') INTO new_mark
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
    IF new_mark > mark OR cardinality(s.rc_pending) > 0 THEN
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
SET LOCAL lock_timeout = '5s';
DROP FUNCTION fairplay_reality_check(uuid, uuid);
ALTER TABLE sessions DROP COLUMN rc_through, DROP COLUMN rc_bets, DROP COLUMN rc_wagered, DROP COLUMN rc_net,
    DROP COLUMN rc_pending;
