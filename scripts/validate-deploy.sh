#!/usr/bin/env bash
# Validates the deployment files statically (these machines have no Docker engine and no cluster):
#   docker-compose.yml  (evaluation profile) and docker-compose.prod.yml (production profile): Debian's
#                       docker-compose (v1) `config -q`, and compose-go (the loader of `docker compose`
#                       v2: Compose Specification schema) plus the project's rules; the production
#                       file must require every secret (it must not load without one), run every
#                       service with NODE_ENV=production and a MongoDB user of its own
#   deploy/Dockerfile   BuildKit's Dockerfile checks (the `docker build --check` rules) and the
#                       project's rules (non-root, tini, HEALTHCHECK, CMD); hadolint if on PATH
#   deploy/k8s          `kustomize build` of every overlay; each object decoded strictly against the
#                       Kubernetes API types (k8s.io/api), or the fields of KEDA, the Prometheus
#                       Operator and the Gateway API; cross-references. The prod overlay is built
#                       with overlays/prod/site.env (the operator's values) and refused while its
#                       output holds a placeholder; without a site.env it is built from
#                       site.env.example and only its structure is checked (VALIDATE_REQUIRE_SITE=1:
#                       a missing site.env is an error)
#   environments        compose and overlay env of each service accepted by its config schema
#                       (needs `pnpm build`; skipped with a note otherwise)
#   scripts             node --check of deploy/*.cjs, shellcheck of this script
# Installs what it needs into $TES_CACHE_DIR/bin (default ~/.cache/tes/bin): kustomize and the
# validator (deploy/tools/validate) through the Go module proxy, docker-compose with apt-get.
# Idempotent; prints what it checked and the time it took; exits 1 if anything is invalid.
# Env: TES_CACHE_DIR, VALIDATE_VERBOSE=1 (print every passed check), VALIDATE_REQUIRE_SITE=1.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

T0=$(date +%s)
KUSTOMIZE_VERSION=v5.7.1
BIN=${TES_CACHE_DIR:-$HOME/.cache/tes}/bin
OVERLAYS=(dev prod)
export PATH=$BIN:$PATH:/usr/local/go/bin
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
mkdir -p "$BIN"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

failed=()
say() { printf '%s\n' "$*"; }
step() { printf '\n== %s\n' "$*"; }
# run NAME CMD...: runs a check, records a failure under NAME.
run() {
  local name=$1
  shift
  if "$@"; then say "  => $name: valid"; else
    say "  => $name: INVALID"
    failed+=("$name")
  fi
}

# ---- tools ----
step "tools (cache: $BIN)"
command -v go >/dev/null || { say "go is required (Go module proxy) and was not found"; exit 1; }

kustomize_ok() { [[ -x $BIN/kustomize ]] && [[ $("$BIN/kustomize" version 2>/dev/null) == *"$KUSTOMIZE_VERSION"* ]]; }
if ! kustomize_ok; then
  say "kustomize: installing $KUSTOMIZE_VERSION with go install"
  if ! GOBIN=$BIN go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" >"$WORK/kustomize.log" 2>&1; then
    say "kustomize: go install failed; building it from a temporary module"
    mod=$WORK/kustomize-mod
    mkdir -p "$mod"
    (cd "$mod" && go mod init tes.example/kustomize-build && go get "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" &&
      go build -o "$BIN/kustomize" sigs.k8s.io/kustomize/kustomize/v5) >>"$WORK/kustomize.log" 2>&1 || true
  fi
fi
if kustomize_ok; then
  KUSTOMIZE=("$BIN/kustomize" build)
  say "kustomize: $("$BIN/kustomize" version)"
elif command -v kubectl >/dev/null; then
  KUSTOMIZE=(kubectl kustomize)
  say "kustomize: could not be installed ($(tail -n 1 "$WORK/kustomize.log")); using kubectl's built-in kustomize"
else
  cat "$WORK/kustomize.log"
  say "kustomize: could not be installed and kubectl is missing"
  exit 1
fi

# The validator is rebuilt when its sources change: one binary per hash of its sources, so checkouts
# sharing the cache (worktrees) never run each other's. tes-deploy-validate (and its .stamp) is the
# one of this checkout's last run, for the tests that call it directly.
src_hash=$(cat deploy/tools/validate/go.mod deploy/tools/validate/go.sum deploy/tools/validate/*.go | sha256sum | cut -c1-16)
VALIDATE=$BIN/tes-deploy-validate-$src_hash
if [[ ! -x $VALIDATE ]]; then
  say "validator: building deploy/tools/validate (sources changed; with an empty Go module cache this takes minutes)"
  if ! (cd deploy/tools/validate && go build -o "$VALIDATE.tmp.$$" .) >"$WORK/validate-build.log" 2>&1; then
    cat "$WORK/validate-build.log"
    say "validator: build failed"
    exit 1
  fi
  mv -f "$VALIDATE.tmp.$$" "$VALIDATE"
fi
if [[ $(cat "$BIN/tes-deploy-validate.stamp" 2>/dev/null) != "$src_hash" ]]; then
  cp -f "$VALIDATE" "$BIN/tes-deploy-validate.tmp.$$" && mv -f "$BIN/tes-deploy-validate.tmp.$$" "$BIN/tes-deploy-validate"
  printf '%s\n' "$src_hash" >"$BIN/tes-deploy-validate.stamp"
fi
say "validator: $VALIDATE ($(go version | cut -d' ' -f3), sources $src_hash)"

if ! command -v docker-compose >/dev/null && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
  say "docker-compose: installing Debian's package"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose; } >"$WORK/apt.log" 2>&1 ||
    say "docker-compose: apt-get failed: $(tail -n 1 "$WORK/apt.log")"
fi
if command -v docker-compose >/dev/null; then say "docker-compose: $(docker-compose version --short 2>/dev/null)"; fi

# ---- docker-compose.yml (evaluation) and docker-compose.prod.yml (production) ----
for profile in evaluation production; do
  file=docker-compose.yml name=compose
  [[ $profile == production ]] && file=docker-compose.prod.yml name=compose-prod
  step "$file ($profile profile)"
  # The production file requires its secrets: the validator writes random sample values for them.
  run "compose-go (Compose Specification) + project rules ($profile)" "$VALIDATE" compose -profile "$profile" -name "$name" \
    -env-out "$WORK/env-$name.json" -sample-env-out "$WORK/sample-$name.env" "$file"
  if command -v docker-compose >/dev/null; then
    # No engine is contacted by `config`; DOCKER_HOST points nowhere to make sure of it.
    sample=()
    [[ -s $WORK/sample-$name.env ]] && sample=(--env-file "$WORK/sample-$name.env")
    run "docker-compose config -q (Debian docker-compose, Compose file v1 schema)" \
      env DOCKER_HOST=unix:///nonexistent docker-compose "${sample[@]}" -f "$file" config -q
  else
    say "  not checked with docker-compose v1: not installed (needs root and apt-get)"
  fi
done

# ---- Dockerfile ----
step "deploy/Dockerfile"
run "BuildKit Dockerfile checks + project rules" "$VALIDATE" dockerfile deploy/Dockerfile
if command -v hadolint >/dev/null; then
  run "hadolint" hadolint deploy/Dockerfile
else
  say "  hadolint: not run (a Haskell binary with no Debian package; npm and pip only wrap a download)"
fi
check_mjs() {
  local f
  for f in deploy/*.cjs deploy/tools/*.cjs deploy/k8s/mongo-users.js; do node --check "$f" || return 1; done
}
run "node --check deploy/*.cjs deploy/tools/*.cjs deploy/k8s/mongo-users.js" check_mjs

# ---- Kubernetes ----
# Values an operator must replace; none may reach the rendered prod overlay.
PLACEHOLDERS='REPLACE_ME|CHANGE_ME|example\.(com|org|net)|\.invalid\b|192\.0\.2\.|\btes\.local\b'
# no_placeholders FILE: fails, listing them, when the rendered manifests still hold a placeholder.
no_placeholders() {
  if grep -nE "$PLACEHOLDERS" "$1" >"$WORK/placeholders.txt"; then
    sed 's/^/    /' "$WORK/placeholders.txt" | head -n 20
    return 1
  fi
}
for overlay in "${OVERLAYS[@]}"; do
  step "deploy/k8s/overlays/$overlay"
  out=$WORK/$overlay.yaml
  dir=deploy/k8s/overlays/$overlay
  strict_site=false
  if [[ $overlay == prod ]]; then
    if [[ -f $dir/site.env ]]; then
      strict_site=true
      say "  site.env: present (the operator's values): placeholders are refused"
    elif [[ ${VALIDATE_REQUIRE_SITE:-} == 1 ]]; then
      say "  => $dir/site.env missing (copy site.env.example and fill it): INVALID"
      failed+=("prod site.env")
      continue
    else
      # A copy of deploy/k8s with the template as site.env: the structure is checked, not the values.
      cp -r deploy/k8s "$WORK/k8s"
      cp "$WORK/k8s/overlays/prod/site.env.example" "$WORK/k8s/overlays/prod/site.env"
      dir=$WORK/k8s/overlays/prod
      say "  site.env: absent, built with site.env.example (structure only; a deploy needs site.env without placeholders)"
    fi
  fi
  if "${KUSTOMIZE[@]}" "$dir" >"$out" 2>"$WORK/$overlay.err"; then
    say "  kustomize build: $(grep -c '^kind:' "$out") objects ($(grep '^kind:' "$out" | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $3; sep=", "}'))"
    run "$overlay: strict API types, KEDA, monitoring and Gateway API fields, references" \
      "$VALIDATE" k8s -name "$overlay" -secrets deploy/k8s/secret.example.yaml -env-out "$WORK/env-$overlay.json" "$out"
    if $strict_site; then run "$overlay: no placeholder left (site.env filled in)" no_placeholders "$out"; fi
  else
    cat "$WORK/$overlay.err"
    say "  => kustomize build $overlay: INVALID"
    failed+=("kustomize build $overlay")
  fi
done
step "deploy/k8s/create-account-job.example.yaml (not in an overlay)"
run "create-account Job: strict API types, references" "$VALIDATE" k8s -name create-account-job -secrets deploy/k8s/secret.example.yaml deploy/k8s/create-account-job.example.yaml
say "  kubeconform: not run (its Kubernetes JSON schemas are downloaded at run time, not embedded; this"
say "  machine reaches no schema host). The strict decoding above uses the Go API types instead."

# ---- environments against the services' config schemas ----
step "service environments (compose, compose-prod, ${OVERLAYS[*]}) against services/*/src/config.ts"
envs=("$WORK"/env-*.json)
rc=0
node deploy/tools/check-env.cjs "${envs[@]}" || rc=$?
if ((rc == 2)); then
  say "  => not checked: the workspace is not built"
elif ((rc == 0)); then
  say "  => environments: valid"
else
  say "  => environments: INVALID"
  failed+=("service environments")
fi

# ---- this script ----
step "scripts"
if command -v shellcheck >/dev/null; then
  run "shellcheck scripts/validate-deploy.sh" shellcheck scripts/validate-deploy.sh
else
  say "  shellcheck: not installed, skipped"
fi

printf '\n'
elapsed=$(($(date +%s) - T0))
if ((${#failed[@]} > 0)); then
  say "validate-deploy: ${#failed[@]} invalid: $(printf '%s; ' "${failed[@]}")(${elapsed}s)"
  exit 1
fi
say "validate-deploy: all valid (${elapsed}s)"
