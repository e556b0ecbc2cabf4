# shellcheck shell=bash disable=SC2016,SC2034  # SC2016: bash -c '...' args; SC2034: used by the sourcing scripts
# Helpers shared by scripts/*.sh and .ci/run. Source it; it defines ROOT, defaults and functions only.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PNPM_VERSION=10.34.8
DEFAULT_AMQP_URL=amqp://guest:guest@127.0.0.1:5672
DEFAULT_MONGO_URL=mongodb://127.0.0.1:27017

say() { printf '%s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# url_hostport URL DEFAULT_PORT: prints "host port" of the URL's (first) host.
url_hostport() {
  local rest=${1#*://}
  rest=${rest%%[/?]*}  # drop path and query
  rest=${rest##*@}     # drop credentials
  rest=${rest%%,*}     # first host of a list
  if [[ $rest == *:* ]]; then say "${rest%:*} ${rest##*:}"; else say "$rest $2"; fi
}

# tcp_open HOST PORT: true when something accepts a TCP connection there.
tcp_open() { timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>/dev/null; }

# wait_for SECONDS CMD...: runs CMD every second until it succeeds; false on timeout.
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 1
  done
}

# pid_of PIDFILE MARKER: prints the pid if it is alive and its command line contains MARKER.
pid_of() {
  local pid
  [[ -f $1 ]] && pid=$(<"$1") && [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$2" && say "$pid"
}

# stop_pidfile NAME PIDFILE MARKER: SIGTERM, wait up to 15 s, then SIGKILL; removes the pid file.
stop_pidfile() {
  local name=$1 pidfile=$2 pid
  if ! pid=$(pid_of "$pidfile" "$3"); then
    say "$name: not running (no live pid in $pidfile)"
    rm -f "$pidfile"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 15))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if ! kill -0 "$pid" 2>/dev/null; then
    say "$name: stopped (pid $pid)"
  else
    kill -KILL "$pid" 2>/dev/null || true
    say "$name: killed after 15 s (pid $pid)"
  fi
  rm -f "$pidfile"
}

# kill_tree PID: SIGTERM to PID and every process under it, all listed first, PID first.
kill_tree() {
  local pid
  for pid in $(tree_pids "$1"); do kill -TERM "$pid" 2>/dev/null || true; done
}
tree_pids() {
  local child
  say "$1"
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null || true); do tree_pids "$child"; done
}

# The Node.js the project runs on (.nvmrc, engines, deploy/Dockerfile say the same).
NODE_VERSION=24.21.0
NODE_MAJOR=${NODE_VERSION%%.*}

# ensure_node: a machine whose node is older than $NODE_MAJOR gets node $NODE_VERSION from the npm
# registry's node-linux-<arch> package (Node.js's own binary build), unpacked once into
# $TES_CACHE_DIR/node-$NODE_VERSION (default ~/.cache/tes) and put first on PATH, so pnpm, jest and
# every service started after it run on it. Offline once cached. Prints `node: vX (path)`.
ensure_node() {
  local have
  have=$(node --version 2>/dev/null || true)
  have=${have#v}
  if [[ -n $have ]] && ((${have%%.*} >= NODE_MAJOR)); then
    say "node: v$have ($(command -v node))"
    return 0
  fi
  local cache=${TES_CACHE_DIR:-$HOME/.cache/tes} arch
  local dir=$cache/node-$NODE_VERSION
  case $(uname -m) in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "node: v${have:-none} is older than $NODE_MAJOR and no node-linux package exists for $(uname -m); install Node.js $NODE_VERSION" ;;
  esac
  if [[ $("$dir/bin/node" --version 2>/dev/null) != "v$NODE_VERSION" ]]; then
    command -v npm >/dev/null 2>&1 || die "node: npm is needed to fetch node-linux-$arch@$NODE_VERSION"
    say "node: v${have:-none} is older than $NODE_MAJOR; installing node-linux-$arch@$NODE_VERSION into $dir"
    mkdir -p "$cache"
    local tmp
    tmp=$(mktemp -d "$cache/.node-$NODE_VERSION.XXXXXX")
    # npm pack checks the tarball against the registry's integrity hash; run outside the repo (its .npmrc is pnpm's).
    if ! (cd "$tmp" && timeout 600 npm pack --silent "node-linux-$arch@$NODE_VERSION" >/dev/null &&
      tar -xzf "node-linux-$arch-$NODE_VERSION.tgz" && [[ $(package/bin/node --version) == "v$NODE_VERSION" ]]); then
      rm -rf "$tmp"
      die "node: could not fetch node-linux-$arch@$NODE_VERSION from the npm registry"
    fi
    rm -rf "$dir.old"
    [[ -e $dir ]] && mv "$dir" "$dir.old" # a broken earlier copy
    # One rename: a concurrent run sees either no directory or a whole one (if it won, keep its copy).
    mv -T "$tmp/package" "$dir" 2>/dev/null || [[ $("$dir/bin/node" --version 2>/dev/null) == "v$NODE_VERSION" ]] ||
      die "node: could not move node $NODE_VERSION into $dir"
    rm -rf "$tmp" "$dir.old"
  fi
  export PATH="$dir/bin:$PATH"
  hash -r
  say "node: $(node --version) ($(command -v node))"
}

ensure_pnpm() {
  if ! command -v pnpm >/dev/null 2>&1; then
    say "pnpm: not found, installing pnpm@$PNPM_VERSION with npm"
    npm install -g "pnpm@$PNPM_VERSION" >/dev/null
  fi
  say "pnpm: $(pnpm --version)"
}

# run_vhost_up: creates a RabbitMQ virtual host for one test run and prints its name; deletes the
# ones older runs left behind (over 6 hours old). A broker that outlives runs (a reused CI machine,
# a laptop) then never piles up the tests' durable queues. False when rabbitmqctl is not usable.
run_vhost_up() {
  command -v rabbitmqctl >/dev/null || return 1
  local now name
  now=$(date +%s)
  for name in $(rabbitmqctl -q list_vhosts name --no-table-headers 2>/dev/null | grep '^tes-test-' || true); do
    local born=${name#tes-test-}; born=${born%%-*}
    [[ $born =~ ^[0-9]+$ ]] && ((now - born > 21600)) && rabbitmqctl -q delete_vhost "$name" >/dev/null 2>&1
  done
  name="tes-test-$now-$$"
  rabbitmqctl -q add_vhost "$name" >/dev/null 2>&1 || return 1
  rabbitmqctl -q set_permissions -p "$name" guest '.*' '.*' '.*' >/dev/null 2>&1 || return 1
  say "$name"
}

# ensure_chromium: the dashboard's browser tests drive Debian's Chromium (playwright-core downloads
# no browser). Installed with apt-get when missing and we are root; otherwise says how, and goes on.
ensure_chromium() {
  command -v chromium >/dev/null 2>&1 && return 0
  if ((EUID == 0)) && command -v apt-get >/dev/null 2>&1; then
    say "chromium: installing Debian's chromium for the browser tests"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null && return 0
  fi
  say "chromium: not installed; the dashboard browser tests will fail (install it: apt-get install chromium)"
}
