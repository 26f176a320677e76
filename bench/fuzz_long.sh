#!/usr/bin/env bash
# A long fuzzing campaign over the readers (docs/fuzzing.md): both libFuzzer
# targets, RUNS executions in all (shared 60/40 between fuzz-ingest and
# fuzz-report), at the lowest priority, one process at a time. What the
# fuzzer finds is kept in BUILD/corpus for the next campaign; a crash stops
# it with the input in BUILD/artifacts. The log goes to BUILD/fuzz-long.log.
#
#   bench/fuzz_long.sh [RUNS] [BUILD]      defaults: 10000000 build-fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10000000}
build=${2:-build-fuzz}
mkdir -p "$build"
start=$(date +%s)
# An input is a hang past 30 s here (a short run allows 10 s): a long
# campaign shares the machine with everything else.
nice -n 19 python3 display/fuzz/run_fuzz.py --build "$build" --runs "$runs" \
  --corpus "$build/corpus" --timeout 30 2>&1 | tee "$build/fuzz-long.log"
status=${PIPESTATUS[0]}
echo "fuzz_long: $runs executions requested, $(( $(date +%s) - start )) s, exit $status" \
  | tee -a "$build/fuzz-long.log"
exit "$status"
