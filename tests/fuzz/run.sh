#!/bin/sh
# run.sh FUZZER SEED_DIR WORK_DIR: one time-boxed libFuzzer run (.ci/fuzz, -Dfuzz=true).
# Starts from the seed corpus, writes new inputs and any crash to WORK_DIR (in the build
# tree, never the repo). FUZZ_SECONDS (default 20) or FUZZ_RUNS (executions) bound it.
# Fails when libFuzzer finds a crash, a leak, a timeout or a broken invariant.
set -u
fuzzer=$1 seeds=$2 work=$3
mkdir -p "$work" || exit 1
if [ -n "${FUZZ_RUNS:-}" ]; then
  limit="-runs=$FUZZ_RUNS"
else
  limit="-max_total_time=${FUZZ_SECONDS:-20}"
fi
# -timeout: one input taking over 10 s is a hang; -rss_limit_mb keeps two parallel runs
# well inside a small CI machine; -dict is none: the seeds carry the grammar.
"$fuzzer" "$limit" -timeout=10 -rss_limit_mb=1024 -max_len=4096 -print_final_stats=1 \
  -artifact_prefix="$work/" "$work" "$seeds" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
  echo "$(basename "$fuzzer"): no crash"
else
  echo "$(basename "$fuzzer"): FAILED (exit $rc); reproducer in $work/ (crash-*, leak-*, timeout-*)"
fi
exit $rc
