#!/usr/bin/env bash
# Run the benchmarks; each ends with one line "<name>: <figure> (target ...)".
# Usage: bench/run_all.sh   (from the repository root, with the project's venv active)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python}"
"$PY" bench/overhead.py
"$PY" bench/cache.py
"$PY" bench/memory.py
"$PY" bench/startup.py
"$PY" bench/compare.py
"$PY" bench/compare.py --labels
"$PY" bench/batch_import.py
"$PY" bench/ray_backend.py
"$PY" bench/tune.py
