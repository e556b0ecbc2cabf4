#!/usr/bin/env bash
# Installs the peer of `pnpm bench:peer` into ~/.cache/tes/peer (cached: a second run downloads nothing):
#  - the Temporal CLI, whose `temporal server start-dev` is a whole Temporal server on an in-memory
#    SQLite, built from the Go module proxy (v1.5.1: later versions replace a nested module, cliext,
#    that the proxy does not serve, so neither `go install` nor a build of their module zip works);
#  - the Temporal TypeScript SDK from the npm registry (its worker ships a prebuilt linux-x64 core bridge).
# Nothing of the peer is kept in the repository.
set -euo pipefail

PEER_DIR="${TES_PEER_DIR:-$HOME/.cache/tes/peer}"
CLI_VERSION=v1.5.1
SDK_VERSION=1.24.0
mkdir -p "$PEER_DIR/bin" "$PEER_DIR/node"

if [ ! -x "$PEER_DIR/bin/temporal" ]; then
  echo "peer: building the Temporal CLI $CLI_VERSION (several minutes on two cores)" >&2
  # The machine's module proxy only (as configured in `go env`), never `direct`; a hard bound on the whole download and build.
  proxy=$(go env GOPROXY | tr ',|' '\n' | grep -v -e '^direct$' -e '^off$' | paste -sd, -)
  [ -n "$proxy" ] || { echo "peer: GOPROXY names no module proxy ($(go env GOPROXY))" >&2; exit 1; }
  GOPROXY="$proxy" GOFLAGS=-mod=mod GOBIN="$PEER_DIR/bin" \
    timeout 1800 go install "github.com/temporalio/cli/cmd/temporal@$CLI_VERSION"
fi

if [ ! -f "$PEER_DIR/node/node_modules/@temporalio/worker/package.json" ]; then
  echo "peer: installing the Temporal TypeScript SDK $SDK_VERSION" >&2
  cd "$PEER_DIR/node"
  [ -f package.json ] || echo '{"name":"tes-peer","private":true}' >package.json
  timeout 600 npm install --no-audit --no-fund \
    "@temporalio/worker@$SDK_VERSION" "@temporalio/client@$SDK_VERSION" \
    "@temporalio/workflow@$SDK_VERSION" "@temporalio/activity@$SDK_VERSION"
fi

# The worker's native bridge must load on this Node.
(cd "$PEER_DIR/node" && node -e "require('@temporalio/worker')") || {
  echo "peer: the Temporal worker does not load on node $(node --version) here" >&2
  exit 1
}
"$PEER_DIR/bin/temporal" --version >&2
