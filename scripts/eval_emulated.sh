#!/usr/bin/env bash
# The dev cases through pilot's Semantic Scholar source against `pilot emulate s2` serving the corpus, at the
# API's real limits; the emulator's own counts (/_stats) are saved beside the run.
#
#   scripts/eval_emulated.sh [OUT_DIR] [MODE] [-- extra `pilot eval` args]      (defaults: out/eval-s2, multi)
#   RATE="--rps 1" LATENCY_MS=300 KEY=eval-key scripts/eval_emulated.sh     # S2 with a key (the defaults)
#   RATE="--pool 100/300" KEY= scripts/eval_emulated.sh out/pool multi -- --limit 40   # the unauthenticated pool
#
# Cold caches: a fresh cache dir (the built corpus store linked in, so it is not rebuilt), one case at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-out/eval-s2}
MODE=${2:-multi}
shift $(( $# > 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
SHARED=${SHARED:-../shared}
RATE=${RATE:---rps 1}
LATENCY_MS=${LATENCY_MS:-300}
KEY=${KEY-eval-key}
PORT=${PORT:-8790}
PY=.venv/bin/python
STORE=$(ls -d "$PWD"/.pilot-cache/corpus-* 2>/dev/null | head -n 1 || true)
mkdir -p "$OUT"
cache=$(mktemp -d)
[ -n "$STORE" ] && ln -s "$STORE" "$cache/"

# shellcheck disable=SC2086  # RATE is two words on purpose
$PY -m pilot.cli emulate s2 --corpus "$SHARED/corpus/papers.jsonl.gz" --port "$PORT" $RATE \
  --latency-ms "$LATENCY_MS" --cache-dir "$cache" > "$OUT/emulator.log" 2>&1 &
emulator=$!
trap 'kill $emulator 2>/dev/null || true; rm -rf "$cache"' EXIT
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$PORT/_stats" > /dev/null && break
  sleep 1
done
curl -sf "http://127.0.0.1:$PORT/_stats" > "$OUT/stats-before.json"

start=$(date +%s)
PILOT_CACHE_DIR=$cache PILOT_S2_API_KEY=$KEY \
PILOT_S2_BASE_URL=http://127.0.0.1:$PORT/graph/v1 PILOT_S2_RECOMMENDATIONS_URL=http://127.0.0.1:$PORT/recommendations/v1 \
  $PY -m pilot.cli eval --sources s2 --cases "$SHARED/bench/dev/cases.jsonl" --corpus "$SHARED/corpus/papers.jsonl.gz" \
  --mode "$MODE" --out "$OUT" --workers 1 --no-progress "$@" > "$OUT/eval.log" 2>&1
echo "$MODE@s2: $(( $(date +%s) - start )) s wall" > "$OUT/timing.txt"
curl -sf "http://127.0.0.1:$PORT/_stats" > "$OUT/stats.json"
cat "$OUT/timing.txt"
