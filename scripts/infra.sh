#!/usr/bin/env bash
# shellcheck disable=SC2016  # $db, $inc: BSON keys in single quotes, not variables
# Local infrastructure for development and tests.  Usage: scripts/infra.sh up|down|status|check|recover|watchdog
#   RabbitMQ at AMQP_URL: used if reachable, else started with `rabbitmq-server -detached`.
#   MongoDB wire at MONGO_URL: used if it answers a ping, else `mongod` if on PATH, else FerretDB
#   v1.24.2 on PostgreSQL (built from source into the cache dir on first use). A FerretDB of this
#   script that is running but answers nothing (hung) is restarted, its goroutine dump taken first.
#   down stops only what this script started (mongod/FerretDB); RabbitMQ and PostgreSQL stay up.
#   check: the database answers a ping and a tiny write within TES_DB_CHECK_DEADLINE_S (10 s), or exit 1.
#   recover: prints FerretDB's goroutine dump and restarts it (only a FerretDB this script started).
#   watchdog: check every TES_DB_WATCHDOG_INTERVAL_S (10 s); after TES_DB_WATCHDOG_FAILS (6) failed
#     checks in a row, recover and exit 3 (scripts/test.sh runs it beside jest). Never exits otherwise.
# Env: AMQP_URL, MONGO_URL, TES_CACHE_DIR (default ~/.cache/tes), FERRETDB_POOL_MAX_CONNS (40),
#   FERRETDB_PG_DATABASE (ferretdb), FERRETDB_DEBUG_ADDR (127.0.0.1:8088). Exports nothing.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AMQP_URL=${AMQP_URL:-$DEFAULT_AMQP_URL}
MONGO_URL=${MONGO_URL:-$DEFAULT_MONGO_URL}
CACHE=${TES_CACHE_DIR:-$HOME/.cache/tes}
FERRETDB_VERSION=v1.24.2
FDB_DIR=$CACHE/ferretdb
FDB=$FDB_DIR/ferretdb
MONGOD_DIR=$CACHE/mongod
PG_HOST=127.0.0.1 PG_PORT=5432
# The pool arithmetic (docs/operations.md, "Database pools"). FerretDB v1 deadlocks for good when
# the commands in flight hold every connection of its PostgreSQL pool (pool_max_conns): an update
# holds one (its query) while it waits for a second (its write), or for the metadata lock that a
# collection or index creation holds while it waits for a connection. A client has at most
# maxPoolSize commands in flight, so the sum of the clients' pools must stay below pool_max_conns:
#   5 services x MONGO_MAX_POOL_SIZE (6) = 30, + 9 for the operator CLI and scripts < 40.
# (Test stacks use 3 a service: two jest workers' stacks are 30.) PostgreSQL's max_connections
# (100, of which superuser_reserved_connections 3) must hold this pool and a FerretDB of a
# benchmark's or of the chaos suite's own beside it (OwnMongo, 40): 80, + 10 for psql and tests.
FERRETDB_POOL_MAX_CONNS=${FERRETDB_POOL_MAX_CONNS:-40}
SERVICES=5 SERVICE_POOL=${MONGO_MAX_POOL_SIZE:-6} CLIENT_ROOM=9 OWN_FERRETDB_POOL=40 PG_ROOM=10
FERRETDB_PG_DATABASE=${FERRETDB_PG_DATABASE:-ferretdb}
FERRETDB_DEBUG_ADDR=${FERRETDB_DEBUG_ADDR:-127.0.0.1:8088}
# Idle connections are closed after 1 min (pgx keeps them 30 min by default).
PG_URL="postgres://postgres@$PG_HOST:$PG_PORT/$FERRETDB_PG_DATABASE?pool_max_conns=$FERRETDB_POOL_MAX_CONNS&pool_max_conn_idle_time=1m"
# check: how long the database may take to answer a ping and a tiny write.
CHECK_DEADLINE_S=${TES_DB_CHECK_DEADLINE_S:-10}
read -r AMQP_HOST AMQP_PORT < <(url_hostport "$AMQP_URL" 5672)
read -r MONGO_HOST MONGO_PORT < <(url_hostport "$MONGO_URL" 27017)
export PATH=$PATH:/usr/local/go/bin

fdb_version() { "$FDB" --version 2>/dev/null | sed -n 's/^version: //p'; }

is_local() { [[ $1 == localhost || $1 == 127.* || $1 == ::1 ]]; }

# BSON, as hex strings (just what the commands below need): le32 N; cstr S; bson_doc ELEMENTS...;
# and elements: bson_int KEY N, bson_str KEY S, bson_bool KEY 0|1, bson_sub KEY DOC (03), bson_arr KEY DOC (04).
le32() { printf '%02x%02x%02x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
cstr() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; printf '00'; }
bson_doc() { local e; e=$(printf '%s' "$@"); printf '%s%s00' "$(le32 $((${#e} / 2 + 5)))" "$e"; }
bson_int() { printf '10%s%s' "$(cstr "$1")" "$(le32 "$2")"; }
bson_str() { local v; v=$(cstr "$2"); printf '02%s%s%s' "$(cstr "$1")" "$(le32 $((${#v} / 2)))" "$v"; }
bson_bool() { printf '08%s%02x' "$(cstr "$1")" "$2"; }
bson_sub() { printf '03%s%s' "$(cstr "$1")" "$2"; }
bson_arr() { printf '04%s%s' "$(cstr "$1")" "$2"; }

# mongo_cmd HOST PORT DEADLINE DOC: sends the command DOC (hex BSON, with its $db) as an OP_MSG and
# prints the reply as hex; false when no reply comes within DEADLINE seconds.
mongo_cmd() (
  local body=0000000000$4 reply # flagBits 0, section kind 0, the document
  local msg # header: length, requestID 1, responseTo 0, opCode 2013 (OP_MSG)
  msg="$(le32 $((${#body} / 2 + 16)))$(le32 1)$(le32 0)$(le32 2013)$body"
  exec 3<>"/dev/tcp/$1/$2" || exit 1
  printf '%s' "$msg" | xxd -r -p >&3
  reply=$(timeout "$3" dd bs=4096 count=1 status=none <&3 | od -An -tx1 | tr -d ' \n')
  [[ -n $reply ]] && printf '%s\n' "$reply"
) 2>/dev/null

# reply_ok HEX: the reply holds ok: 1 (double or int32) and no write error.
reply_ok() { [[ ($1 == *016f6b00000000000000f03f* || $1 == *106f6b0001000000*) && $1 != *"$(cstr writeErrors)"* ]]; }

# The commands of the checks, built once (a BSON built in bash costs a few hundred forks).
PING_DOC='' WRITE_DOC=''
check_docs() {
  [[ -n $PING_DOC ]] && return
  PING_DOC=$(bson_doc "$(bson_int ping 1)" "$(bson_str '$db' admin)")
  local q u
  q=$(bson_doc "$(bson_str _id probe)")
  u=$(bson_doc "$(bson_sub '$inc' "$(bson_doc "$(bson_int n 1)")")")
  WRITE_DOC=$(bson_doc "$(bson_str update probe)" \
    "$(bson_arr updates "$(bson_doc "$(bson_sub 0 "$(bson_doc "$(bson_sub q "$q")" "$(bson_sub u "$u")" "$(bson_bool upsert 1)")")")")" \
    "$(bson_str '$db' tes_watchdog)")
}

# mongo_ping HOST PORT: {ping: 1, $db: "admin"} answered with ok: 1 within 5 s.
mongo_ping() {
  local reply
  check_docs
  reply=$(mongo_cmd "$1" "$2" 5 "$PING_DOC") && reply_ok "$reply"
}

# The database's answer to a ping and a tiny write ($inc of one document of tes_watchdog.probe:
# the path of the updates that hang), each within CHECK_DEADLINE_S; its collection is made by
# watchdog_collection, so no check creates one.
mongo_check() {
  local reply
  check_docs
  reply=$(mongo_cmd "$MONGO_HOST" "$MONGO_PORT" "$CHECK_DEADLINE_S" "$PING_DOC") && reply_ok "$reply" ||
    { say "no answer to a ping within ${CHECK_DEADLINE_S}s"; return 1; }
  reply=$(mongo_cmd "$MONGO_HOST" "$MONGO_PORT" "$CHECK_DEADLINE_S" "$WRITE_DOC") && reply_ok "$reply" ||
    { say "no answer to a write within ${CHECK_DEADLINE_S}s"; return 1; }
}

# The collection of mongo_check's write, created once when the database comes up (ignores NamespaceExists).
watchdog_collection() {
  mongo_cmd "$MONGO_HOST" "$MONGO_PORT" "$CHECK_DEADLINE_S" "$(bson_doc "$(bson_str create probe)" "$(bson_str '$db' tes_watchdog)")" >/dev/null || true
}

# start_bg PIDFILE LOG CMD...: runs CMD detached (nohup), without the lock fd.
start_bg() {
  local pidfile=$1 log=$2; shift 2
  nohup "$@" >>"$log" 2>&1 </dev/null 9>&- &
  say $! >"$pidfile"
}

# wait_mongo NAME PIDFILE LOG: until the server answers a ping (60 s), or fail with its log.
wait_mongo() {
  local start=$SECONDS pid
  pid=$(<"$2")
  until mongo_ping "$MONGO_HOST" "$MONGO_PORT"; do
    if ! kill -0 "$pid" 2>/dev/null || ((SECONDS - start >= 60)); then
      tail -n 20 "$3" >&2 || true
      die "$1: no MongoDB ping reply at $MONGO_HOST:$MONGO_PORT (log: $3)"
    fi
    sleep 1
  done
  say "$1: ready in $((SECONDS - start))s at $MONGO_URL (pid $pid, log $3)"
}

rabbitmq_up() {
  if tcp_open "$AMQP_HOST" "$AMQP_PORT"; then say "rabbitmq: reachable at $AMQP_URL"; return; fi
  if ! is_local "$AMQP_HOST" || ! command -v rabbitmq-server >/dev/null; then
    die "rabbitmq: not reachable at $AMQP_HOST:$AMQP_PORT and no local rabbitmq-server to start"
  fi
  say "rabbitmq: not reachable, starting rabbitmq-server -detached"
  local start=$SECONDS
  rabbitmq-server -detached
  wait_for 60 tcp_open "$AMQP_HOST" "$AMQP_PORT" || die "rabbitmq: port $AMQP_PORT not open after 60 s"
  if command -v rabbitmq-diagnostics >/dev/null; then
    wait_for $((60 - (SECONDS - start))) rabbitmq-diagnostics -q ping || die "rabbitmq: diagnostics ping failed"
  fi
  say "rabbitmq: started in $((SECONDS - start))s, reachable at $AMQP_URL"
}

postgres_up() {
  if tcp_open "$PG_HOST" "$PG_PORT"; then say "postgresql: reachable at $PG_HOST:$PG_PORT"; return; fi
  command -v pg_ctlcluster >/dev/null || die "postgresql: not reachable at $PG_HOST:$PG_PORT (needed by FerretDB)"
  local version
  version=$(find /etc/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)
  say "postgresql: not reachable, starting cluster $version/main"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
  wait_for 30 tcp_open "$PG_HOST" "$PG_PORT" || die "postgresql: not reachable after 30 s"
  say "postgresql: reachable at $PG_HOST:$PG_PORT"
}

ferretdb_install() {
  if [[ $(fdb_version) == "$FERRETDB_VERSION" ]]; then
    say "ferretdb: $FERRETDB_VERSION installed at $FDB"
    return
  fi
  command -v go >/dev/null || die "ferretdb: cannot build FerretDB $FERRETDB_VERSION: go is not on PATH"
  say "ferretdb: building $FERRETDB_VERSION from source (about 80 s; log $FDB_DIR/build.log)"
  local start=$SECONDS tmp src rc=0
  tmp=$(mktemp -d)
  src="$(go env GOMODCACHE)/github.com/!ferret!d!b/!ferret!d!b@$FERRETDB_VERSION"
  # `go install ...@v1.24.2` fails here (proxy 403 on the @v/list lookup), and the module zip lacks
  # build/version/version.txt, so: fetch via a scratch module, copy, add the version file, build.
  (
    mkdir "$tmp/mod" && cd "$tmp/mod" && go mod init fbbuild &&
      go get "github.com/FerretDB/FerretDB/cmd/ferretdb@$FERRETDB_VERSION" &&
      cp -R "$src" "$tmp/src" && chmod -R u+w "$tmp/src" &&
      echo "$FERRETDB_VERSION" >"$tmp/src/build/version/version.txt" &&
      cd "$tmp/src" && go build -trimpath -o "$FDB.new" ./cmd/ferretdb
  ) >"$FDB_DIR/build.log" 2>&1 || rc=$?
  chmod -R u+w "$tmp" 2>/dev/null || true
  rm -rf "$tmp"
  if ((rc != 0)); then
    tail -n 30 "$FDB_DIR/build.log" >&2
    die "ferretdb: build of $FERRETDB_VERSION failed (exit $rc); full log: $FDB_DIR/build.log"
  fi
  mv -f "$FDB.new" "$FDB"
  [[ $(fdb_version) == "$FERRETDB_VERSION" ]] || die "ferretdb: built binary does not report $FERRETDB_VERSION"
  say "ferretdb: built $FERRETDB_VERSION in $((SECONDS - start))s -> $FDB"
}

# Indexes FerretDB v1 can use for lookups by _id and by indexed fields (see the SQL file); idempotent.
ferretdb_lookup_indexes() {
  psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -d "$FERRETDB_PG_DATABASE" -q -v ON_ERROR_STOP=1 \
    -f "$ROOT/scripts/ferretdb-lookup-indexes.sql" >/dev/null || die "postgresql: scripts/ferretdb-lookup-indexes.sql failed"
  postgres_autovacuum
}

# FerretDB v1 writes a new row version on every update and delete; without autovacuum (off on this
# project's machines, on in every PostgreSQL default) the dead rows are never reclaimed and every
# scan of a busy collection slows down for as long as the server lives. TES_PG_AUTOVACUUM=leave skips this.
postgres_autovacuum() {
  [[ ${TES_PG_AUTOVACUUM:-on} == leave ]] && return
  [[ $(psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -tAc "show autovacuum") == off ]] || return 0
  if psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -q -c "alter system set autovacuum = on" -c "select pg_reload_conf()" >/dev/null; then
    say "postgresql: autovacuum was off; turned it on (ALTER SYSTEM; TES_PG_AUTOVACUUM=leave to keep it off)"
  else
    say "postgresql: autovacuum is off and could not be turned on; FerretDB collections will bloat"
  fi
}

ferretdb_up() {
  ferretdb_install
  postgres_up
  pool_arithmetic
  if [[ -z $(psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -tAc "select 1 from pg_database where datname='$FERRETDB_PG_DATABASE'") ]]; then
    createdb -h "$PG_HOST" -p "$PG_PORT" -U postgres "$FERRETDB_PG_DATABASE"
    say "postgresql: created database $FERRETDB_PG_DATABASE"
  fi
  ferretdb_lookup_indexes
  ferretdb_start
}

ferretdb_start() {
  mkdir -p "$FDB_DIR/state"
  start_bg "$FDB_DIR/ferretdb.pid" "$FDB_DIR/ferretdb.log" "$FDB" --handler=postgresql \
    --postgresql-url="$PG_URL" --listen-addr="$MONGO_HOST:$MONGO_PORT" --state-dir="$FDB_DIR/state" \
    --telemetry=disable --debug-addr="$FERRETDB_DEBUG_ADDR" --log-level=warn
  wait_mongo ferretdb "$FDB_DIR/ferretdb.pid" "$FDB_DIR/ferretdb.log"
  watchdog_collection
}

# pool_arithmetic: the services' pools below FerretDB's, FerretDB's within PostgreSQL's max_connections
# (see PG_URL above). Dies when FerretDB could deadlock or could not get its connections; says when
# there is no room for a FerretDB of a benchmark's or the chaos suite's own beside it.
pool_arithmetic() {
  local clients=$((SERVICES * SERVICE_POOL + CLIENT_ROOM)) max reserved usable
  ((FERRETDB_POOL_MAX_CONNS > clients)) ||
    die "ferretdb: pool_max_conns=$FERRETDB_POOL_MAX_CONNS must exceed $SERVICES services x MONGO_MAX_POOL_SIZE $SERVICE_POOL + $CLIENT_ROOM = $clients (docs/operations.md, \"Database pools\")"
  max=$(psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -tAc "show max_connections") || die "postgresql: cannot read max_connections"
  reserved=$(psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -tAc "show superuser_reserved_connections") || reserved=3
  usable=$((max - reserved))
  ((usable >= FERRETDB_POOL_MAX_CONNS + PG_ROOM)) ||
    die "postgresql: max_connections=$max (-$reserved reserved) cannot hold FerretDB's pool of $FERRETDB_POOL_MAX_CONNS + $PG_ROOM; raise max_connections or lower FERRETDB_POOL_MAX_CONNS"
  if ((usable < FERRETDB_POOL_MAX_CONNS + OWN_FERRETDB_POOL + PG_ROOM)); then
    say "postgresql: max_connections=$max (-$reserved reserved) leaves no room for a benchmark's or the chaos suite's FerretDB ($OWN_FERRETDB_POOL) beside this one ($FERRETDB_POOL_MAX_CONNS)"
  else
    say "postgresql: max_connections=$max (-$reserved reserved) holds FerretDB's pool ($FERRETDB_POOL_MAX_CONNS) + one of its own ($OWN_FERRETDB_POOL) + $PG_ROOM"
  fi
}

# ferretdb_goroutines: FerretDB's goroutine dump (its debug handler), or a line saying why there is none.
ferretdb_goroutines() {
  curl -fsS --max-time 10 "http://$FERRETDB_DEBUG_ADDR/debug/pprof/goroutine?debug=2" 2>&1 ||
    say "(no goroutine dump from http://$FERRETDB_DEBUG_ADDR: the debug handler did not answer)"
}

# ferretdb_recover: a FerretDB of this script that does not answer: its goroutine dump on stdout (and
# in $FDB_DIR/goroutines-<time>.txt), then a restart. False when there is no such FerretDB.
ferretdb_recover() {
  pid_of "$FDB_DIR/ferretdb.pid" ferretdb >/dev/null || { say "ferretdb: not started by infra.sh; not restarted"; return 1; }
  local dump
  dump="$FDB_DIR/goroutines-$(date -u +%Y%m%dT%H%M%SZ).txt"
  ferretdb_goroutines >"$dump"
  say "ferretdb: goroutine dump ($dump; waits counted first):"
  grep -oE '^goroutine [0-9]+ \[[^],]+' "$dump" | sed 's/^goroutine [0-9]* \[//' | sort | uniq -c | sort -rn | sed 's/^/  /' || true
  grep -oE 'metadata\.\(\*Registry\)\.[A-Za-z]+|pgxpool\.\(\*Pool\)\.[A-Za-z]+' "$dump" | sort | uniq -c | sort -rn | sed 's/^/  /' || true
  say "----- goroutine dump begin -----"
  cat "$dump"
  say "----- goroutine dump end -----"
  stop_pidfile ferretdb "$FDB_DIR/ferretdb.pid" ferretdb
  ferretdb_start
  say "ferretdb: restarted after it stopped answering"
}

mongod_up() {
  mkdir -p "$MONGOD_DIR/data"
  start_bg "$MONGOD_DIR/mongod.pid" "$MONGOD_DIR/mongod.log" mongod --dbpath "$MONGOD_DIR/data" \
    --bind_ip "$MONGO_HOST" --port "$MONGO_PORT"
  wait_mongo mongod "$MONGOD_DIR/mongod.pid" "$MONGOD_DIR/mongod.log"
}

# Who serves MONGO_URL, as far as this script knows.
mongo_owner() {
  local pid
  if pid=$(pid_of "$FDB_DIR/ferretdb.pid" ferretdb); then say "ferretdb pid $pid, started by infra.sh"
  elif pid=$(pid_of "$MONGOD_DIR/mongod.pid" mongod); then say "mongod pid $pid, started by infra.sh"
  else say "not started by infra.sh"; fi
}

mongo_up() {
  if mongo_ping "$MONGO_HOST" "$MONGO_PORT"; then
    say "mongo: reachable at $MONGO_URL ($(mongo_owner))"
    if pid_of "$FDB_DIR/ferretdb.pid" ferretdb >/dev/null; then
      ferretdb_lookup_indexes
      watchdog_collection
      # A ping can answer while updates hang (until a collection creation blocks the pings too).
      if ! mongo_check >/dev/null && ! mongo_check >/dev/null && ! mongo_check; then
        say "ferretdb: answers a ping but not a write: hung"
        ferretdb_recover
      fi
    fi
    return
  fi
  if pid_of "$FDB_DIR/ferretdb.pid" ferretdb >/dev/null; then
    # Ours and running: starting (it answers within 60 s), or hung (it does not: restarted).
    if wait_for 60 mongo_ping "$MONGO_HOST" "$MONGO_PORT"; then say "mongo: reachable at $MONGO_URL ($(mongo_owner))"; return; fi
    say "ferretdb: running but no answer to a ping for 60 s: hung"
    ferretdb_recover
    return
  fi
  tcp_open "$MONGO_HOST" "$MONGO_PORT" && die "mongo: $MONGO_HOST:$MONGO_PORT is open but does not answer a MongoDB ping"
  is_local "$MONGO_HOST" || die "mongo: not reachable at $MONGO_URL (not a local address, nothing to start)"
  if command -v mongod >/dev/null; then mongod_up; else ferretdb_up; fi
}

status() {
  local rc=0
  if tcp_open "$AMQP_HOST" "$AMQP_PORT"; then say "rabbitmq: reachable at $AMQP_URL"
  else say "rabbitmq: NOT reachable at $AMQP_URL"; rc=1; fi
  if tcp_open "$PG_HOST" "$PG_PORT"; then say "postgresql: reachable at $PG_HOST:$PG_PORT"
  else say "postgresql: NOT reachable at $PG_HOST:$PG_PORT"; fi
  if mongo_ping "$MONGO_HOST" "$MONGO_PORT"; then say "mongo: reachable at $MONGO_URL ($(mongo_owner))"
  else say "mongo: NOT reachable at $MONGO_URL"; rc=1; fi
  if [[ -x $FDB ]]; then say "ferretdb: binary $FDB (version $(fdb_version))"
  else say "ferretdb: not installed in $FDB_DIR"; fi
  return "$rc"
}

cmd=${1:-}
case $cmd in
  up | down)
    mkdir -p "$FDB_DIR" "$MONGOD_DIR"
    exec 9>"$CACHE/infra.lock"
    flock -w 900 9 || die "infra: another infra.sh holds $CACHE/infra.lock"
    if [[ $cmd == up ]]; then
      rabbitmq_up
      mongo_up
      say "infra: up (AMQP_URL=$AMQP_URL MONGO_URL=$MONGO_URL)"
    else
      stop_pidfile ferretdb "$FDB_DIR/ferretdb.pid" ferretdb
      [[ -f $MONGOD_DIR/mongod.pid ]] && stop_pidfile mongod "$MONGOD_DIR/mongod.pid" mongod
      say "infra: down (RabbitMQ and PostgreSQL are left running)"
    fi
    ;;
  status) status ;;
  check)
    if msg=$(mongo_check); then say "mongo: answers a ping and a write within ${CHECK_DEADLINE_S}s at $MONGO_URL"
    else say "mongo: $msg at $MONGO_URL"; exit 1; fi
    ;;
  recover | watchdog)
    mkdir -p "$FDB_DIR"
    if [[ $cmd == watchdog ]]; then
      interval=${TES_DB_WATCHDOG_INTERVAL_S:-10} fails=0 limit=${TES_DB_WATCHDOG_FAILS:-6}
      check_docs
      while ((fails < limit)); do
        sleep "$interval"
        if msg=$(mongo_check); then fails=0; continue; fi
        fails=$((fails + 1))
        say "db-watchdog: $(date -u +%H:%M:%S) $MONGO_URL: $msg ($fails of $limit in a row)"
      done
      say "db-watchdog: $MONGO_URL has not answered for $fails checks in a row: the database is hung"
    fi
    exec 9>"$CACHE/infra.lock"
    if ! flock -w 120 9; then
      say "infra: another infra.sh holds $CACHE/infra.lock: FerretDB not restarted"
      [[ $cmd == recover ]] && exit 1
      exit 3
    fi
    if [[ $cmd == recover ]]; then ferretdb_recover; exit; fi
    # Another run's watchdog (same server) may have restarted it while this one waited for the lock.
    if mongo_check >/dev/null; then say "db-watchdog: $MONGO_URL answers again (restarted meanwhile): not restarted"
    else ferretdb_recover || true; fi
    exit 3
    ;;
  *) die "usage: $0 up|down|status|check|recover|watchdog" ;;
esac
