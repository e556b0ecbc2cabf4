#!/usr/bin/env bash
# Starts the whole system locally: Node.js 24 (ensure_node), pnpm, install, infrastructure, build, the five services in the
# background (logs .run/logs/, pids .run/pids/), a demo account on first run; prints keys and a curl.
# Stop everything with scripts/down.sh. Env: AMQP_URL, MONGO_URL, TES_CACHE_DIR; the rest passes through.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

export AMQP_URL=${AMQP_URL:-$DEFAULT_AMQP_URL}
export MONGO_URL=${MONGO_URL:-$DEFAULT_MONGO_URL}
# A local stack: webhooks and custom tools may reach receivers on this machine (docs/operations.md).
export OUTBOUND_ALLOW_PRIVATE=${OUTBOUND_ALLOW_PRIVATE:-true}
SERVICES=(gateway task-orchestrator executor oauth-vault webhook-dispatcher)
BASE_URL=https://127.0.0.1:8443/v1
DEMO=.run/demo-account.json

# service_env NAME: the ports of one service, as env assignments.
service_env() {
  case $1 in
    gateway) echo OPS_PORT=8080 PORT=8443 HTTP_PORT=8081 ;;
    task-orchestrator) echo OPS_PORT=8090 ;;
    executor) echo OPS_PORT=8091 ;;
    oauth-vault) echo OPS_PORT=8092 PUBLIC_PORT=8093 ;;
    webhook-dispatcher) echo OPS_PORT=8094 ;;
  esac
}

ensure_node
ensure_pnpm
pnpm install --frozen-lockfile
bash scripts/infra.sh up
pnpm build
say "build: done"

missing=()
for name in "${SERVICES[@]}"; do
  [[ -f services/$name/dist/main.js ]] || missing+=("services/$name/dist/main.js")
done
((${#missing[@]} == 0)) || die "not built yet (does the service exist?): ${missing[*]}"

mkdir -p .run/logs .run/pids
for name in "${SERVICES[@]}"; do
  if pid=$(pid_of ".run/pids/$name.pid" "services/$name/dist/main.js"); then
    say "$name: already running (pid $pid; scripts/down.sh first to run a new build)"
    continue
  fi
  read -ra ports <<<"$(service_env "$name")"
  # As packages/testing's serviceNodeArgs: the orchestrator's heap as its 512 MiB container gets it (docs/operations.md#memory).
  flags=(--max-semi-space-size=1)
  if [[ $name == task-orchestrator ]]; then flags+=(--max-old-space-size=256); fi
  nohup env "${ports[@]}" node "${flags[@]}" "services/$name/dist/main.js" >>".run/logs/$name.log" 2>&1 </dev/null &
  say $! >".run/pids/$name.pid"
  say "$name: started (pid $!, ${ports[*]}, log .run/logs/$name.log)"
done

for name in "${SERVICES[@]}"; do
  read -ra ports <<<"$(service_env "$name")"
  ops=${ports[0]#OPS_PORT=}
  start=$SECONDS
  until curl -fsS -o /dev/null "http://127.0.0.1:$ops/readyz" 2>/dev/null; do
    if ! pid_of ".run/pids/$name.pid" "services/$name/dist/main.js" >/dev/null || ((SECONDS - start >= 60)); then
      say "$name: last log lines (.run/logs/$name.log):"
      tail -n 30 ".run/logs/$name.log" || true
      die "$name: not ready on http://127.0.0.1:$ops/readyz (exited or timed out after 60 s); stop all with scripts/down.sh"
    fi
    sleep 1
  done
  say "$name: ready (http://127.0.0.1:$ops/readyz)"
done

if [[ -f $DEMO ]]; then
  say "demo account: reusing $DEMO"
else
  [[ -f scripts/admin.mjs ]] || die "scripts/admin.mjs is missing; cannot create the demo account"
  node scripts/admin.mjs accounts create --name demo >"$DEMO.tmp" || { rm -f "$DEMO.tmp"; die "demo account: admin.mjs failed"; }
  mv "$DEMO.tmp" "$DEMO"
  say "demo account: created, saved to $DEMO"
fi

# field PATH: one field of the demo account JSON, e.g. api_keys.test
field() { node -e 'const a = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(process.argv[2].split(".").reduce((o, k) => o?.[k], a) ?? "?")' "$DEMO" "$1"; }
test_key=$(field api_keys.test)

cat <<EOF

The system is up. API base URL: $BASE_URL (self-signed certificate: use curl -k)
  account:              $(field account_id)
  test API key:         $test_key
  live API key:         $(field api_keys.live)
  webhook secret test:  $(field webhook_secrets.test)
  webhook secret live:  $(field webhook_secrets.live)

Create a task:
  curl -k -X POST $BASE_URL/tasks -H 'Authorization: Bearer $test_key' -H 'Content-Type: application/json' -d '{"prompt": "Say hello", "mode": "test"}'

Logs: .run/logs/   Stop everything: bash scripts/down.sh
EOF
