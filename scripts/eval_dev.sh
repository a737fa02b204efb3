#!/usr/bin/env bash
# The dev-set table of the notes: every mode on the full corpus, each with cold node/embedding caches
# (a fresh cache dir per mode, with the already-built corpus store linked in so it is not rebuilt).
# Usage: scripts/eval_dev.sh [OUT_DIR] [SHARED_DIR]     (build the store first: `make bench` or `make run`)
#        CASES=../shared/bench/dev/topic_cases.jsonl scripts/eval_dev.sh out/eval-topic   (another cases file)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/eval-dev}
SHARED=${2:-../shared}
PY=.venv/bin/python
CASES=${CASES:-$SHARED/bench/dev/cases.jsonl}
STORE=$(ls -d "$PWD"/.pilot-cache/corpus-* 2>/dev/null | head -n 1 || true)
mkdir -p "$OUT"
: > "$OUT/timing.txt"
for mode in bm25 fixed single multi; do
  cache=$(mktemp -d)
  [ -n "$STORE" ] && ln -s "$STORE" "$cache/"
  start=$(date +%s)
  PILOT_CACHE_DIR=$cache $PY -m pilot.cli eval --cases "$CASES" \
    --corpus "$SHARED/corpus/papers.jsonl.gz" --mode $mode --out "$OUT/$mode" --workers 2 --no-progress \
    > "$OUT/$mode.log" 2>&1
  echo "$mode: $(( $(date +%s) - start )) s wall" >> "$OUT/timing.txt"
  rm -rf "$cache"
done
$PY -m pilot.cli eval compare "$OUT/bm25" "$OUT/fixed" "$OUT/single" "$OUT/multi" --out "$OUT" | tee "$OUT/compare.txt"
cat "$OUT/timing.txt"
