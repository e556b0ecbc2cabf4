#!/usr/bin/env bash
# Stops what scripts/up.sh started: the five services (SIGTERM, up to 15 s, then SIGKILL), then
# scripts/infra.sh down (FerretDB/mongod if infra.sh started it; RabbitMQ and PostgreSQL stay up).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

for name in gateway task-orchestrator executor oauth-vault webhook-dispatcher; do
  stop_pidfile "$name" ".run/pids/$name.pid" "services/$name/dist/main.js"
done
bash scripts/infra.sh down
