#!/usr/bin/env bash
# Installs what one image runs, from the workspace's lockfile and offline (the pnpm store holds every
# package already: `pnpm fetch`/`pnpm install` filled it). Run at the repository root after `pnpm build`.
#
#   bash deploy/tools/install-service.sh SERVICE OUT     one service: OUT/dist/main.js + its production node_modules
#   bash deploy/tools/install-service.sh --admin OUT     the operator CLI: OUT/scripts/admin.mjs and the CLI of
#                                                        every service that has one (OUT/services/<service>)
#
# `pnpm deploy` without --legacy (injectWorkspacePackages in pnpm-workspace.yaml) derives the
# image's lockfile from pnpm-lock.yaml, so an image gets exactly the versions the tests ran with;
# --legacy resolved the versions again (and failed offline). Used by deploy/Dockerfile and
# test/deploy/image-install.test.ts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

SERVICES=(gateway task-orchestrator executor oauth-vault webhook-dispatcher)

die() {
  printf 'install-service: %s\n' "$*" >&2
  exit 1
}

# deploy_one SERVICE DIR: the built service with its production dependencies, without its sources.
deploy_one() {
  local service=$1 dir=$2
  [[ " ${SERVICES[*]} " == *" $service "* ]] || die "unknown service '$service' (one of: ${SERVICES[*]})"
  [[ -f services/$service/dist/main.js ]] || die "services/$service/dist/main.js was not built (pnpm build first)"
  [[ ! -e $dir ]] || die "$dir exists already"
  pnpm --offline --filter "@tes/$service" --prod deploy "$dir"
  rm -rf "$dir/src" "$dir/test" "$dir/tsconfig.json" "$dir/tsconfig.tsbuildinfo"
}

(($# == 2)) || die "usage: install-service.sh SERVICE|--admin OUT"
out=$2
if [[ $1 == --admin ]]; then
  # Every service whose package has a command line (dist/cli.js): scripts/admin.mjs routes to them.
  for service in "${SERVICES[@]}"; do
    [[ -f services/$service/src/cli.ts ]] || continue
    [[ -f services/$service/dist/cli.js ]] || die "services/$service/dist/cli.js was not built (pnpm build first)"
    deploy_one "$service" "$out/services/$service"
  done
  mkdir -p "$out/scripts"
  cp scripts/admin.mjs deploy/bootstrap.cjs "$out/scripts/"
else
  deploy_one "$1" "$out"
fi
