#!/usr/bin/env bash
# Local infrastructure for development and tests.  Usage: scripts/infra.sh up|down|status
#   RabbitMQ at AMQP_URL: used if reachable, else started with `rabbitmq-server -detached`.
#   MongoDB wire at MONGO_URL: used if it answers a ping, else `mongod` if on PATH, else FerretDB
#   v1.24.2 on PostgreSQL (built from source into the cache dir on first use).
#   down stops only what this script started (mongod/FerretDB); RabbitMQ and PostgreSQL stay up.
# Env: AMQP_URL, MONGO_URL, TES_CACHE_DIR (default ~/.cache/tes). Exports nothing.
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
# FerretDB keeps up to pool_max_conns PostgreSQL connections (default 50, idle ones kept for pgx's
# default 30 min). An update holds two of them at once (its query and its write), so a pool that
# fills up stalls updates; PostgreSQL's default max_connections (100) must also leave room for the
# chaos suite's own FerretDB (test/chaos/infra.ts): 40 each, idle ones closed after 1 min.
PG_URL="postgres://postgres@$PG_HOST:$PG_PORT/ferretdb?pool_max_conns=40&pool_max_conn_idle_time=1m"
read -r AMQP_HOST AMQP_PORT < <(url_hostport "$AMQP_URL" 5672)
read -r MONGO_HOST MONGO_PORT < <(url_hostport "$MONGO_URL" 27017)
export PATH=$PATH:/usr/local/go/bin

fdb_version() { "$FDB" --version 2>/dev/null | sed -n 's/^version: //p'; }

is_local() { [[ $1 == localhost || $1 == 127.* || $1 == ::1 ]]; }

# mongo_ping HOST PORT: sends OP_MSG {ping: 1, $db: "admin"} and looks for ok: 1 in the reply.
mongo_ping() (
  exec 3<>"/dev/tcp/$1/$2" || exit 1
  # shellcheck disable=SC2016  # $db is a BSON key, not a variable
  printf '\x33\0\0\0\x01\0\0\0\0\0\0\0\xdd\x07\0\0\0\0\0\0\0\x1e\0\0\0\x10ping\0\x01\0\0\0\x02$db\0\x06\0\0\0admin\0\0' >&3
  reply=$(timeout 5 dd bs=4096 count=1 status=none <&3 | od -An -tx1 | tr -d ' \n')
  [[ $reply == *016f6b00000000000000f03f* || $reply == *106f6b0001000000* ]]
) 2>/dev/null

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
  psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -d ferretdb -q -v ON_ERROR_STOP=1 \
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
  if [[ -z $(psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -tAc "select 1 from pg_database where datname='ferretdb'") ]]; then
    createdb -h "$PG_HOST" -p "$PG_PORT" -U postgres ferretdb
    say "postgresql: created database ferretdb"
  fi
  ferretdb_lookup_indexes
  mkdir -p "$FDB_DIR/state"
  start_bg "$FDB_DIR/ferretdb.pid" "$FDB_DIR/ferretdb.log" "$FDB" --handler=postgresql \
    --postgresql-url="$PG_URL" --listen-addr="$MONGO_HOST:$MONGO_PORT" --state-dir="$FDB_DIR/state" \
    --telemetry=disable --debug-addr="${FERRETDB_DEBUG_ADDR:-127.0.0.1:8088}" --log-level=warn
  wait_mongo ferretdb "$FDB_DIR/ferretdb.pid" "$FDB_DIR/ferretdb.log"
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
    if pid_of "$FDB_DIR/ferretdb.pid" ferretdb >/dev/null; then ferretdb_lookup_indexes; fi
    return
  fi
  if pid_of "$FDB_DIR/ferretdb.pid" ferretdb >/dev/null; then wait_mongo ferretdb "$FDB_DIR/ferretdb.pid" "$FDB_DIR/ferretdb.log"; return; fi
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
  *) die "usage: $0 up|down|status" ;;
esac
