#!/usr/bin/env bash
# A long fuzzing campaign over the readers (docs/fuzzing.md): INGEST runs of
# fuzz-ingest and REPORT runs of fuzz-report (about ten times slower an
# input), side by side at the lowest priority: on a shared machine each
# takes what CPU is left. What the fuzzer finds is kept in BUILD/corpus for
# the next campaign; a crash stops that target with the input in
# BUILD/artifacts. Logs: BUILD/fuzz-long-ingest.log, BUILD/fuzz-long-report.log.
#
#   bench/fuzz_long.sh [INGEST] [REPORT] [BUILD]   defaults: 8000000 2000000 build-fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
ingest=${1:-8000000}
report=${2:-2000000}
build=${3:-build-fuzz}
mkdir -p "$build"
echo "fuzz_long: $(date -u '+%F %T') UTC, $(git rev-parse --short HEAD)," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
# Built once before the two runs share the build directory.
nice -n 19 python3 display/fuzz/run_fuzz.py --build "$build" --build-only
run() {  # TARGET RUNS
  local start; start=$(date +%s)
  # An input is a hang past 30 s here (a short run allows 10 s): a long
  # campaign shares the machine with everything else.
  if nice -n 19 python3 display/fuzz/run_fuzz.py --build "$build" --target "$1" --runs "$2" \
       --corpus "$build/corpus" --timeout 30 > "$build/fuzz-long-$1.log" 2>&1; then
    echo "fuzz_long: fuzz-$1: $2 runs in $(( $(date +%s) - start )) s, no failure"
  else
    echo "fuzz_long: fuzz-$1 failed after $(( $(date +%s) - start )) s: $build/fuzz-long-$1.log"
    return 1
  fi
}
status=0
run ingest "$ingest" & ingest_pid=$!
run report "$report" & report_pid=$!
wait "$ingest_pid" || status=1
wait "$report_pid" || status=1
exit "$status"
