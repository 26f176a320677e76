#!/usr/bin/env bash
# A long fuzzing campaign over the readers (docs/fuzzing.md): INGEST runs of
# fuzz-ingest, then REPORT runs of fuzz-report (about eight times slower an
# input), at the lowest priority, one process at a time. What the fuzzer
# finds is kept in BUILD/corpus for the next campaign; a crash stops it with
# the input in BUILD/artifacts. The log goes to BUILD/fuzz-long.log.
#
#   bench/fuzz_long.sh [INGEST] [REPORT] [BUILD]   defaults: 8000000 2000000 build-fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
ingest=${1:-8000000}
report=${2:-2000000}
build=${3:-build-fuzz}
mkdir -p "$build"
log="$build/fuzz-long.log"
: > "$log"
echo "fuzz_long: $(date -u '+%F %T') UTC, $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
for target in ingest report; do
  runs=$([ "$target" = ingest ] && echo "$ingest" || echo "$report")
  start=$(date +%s)
  # An input is a hang past 30 s here (a short run allows 10 s): a long
  # campaign shares the machine with everything else.
  nice -n 19 python3 display/fuzz/run_fuzz.py --build "$build" --target "$target" \
    --runs "$runs" --corpus "$build/corpus" --timeout 30 >> "$log" 2>&1 || {
    echo "fuzz_long: fuzz-$target failed after $(( $(date +%s) - start )) s (see $log)" | tee -a "$log"
    exit 1
  }
  echo "fuzz_long: fuzz-$target $runs runs in $(( $(date +%s) - start )) s" | tee -a "$log"
done
