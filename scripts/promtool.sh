#!/usr/bin/env bash
# Prints the path of a promtool binary, building it first if it is not cached.
# promtool is built from source through the Go module proxy (no prebuilt download is reachable):
#   go install github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION
# with -tags remove_all_sd (skips the service-discovery SDKs promtool does not need here), GOFLAGS=-mod=mod
# and GOPROXY without a `direct` fallback (there is no internet; a direct fetch hangs for minutes).
# The binary goes to $TES_CACHE_DIR/promtool-<version>/promtool (default ~/.cache/tes), installed
# atomically (built in a temporary directory, then renamed) and reused when present.
# Progress goes to stderr; stdout carries only the path. The build is bounded by `timeout 900`.
# Usage: bash scripts/promtool.sh            prints the path (builds if needed)
#        bash scripts/promtool.sh ARGS...    runs promtool ARGS...
set -euo pipefail
PROMTOOL_VERSION=${PROMTOOL_VERSION:-v0.316.0}
CACHE=${TES_CACHE_DIR:-$HOME/.cache/tes}
DEST=$CACHE/promtool-$PROMTOOL_VERSION
BIN=$DEST/promtool
log() { printf 'promtool: %s\n' "$*" >&2; }

if [[ ! -x $BIN ]]; then
  export PATH=$PATH:/usr/local/go/bin
  command -v go >/dev/null || { log "go is required (Go module proxy) and was not found"; exit 1; }
  # The machine's proxy list without `direct` (and without `off`): only module proxies are reachable.
  proxy=$(go env GOPROXY | tr ',|' '\n' | grep -v -e '^direct$' -e '^off$' | paste -sd, -)
  [[ -n $proxy ]] || { log "GOPROXY names no module proxy ($(go env GOPROXY))"; exit 1; }
  mkdir -p "$CACHE"
  tmp=$(mktemp -d "$CACHE/.promtool-build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  log "building $PROMTOOL_VERSION with $(go version | cut -d' ' -f3) through $proxy (first build: several minutes)"
  t0=$(date +%s)
  # -v and "go: downloading" lines are the progress; the log keeps them for a failure's tail.
  timeout 900 env GOPROXY="$proxy" GOFLAGS=-mod=mod GOTOOLCHAIN=local GOBIN="$tmp/bin" \
    go install -v -tags remove_all_sd "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION" 2>&1 |
    tee "$tmp/build.log" | sed -u 's/^/promtool: /' >&2 || true
  if [[ ! -x $tmp/bin/promtool ]]; then
    tail -n 20 "$tmp/build.log" >&2
    log "build failed or timed out after $(($(date +%s) - t0))s"
    exit 1
  fi
  mkdir -p "$tmp/dest" && mv "$tmp/bin/promtool" "$tmp/dest/promtool"
  # Rename of a whole directory: another build that finished first wins, ours is dropped.
  mv -T "$tmp/dest" "$DEST" 2>/dev/null || true
  rm -rf "$tmp" # before a possible exec below, which skips the EXIT trap
  log "built in $(($(date +%s) - t0))s: $BIN"
fi

if (($# == 0)); then
  printf '%s\n' "$BIN"
else
  exec "$BIN" "$@"
fi
