#!/usr/bin/env bash
# make bench-sql: what a batch of bets costs Postgres, counted in instructions
# rather than seconds, so two runs give the same figure whatever else the
# machine is doing (make bench's CPU per bet swings with the load).
#
# It builds a database with this tree's migrations and PGCOST_PLAYERS players
# (each with a session and a seed pair), then runs Postgres in single-user
# mode under valgrind's callgrind: PGCOST_WARMUP batches, then PGCOST_BATCHES
# more, each one fairplay_place_bets call of PGCOST_BATCH dice bets of
# different players (about half paying out) in its own transaction, as the
# server's batches are. The difference between the two runs, divided by the
# bets, is the cost per bet of the steady state: startup, the first plans and
# the cached plans' building cancel out. It prints instructions per bet, and
# the functions that cost most per bet (inclusive), from the same difference.
#
#   hack/pgcost.sh                 this tree's schema
#   hack/pgcost.sh variant.sql     the same after variant.sql (a changed function, a dropped
#                                  index...): what a change to the SQL would save, before writing it
#
# PGCOST_SCENARIO=actions counts game actions saved alone instead: each player has a
# running pump game, and each action is one pump (no money moves) sent as
# the server sends it from its copy of the game: BEGIN, the prepared
# statement (postgres.Statement("action-same"), the action statement of an
# action that moves no money, printed by hack/sqltext; its
# generic plan after five runs, as a pooled connection's), COMMIT. The units
# are the same: PGCOST_WARMUP*PGCOST_BATCH actions, then PGCOST_BATCHES*
# PGCOST_BATCH more, the players taken in turn. PGCOST_RUNNING other
# players' games run besides (default 0), started after the statistics were
# taken, as after a busy spell. PGCOST_ACTION_SQL=file runs another text of
# the statement (say, an older tree's) on the same database.
# PGCOST_SCENARIO=action-batches counts the same pumps saved as the server
# saves concurrent ones: PGCOST_BATCH players' at a time, in one call of
# fairplay_play_actions (migration 00020) in its own transaction.
#
# Settings: PGCOST_PLAYERS (default 64, as make bench), PGCOST_BATCH (32, the
# server's largest batch), PGCOST_WARMUP (10), PGCOST_BATCHES (20),
# PGCOST_TOP (30 functions listed; 0 for none), PGCOST_KEEP (1: keep the
# work directory, its callgrind files and logs, and print where).
# The total includes building each batch's arguments in SQL (the same in
# every variant); the function's own share is printed apart. The commit is
# counted without its WAL flush (synchronous_commit is off: single-user
# Postgres has no WAL writer to wait for).
set -euo pipefail
cd "$(dirname "$0")/.."
PLAYERS=${PGCOST_PLAYERS:-64}
BATCH=${PGCOST_BATCH:-32}
WARMUP=${PGCOST_WARMUP:-10}
BATCHES=${PGCOST_BATCHES:-20}
TOP=${PGCOST_TOP:-30}
SCENARIO=${PGCOST_SCENARIO:-bets}
RUNNING=${PGCOST_RUNNING:-0}
case $SCENARIO in bets | actions | action-batches) ;; *) echo "PGCOST_SCENARIO=$SCENARIO: bets, actions or action-batches" >&2; exit 2 ;; esac
# Both action scenarios play pumps of running games.
PUMPS=no
[ "$SCENARIO" = bets ] || PUMPS=yes
VARIANT=${1:-}
if [ -n "$VARIANT" ]; then
  [ -f "$VARIANT" ] || { echo "$VARIANT: no such file" >&2; exit 2; }
  VARIANT=$(realpath "$VARIANT")
fi
[ "$BATCH" -le "$PLAYERS" ] || { echo "PGCOST_BATCH ($BATCH) must not exceed PGCOST_PLAYERS ($PLAYERS)" >&2; exit 2; }

# The newest server's programs (a client-only package has the directory
# without initdb).
pg_bin() {
  local d found=
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && found=$d; done
  echo "$found"
}
pkgs=(valgrind:callgrind_annotate python3:python3)
[ -n "$(pg_bin)" ] || pkgs+=(postgresql)
hack/apt.sh "${pkgs[@]}" >&2
bin=$(pg_bin)

# Postgres refuses to run as root: as root, its files belong to postgres.
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# Only Postgres' user may enter the work directory (its cluster trusts every
# local connection).
WORK=$(mktemp -d /var/tmp/fairplay-pgcost.XXXXXX)
[ "$(id -u)" -eq 0 ] && chown postgres "$WORK"
chmod 700 "$WORK"
STARTED=
cleanup() {
  local status=$?
  [ -n "$STARTED" ] && { as_pg "$bin/pg_ctl" -D "$WORK/base" -m immediate -w stop >/dev/null 2>&1 || true; }
  if [ "$status" -ne 0 ]; then
    for f in "$WORK"/postgres.log "$WORK"/*.variant.log; do
      [ -s "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }
    done
  fi
  if [ "${PGCOST_KEEP:-}" = 1 ]; then echo "kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

echo "==> a database with this tree's migrations and $PLAYERS players" >&2
CGO_ENABLED=0 go build -o "$WORK/fairplay" ./cmd/fairplay
as_pg "$bin/initdb" -D "$WORK/base" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$WORK/initdb.log" 2>&1 \
  || { cat "$WORK/initdb.log" >&2; exit 1; }
STARTED=1
as_pg "$bin/pg_ctl" -D "$WORK/base" -l "$WORK/postgres.log" -w \
  -o "-c listen_addresses='' -k $WORK -p 5432 -c unix_socket_permissions=0700" start >/dev/null
"$bin/createdb" -h "$WORK" -U postgres pb
URL="postgres://postgres@/pb?host=$WORK&sslmode=disable"
DATABASE_URL=$URL "$WORK/fairplay" migrate >"$WORK/migrate.log" 2>&1 || { cat "$WORK/migrate.log" >&2; exit 1; }
"$bin/psql" -X -q -v ON_ERROR_STOP=1 "$URL" <<SQL
INSERT INTO users (id, username, email, password_hash, balance)
SELECT md5('player' || i)::uuid, 'player_' || i, 'player' || i || '@pgcost.test', 'x', 100000000000
FROM generate_series(1, $PLAYERS) i;
INSERT INTO sessions (id, user_id, refresh_hash)
SELECT md5('session' || i)::uuid, md5('player' || i)::uuid, decode(md5('refresh' || i), 'hex')
FROM generate_series(1, $PLAYERS) i;
INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed, nonce)
SELECT md5('pair' || i)::uuid, md5('player' || i)::uuid, md5('server' || i), md5('hash' || i), 'client' || i, 0
FROM generate_series(1, $PLAYERS) i;
-- Each player's running pump game (counted by the action scenarios).
INSERT INTO bets (id, user_id, game, status, amount, seed_pair_id, client_seed, nonce, params, state)
SELECT md5('game' || i)::uuid, md5('player' || i)::uuid, 'pump', 'active', 1000000000, md5('pair' || i)::uuid,
       'client' || i, 0, '{"pumps": 0}', '{"pumps": 0}'
FROM generate_series(1, $PLAYERS) i WHERE '$PUMPS' = 'yes';
VACUUM ANALYZE;
-- Other players' games, started after the statistics were taken.
INSERT INTO bets (id, user_id, game, status, amount, seed_pair_id, client_seed, nonce, params, state)
SELECT gen_random_uuid(), gen_random_uuid(), 'pump', 'active', 1000000000, gen_random_uuid(), 'c', 1,
       '{"pumps": 0}', '{"pumps": 0}'
FROM generate_series(1, $RUNNING);
SQL
as_pg "$bin/pg_ctl" -D "$WORK/base" -m fast -w stop >/dev/null
STARTED=

# One batch: the next nonce of PGCOST_BATCH players' pairs (the players
# taken in turn), a bet id led by the time as the server's UUIDv7 are, a
# payout for about half.
batch_sql() {
  cat <<SQL
SELECT count(*) FILTER (WHERE f.status = 'placed') AS placed FROM (
  SELECT array_agg(p.user_id ORDER BY p.user_id) users, array_agg(s.id ORDER BY p.user_id) sessions,
         array_agg(now() - interval '1 day' ORDER BY p.user_id) live_since, array_agg(p.id ORDER BY p.user_id) pairs,
         array_agg(p.client_seed ORDER BY p.user_id) seeds, array_agg(p.nonce + 1 ORDER BY p.user_id) nonces,
         array_agg(encode(overlay(uuid_send(md5(p.id::text || p.nonce)::uuid) placing
                   substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
                   'hex')::uuid ORDER BY p.user_id) bets,
         array_agg('dice'::text ORDER BY p.user_id) games, array_agg('settled'::text ORDER BY p.user_id) statuses,
         array_agg(1000000::bigint ORDER BY p.user_id) stakes,
         array_agg(CASE WHEN hashtext(p.id::text || p.nonce) % 2 = 0 THEN 198000000 ELSE 0 END::bigint
                   ORDER BY p.user_id) mults,
         array_agg(CASE WHEN hashtext(p.id::text || p.nonce) % 2 = 0 THEN 1980000 ELSE 0 END::bigint
                   ORDER BY p.user_id) pays,
         array_agg('{"target": "50.5", "condition": "above"}'::text ORDER BY p.user_id) params,
         array_agg('{"roll": 61.25, "win": true}'::text ORDER BY p.user_id) states,
         array_agg(clock_timestamp() ORDER BY p.user_id) at, array_agg(true ORDER BY p.user_id) settled
  -- The active pairs, each with the nonce its player's row keeps (migration 00028).
  FROM (SELECT sp.id, sp.user_id, sp.client_seed, u.seed_nonce AS nonce FROM seed_pairs sp
        JOIN users u ON u.seed_pair = sp.id ORDER BY u.seed_nonce, sp.user_id LIMIT $BATCH) p
  JOIN sessions s ON s.user_id = p.user_id
) a, fairplay_place_bets(a.users, a.sessions, a.live_since, a.pairs, a.seeds, a.nonces, a.bets, a.games, a.statuses,
                         a.stakes, a.mults, a.pays, a.params, a.states, a.at, a.settled, false) f;

SQL
}

# actions_sql N: the script of N rounds of PGCOST_BATCH actions, each a
# pump of the next player's game (players taken in turn) from the copy of
# its row the previous pump left; then the pumps the players' games count,
# which are N*PGCOST_BATCH when every action went through.
if [ "$PUMPS" = yes ]; then
  if [ -n "${PGCOST_ACTION_SQL:-}" ]; then
    cp "$PGCOST_ACTION_SQL" "$WORK/action.sql"
  else
    go run ./hack/sqltext action-same >"$WORK/action.sql"
  fi
fi
actions_sql() {
  python3 - "$1" "$BATCH" "$PLAYERS" "$WORK/action.sql" "$SCENARIO" <<'PY'
import hashlib, sys
rounds, batch, players, path, scenario = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
def uid(s):
    h = hashlib.md5(s.encode()).hexdigest()
    return f"'{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}'"
if scenario == "action-batches":
    # One call of fairplay_play_actions per round of batch players: each
    # array holds one element per action, in the function's order.
    out = []
    for k0 in range(0, rounds * batch, batch):
        cols = [[] for _ in range(18)]
        for j in range(k0, k0 + batch):
            i, k = j % players + 1, j // players
            vals = [uid(f"player{i}"), uid(f"session{i}"), "now() - interval '1 day'", uid(f"game{i}"), "'pump'",
                    "1000000000", f"""'{{"pumps": {k}}}'""", f"""'{{"pumps": {k}}}'""", "0", "0", "'active'",
                    "1000000000", "0", "0", f"""'{{"pumps": {k + 1}}}'""", f"""'{{"pumps": {k + 1}}}'""", "now()",
                    "NULL"]
            for c, v in zip(cols, vals):
                c.append(v)
        types = ["uuid", "uuid", "timestamptz", "uuid", "text", "bigint", "text", "text", "bigint", "bigint", "text",
                 "bigint", "bigint", "bigint", "text", "text", "timestamptz", "timestamptz"]
        args = ", ".join(f"ARRAY[{', '.join(c)}]::{t}[]" for c, t in zip(cols, types))
        out += [f"SELECT count(*) FILTER (WHERE status = 'saved') AS saved FROM fairplay_play_actions({args});", ""]
    out += ["SELECT sum((params->>'pumps')::int) AS pumped FROM bets WHERE game = 'pump' AND client_seed LIKE 'client%';", ""]
    print("\n".join(out))
    sys.exit()
# Single-user mode ends a statement at a semicolon before an empty line.
text = "\n".join(line for line in open(path).read().splitlines() if line.strip())
out = ["PREPARE act AS " + text + ";", ""]
for j in range(rounds * batch):
    i, k = j % players + 1, j // players
    args = [uid(f"player{i}"), "0", "0", uid(f"game{i}"), "'active'", "1000000000", "0", "0",
            f"""'{{"pumps": {k + 1}}}'""", f"""'{{"pumps": {k + 1}}}'""", "now()", "NULL", uid(f"session{i}"),
            "now() - interval '1 day'", "'pump'", "1000000000", f"""'{{"pumps": {k}}}'""", f"""'{{"pumps": {k}}}'"""]
    out += ["BEGIN;", "", "EXECUTE act(" + ", ".join(args) + ");", "", "COMMIT;", ""]
out += ["SELECT sum((params->>'pumps')::int) AS pumped FROM bets WHERE game = 'pump' AND client_seed LIKE 'client%';", ""]
print("\n".join(out))
PY
}

# count N: the instructions of a single-user Postgres that runs N batches
# (after the variant, if any), on a fresh copy of the database.
count() {
  local n=$1 w=$WORK/w$1
  rm -rf "$w"
  cp -a "$WORK/base" "$w"
  if [ -n "$VARIANT" ]; then
    { cat "$VARIANT"; printf '\n\n'; } | as_pg "$bin/postgres" --single -j -D "$w" pb >"$w.variant.log" 2>&1 \
      || { echo "applying $VARIANT failed" >&2; exit 1; }
    if grep -q -E 'ERROR|FATAL' "$w.variant.log"; then grep -E 'ERROR|FATAL' "$w.variant.log" >&2; exit 1; fi
  fi
  if [ "$PUMPS" = yes ]; then
    { echo "SET synchronous_commit = off;"; echo; actions_sql "$n"; } >"$WORK/script$n.sql"
  else
    { echo "SET synchronous_commit = off;"; echo; for _ in $(seq "$n"); do batch_sql; done; } >"$WORK/script$n.sql"
  fi
  chmod 644 "$WORK/script$n.sql"
  as_pg valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.$n" "$bin/postgres" --single -j -D "$w" pb \
    <"$WORK/script$n.sql" >"$w.out" 2>"$w.err" || { tail -20 "$w.err" >&2; exit 1; }
  if grep -q ERROR "$w.out" "$w.err"; then grep -h ERROR "$w.out" "$w.err" | head -5 >&2; exit 1; fi
  local placed
  if [ "$PUMPS" = yes ]; then
    placed=$(sed -n 's/.*pumped = "\([0-9]*\)".*/\1/p' "$w.out")
    [ "${placed:-0}" -eq $((n * BATCH)) ] || { echo "only ${placed:-0} of $((n * BATCH)) actions went through" >&2; exit 1; }
    return
  fi
  placed=$(grep -c "placed = \"$BATCH\"" "$w.out" || true)
  [ "$placed" -eq "$n" ] || { echo "only $placed of $n batches placed all $BATCH bets" >&2; exit 1; }
}

if [ "$PUMPS" = yes ]; then
  echo "==> callgrind: $((WARMUP * BATCH)) actions, then $(((WARMUP + BATCHES) * BATCH)) (a minute or two)" >&2
else
  echo "==> callgrind: $WARMUP batches, then $((WARMUP + BATCHES)) (batches of $BATCH; a minute or two)" >&2
fi
count "$WARMUP"
count $((WARMUP + BATCHES))
label="${VARIANT:-this tree}"
[ -n "${PGCOST_ACTION_SQL:-}" ] && label="$label, the action statement of $PGCOST_ACTION_SQL"
[ "$RUNNING" -gt 0 ] && label="$label, $RUNNING other games running"
python3 - "$WORK/callgrind.$WARMUP" "$WORK/callgrind.$((WARMUP + BATCHES))" $((BATCHES * BATCH)) "$TOP" "$label" "$SCENARIO" <<'PY'
import re, subprocess, sys
before, after, bets, top, label, scenario = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
unit = "bet" if scenario == "bets" else "action"

# The frames every instruction is under.
SKIP = {"(below main)", "main", "__libc_start_main@@GLIBC_2.34", "PostgresSingleUserMain", "PostgresMain"}


def inclusive(path):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    total, funcs = 0, {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(.*)", line)
        if not m:
            continue
        n, name = int(m.group(1).replace(",", "")), m.group(2)
        if "PROGRAM TOTALS" in name:
            total = n
            continue
        name = name.split(":", 1)[-1].split(" [")[0]
        if not name.startswith("0x") and name not in SKIP:
            funcs[name] = funcs.get(name, 0) + n
    return total, funcs

t0, f0 = inclusive(before)
t1, f1 = inclusive(after)
if not 0 < t0 < t1:
    sys.exit(f"callgrind's totals make no sense: {t0:,} instructions for the shorter run, {t1:,} for the longer")
def per_bet(name):
    return (f1.get(name, 0) - f0.get(name, 0)) / bets

print(f"{label}: {(t1 - t0) / bets:,.0f} instructions per {unit} in all, of which")
if scenario == "actions":
    print(f"  {per_bet('ExecuteQuery'):>9,.0f}  the action's statement (EXECUTE of the prepared statement, its triggers and checks)")
    print("  and the rest: BEGIN, parsing the EXECUTE and its arguments, the commit")
elif scenario == "action-batches":
    print(f"  {per_bet('plpgsql_call_handler'):>9,.0f}  fairplay_play_actions (the statement, its triggers and checks)")
    print("  and the rest: parsing and planning the call with its arguments written out, the commit")
else:
    print(f"  {per_bet('plpgsql_call_handler'):>9,.0f}  fairplay_place_bets (the statement, its triggers and checks)")
    print("  and the rest: the query that builds the batch's arguments (parsed and planned each time), the commit")
if top:
    rows = sorted(((f1.get(k, 0) - f0.get(k, 0)) / bets, k) for k in set(f0) | set(f1))
    print(f"\n{'per ' + unit:>10}  function (inclusive)")
    for v, k in sorted(rows, reverse=True)[:top]:
        print(f"{v:10,.0f}  {k}")
PY
