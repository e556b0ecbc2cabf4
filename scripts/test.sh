#!/usr/bin/env bash
# Runs every test from a fresh clone: Node.js 24 (ensure_node), pnpm, install, infrastructure, build, lint (eslint: types and the
# workspace's boundaries), unused code (knip), the planner's eval gate (pnpm eval:planner), jest.
# Extra arguments go to jest. Ends with the line "tests: N passed, M failed"; exits with jest's code.
# Beside jest runs the database watchdog (infra.sh watchdog): a database that stops answering ends
# the run within about a minute, FerretDB's goroutine dump in this log (docs/operations.md, "The database watchdog").
# Env: AMQP_URL, MONGO_URL, TES_CACHE_DIR (see infra.sh); TES_T0 (epoch the elapsed time counts from).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

T0=${TES_T0:-$(date +%s)}
AMQP_URL_GIVEN=${AMQP_URL:-}
export AMQP_URL=${AMQP_URL:-$DEFAULT_AMQP_URL}
export MONGO_URL=${MONGO_URL:-$DEFAULT_MONGO_URL}
RESULTS=.run/jest-results.json

step=pnpm
# A failure before jest still ends with the summary line CI reads.
trap 'rc=$?; ((rc == 0)) || { say "test.sh: FAILED during $step (exit $rc) after $(($(date +%s) - T0))s"; say "tests: 0 passed, 1 failed"; }' EXIT
step=node
ensure_node
step=pnpm
ensure_pnpm
step="pnpm install"
pnpm install --frozen-lockfile
step=chromium
ensure_chromium
step="infra up"
bash scripts/infra.sh up
step="rabbitmq vhost"
if [[ -z $AMQP_URL_GIVEN ]] && RUN_VHOST=$(run_vhost_up); then
  export AMQP_URL="$DEFAULT_AMQP_URL/$RUN_VHOST"
  say "rabbitmq: this run uses virtual host $RUN_VHOST (deleted at the end)"
fi
step="pnpm build"
pnpm build
say "build: done"
# timed NAME CMD...: runs CMD as step NAME and says how long it took (a failure ends in the trap above).
timed() {
  local t=$SECONDS
  step=$1; shift
  "$@" || { local rc=$?; say "$step: failed after $((SECONDS - t))s"; return "$rc"; }
  say "$step: passed in $((SECONDS - t))s"
}
# The build leaves tests out: this checks them (and the type-level tests, e.g. delivery narrowing).
timed typecheck pnpm exec tsc -p tsconfig.check.json
timed lint pnpm lint
timed knip pnpm knip
# The planner's dev corpus (eval/planner): a plan with an unasked side effect or a wrong write fails the run.
timed "eval:planner" pnpm eval:planner
step="validate-deploy"
bash scripts/validate-deploy.sh
# promtool (built once through the Go module proxy, then cached) checks and unit-tests the alert rules in jest.
timed promtool bash scripts/promtool.sh

step=jest
mkdir -p .run
rm -f "$RESULTS"
# Every stack the tests start is listed here, and its databases and queues removed after jest.
export TES_STACK_LOG="$ROOT/.run/stacks.txt"
rm -f "$TES_STACK_LOG"
rc=0
# --forceExit: a handle a test leaves open must not keep the run alive after the results are written.
pnpm exec jest --ci --forceExit --json --outputFile="$RESULTS" "$@" &
jest_pid=$!
# The database watchdog (infra.sh watchdog): when the database stops answering a ping and a tiny
# write for about a minute (TES_DB_WATCHDOG_FAILS checks of TES_DB_CHECK_DEADLINE_S, every
# TES_DB_WATCHDOG_INTERVAL_S), it prints FerretDB's goroutine dump here and restarts it (one of
# infra.sh's), and jest is stopped: the run fails at once instead of waiting for every test's timeout.
HUNG=.run/database-hung
rm -f "$HUNG"
(
  bash scripts/infra.sh watchdog && exit 0
  [[ $? == 3 ]] || exit 0
  : >"$HUNG"
  say "test.sh: the database stopped answering: stopping jest (pid $jest_pid)"
  kill_tree "$jest_pid"
) &
watchdog_pid=$!
# Jest runs in the background (where SIGINT is ignored): Ctrl-C or a TERM stops it and the watchdog.
trap 'kill_tree "$jest_pid"; kill_tree "$watchdog_pid"; exit 130' INT TERM
wait "$jest_pid" || rc=$?
trap - INT TERM
kill_tree "$watchdog_pid"
wait "$watchdog_pid" 2>/dev/null || true
trap - EXIT
node --input-type=module -e '
  const { removeListedStacks } = await import("@tes/testing");
  console.log(`test.sh: removed the data of ${await removeListedStacks(process.argv[1])} test stacks`);
' "$TES_STACK_LOG" || say "test.sh: could not remove the test stacks' data (left in place)"
[[ -z ${RUN_VHOST:-} ]] || rabbitmqctl -q delete_vhost "$RUN_VHOST" >/dev/null 2>&1 || true

# passed = numPassedTests; failed = numFailedTests + failed suites with no failed test (a load error, or an
# error outside any test, such as an uncaught exception after the last one).
counts=$(node -e '
  const fs = require("fs"), f = process.argv[1];
  if (!fs.existsSync(f)) { console.log("0 0"); process.exit(0); }
  const r = JSON.parse(fs.readFileSync(f, "utf8"));
  const broken = r.testResults.filter((s) => s.status === "failed" && !s.assertionResults.some((a) => a.status === "failed")).length;
  console.log(r.numPassedTests, r.numFailedTests + broken);
' "$RESULTS") || counts="0 0"
read -r passed failed <<<"$counts"
if [[ -f $HUNG ]]; then
  say "test.sh: FAILED: the database at $MONGO_URL stopped answering during jest (FerretDB's goroutine dump above, \"goroutine dump begin\")"
  rc=1
  ((failed > 0)) || failed=1
elif ((rc == 0 && passed + failed == 0)); then
  say "test.sh: jest ran no test; that is a failure"
  rc=1
fi
say "test.sh: jest exit $rc, elapsed $(($(date +%s) - T0))s"
say "tests: $passed passed, $failed failed"
exit "$rc"
