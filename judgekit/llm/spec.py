"""ModelSpec: one model as a role sees it: its litellm route, where it is served, how to call it.

A route is a litellm model string: ``hosted_vllm/<hf-id>`` with ``api_base`` for a vLLM server,
``openai/...``, ``anthropic/...``, ``gemini/...``, ``openrouter/...`` for hosted APIs, or
``local/<name>`` for the embedded llama.cpp model that judgekit starts itself.

One spec may be served by several endpoints: ``deployments`` lists replicas of the same model
(e.g. four vLLM servers) and ``fallbacks`` lists other specs to use when the primary's
deployments are failing or cooling down. Both go through litellm's Router (see ``router.py``).
A role whose value is a *list* of specs means something else (several models under test, or a
jury of judges) and is handled by the pipelines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from judgekit.llm.params import forced_tool_refused

StructuredOutput = Literal["auto", "json_schema", "json_object", "tools", "prompt"]
Transport = Literal["auto", "aiohttp", "litellm"]
RoutingStrategy = Literal[
    "simple-shuffle", "least-busy", "latency-based-routing", "usage-based-routing-v2"
]

# Default in-flight limits: a vLLM server batches hundreds of requests; the embedded llama.cpp
# server answers one at a time; hosted APIs get a polite default.
_DEFAULT_CONCURRENCY = {"local": 1, "hosted_vllm": 256, "openai_compatible": 64}
_API_CONCURRENCY = 8
# Servers judgekit talks to over its own aiohttp transport (OpenAI-compatible chat API).
_FAST_PROVIDERS = ("local", "hosted_vllm", "openai_compatible")


class Deployment(BaseModel):
    """One endpoint serving the spec's model (a vLLM replica, an Azure region...).

    Attributes:
        api_base: server URL (``http://gpu1:8000/v1``).
        api_key_env, api_key_file: where the key comes from (default: the spec's).
        rpm, tpm: requests / tokens per minute allowed on this endpoint (None = no limit).
        max_concurrency: calls in flight on this endpoint (default: the spec's).
        weight: relative share of traffic for ``simple-shuffle`` routing (default 1).
    """

    model_config = ConfigDict(extra="forbid")

    api_base: str | None = None
    api_key_env: str | None = None
    api_key_file: Path | None = None
    rpm: int | None = Field(None, ge=1)
    tpm: int | None = Field(None, ge=1)
    max_concurrency: int | None = Field(None, ge=1)
    weight: float | None = Field(None, gt=0)


class ModelSpec(BaseModel):
    """One model bound to a role (``generator``, ``judge``, ``translator``...).

    Attributes:
        model: litellm route, e.g. ``hosted_vllm/Qwen/Qwen3-8B`` or ``local/smollm2-135m``.
        name: label used in tables and figures (default: the route without its provider).
        revision: model revision or snapshot, where known (part of the cache key).
        api_base: server URL for OpenAI-compatible servers (``http://localhost:8000/v1``).
        api_key_env: name of the environment variable that holds the API key.
        api_key_file: a file whose first line is the API key (for secrets mounted as files).
            The key itself is never written in a config, record, cache entry or log.
        temperature, max_tokens, seed, top_p: generation parameters (temperature default 0;
            None: not sent, the provider's default). A route that does not take one (o3-mini:
            no temperature but 1) is not sent it (``judgekit.llm.params``).
        timeout: seconds one HTTP call may take before it counts as a transient failure.
        max_concurrency: calls in flight per endpoint (default by backend: local 1,
            vLLM 256, APIs 8). On a 429 the limit shrinks, then grows back (``adaptive``).
            Every spec on the embedded server shares one limit: the first one built.
        adaptive_concurrency: shrink the in-flight limit on 429 and recover it on success.
        rpm, tpm: requests / tokens per minute per endpoint (None = no limit).
        structured_output: how the output schema is enforced: ``json_schema`` (vLLM guided
            decoding, OpenAI), ``json_object`` (llama.cpp: json_object plus schema), ``tools``
            (tool calling, for APIs), ``prompt`` (schema in the prompt only) or ``auto``
            (chosen from the route). Validation with pydantic happens in every case.
        max_reasks: re-asks after an invalid answer (bounded; the context never grows by more
            than one answer and one correction, and stays under ``context_window``).
        context_window: the model's context in tokens, where known (local default 4096).
        max_retries: attempts for transient errors (429, 5xx, timeouts, connection errors).
        retry_max_wait: longest back-off between two attempts, in seconds.
        max_total_time: seconds a task may spend on attempts and back-off in all (default:
            ``max_retries * (timeout + retry_max_wait)``).
        outage_s: seconds judgekit waits for a server that refuses connections: before the
            run (preflight) and when a server that answered goes down mid-run (its tasks are
            paused, not failed, while it is probed with back-off). 0 = no wait: tasks retry as
            for any transient error. Servers only (``api_base``); not for the embedded model,
            nor a spec with several deployments or fallbacks (the Router's cooldowns apply).
        price_input_per_mtok, price_output_per_mtok: USD per million tokens; None = litellm's
            price table for API routes, 0 for local servers.
        transport: ``aiohttp`` (judgekit's shared-session transport for OpenAI-compatible
            servers), ``litellm`` (litellm's call path, every provider) or ``auto`` (aiohttp for
            ``local``/``hosted_vllm``/``openai_compatible`` routes, else litellm).
        deployments: several endpoints serving this model (replicas); empty = ``api_base``.
        fallbacks: specs to call when this one's deployments fail or cool down.
        routing_strategy: litellm Router strategy across deployments.
        cooldown_time: seconds a failing deployment is taken out of rotation.
        allowed_fails: failures per minute a deployment may have before its cooldown.
        logprobs: ask for the log-probabilities of the answer tokens (``logprobs: true,
            top_logprobs: K``) and give each ``ok`` record ``label_probs`` {label: p} over the
            answer schema's label set (:mod:`judgekit.llm.logprobs`). A route that gives none
            is said in one line and the run scores hard labels.
        top_logprobs: K, the alternatives asked for at each token (1 to 20; default 10).
        extra: further keyword arguments sent with every request as they are.
    """

    model_config = ConfigDict(extra="forbid")

    model: str
    name: str | None = None
    revision: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    api_key_file: Path | None = None
    temperature: float | None = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(512, ge=1)
    seed: int | None = 0
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    timeout: float = Field(120.0, gt=0)
    max_concurrency: int | None = Field(None, ge=1)
    adaptive_concurrency: bool = True
    rpm: int | None = Field(None, ge=1)
    tpm: int | None = Field(None, ge=1)
    structured_output: StructuredOutput = "auto"
    max_reasks: int = Field(2, ge=0, le=5)
    context_window: int | None = Field(None, ge=256)
    max_retries: int = Field(4, ge=1, le=20)
    retry_max_wait: float = Field(30.0, gt=0)
    max_total_time: float | None = Field(None, gt=0)
    outage_s: float = Field(600.0, ge=0)
    price_input_per_mtok: float | None = Field(None, ge=0)
    price_output_per_mtok: float | None = Field(None, ge=0)
    transport: Transport = "auto"
    deployments: list[Deployment] = Field(default_factory=list)
    fallbacks: list[ModelSpec] = Field(default_factory=list)
    routing_strategy: RoutingStrategy = "simple-shuffle"
    cooldown_time: float = Field(30.0, ge=0)
    allowed_fails: int = Field(3, ge=0)
    logprobs: bool = False
    top_logprobs: int = Field(10, ge=1, le=20)
    extra: dict[str, object] = Field(default_factory=dict)
    _no_logprobs: bool = PrivateAttr(False)
    _schema_ignored: bool = PrivateAttr(False)
    _scored: tuple[int, int] | None = PrivateAttr(None)  # (ok records, with label_probs)

    @model_validator(mode="after")
    def _server_routes_need_an_address(self) -> ModelSpec:
        # without one, litellm would send a vLLM route's prompts to a hosted API
        if self.provider in ("hosted_vllm", "openai_compatible") and not (
            self.api_base or any(d.api_base for d in self.deployments)
        ):
            raise ValueError(
                f"'{self.model}' needs api_base (the server URL, e.g. "
                "http://localhost:8000/v1) or deployments with api_base"
            )
        return self

    @field_validator("model")
    @classmethod
    def _route_has_provider(cls, value: str) -> str:
        if "/" not in value or value.startswith("/") or value.endswith("/"):
            raise ValueError(
                "expected a litellm route '<provider>/<model>', e.g. 'local/smollm2-135m', "
                "'hosted_vllm/Qwen/Qwen3-8B' or 'openai/gpt-4o-mini'"
            )
        return value

    @property
    def provider(self) -> str:
        """The route's provider prefix: ``local``, ``hosted_vllm``, ``openai``, ..."""
        return self.model.split("/", 1)[0]

    @property
    def model_id(self) -> str:
        """The route without its provider prefix."""
        return self.model.split("/", 1)[1]

    @property
    def label(self) -> str:
        """Short name for tables: ``name`` if set, else the model id."""
        return self.name or self.model_id

    @property
    def is_local(self) -> bool:
        return self.provider == "local"

    @property
    def is_openai_compatible_server(self) -> bool:
        """True for servers judgekit talks to directly: the embedded model and vLLM."""
        return self.provider in _FAST_PROVIDERS

    @property
    def is_routed(self) -> bool:
        """True when calls go through litellm's Router (several deployments or fallbacks)."""
        return len(self.deployments) > 1 or bool(self.fallbacks)

    def uses_aiohttp(self) -> bool:
        """Whether one endpoint of this spec is called over judgekit's aiohttp transport."""
        if self.transport != "auto":
            return self.transport == "aiohttp"
        return self.provider in _FAST_PROVIDERS

    def endpoints(self) -> list[Deployment]:
        """The deployments serving this spec (``api_base`` and the spec's limits if none)."""
        if self.deployments:
            return list(self.deployments)
        return [Deployment(api_base=self.api_base, rpm=self.rpm, tpm=self.tpm)]

    def concurrency(self) -> int:
        """In-flight limit per endpoint: ``max_concurrency`` or the backend's default."""
        if self.max_concurrency is not None:
            return self.max_concurrency
        if self.provider in _DEFAULT_CONCURRENCY:
            return _DEFAULT_CONCURRENCY[self.provider]
        return _API_CONCURRENCY

    def strategy(self) -> StructuredOutput:
        """The structured-output strategy for this backend (``auto`` resolved).

        llama.cpp rejects OpenAI's ``json_schema`` response format but constrains decoding with
        ``{"type": "json_object", "schema": ...}``; vLLM and OpenAI honour ``json_schema``;
        other APIs get tool calling, unless the route takes no forced tool call (a thinking
        Claude model: ``judgekit.llm.params.forced_tool_refused``): then ``prompt``.
        """
        if self.structured_output != "auto":
            return self.structured_output
        if self._schema_ignored:  # preflight's probe found the schema ignored
            return "prompt"
        if self.is_local:
            return "json_object"
        if self.provider in ("hosted_vllm", "openai_compatible", "openai", "azure"):
            return "json_schema"
        return "prompt" if forced_tool_refused(self) else "tools"

    def window(self) -> int | None:
        """Context window in tokens: ``context_window``, 4096 for the embedded model, else None."""
        if self.context_window is not None:
            return self.context_window
        return 4096 if self.is_local else None

    def total_time(self) -> float:
        """Seconds a task may spend on attempts and back-off in all."""
        if self.max_total_time is not None:
            return self.max_total_time
        return self.max_retries * (self.timeout + self.retry_max_wait)

    def params(self) -> dict[str, object]:
        """Generation parameters that change the answer (part of the cache key)."""
        out: dict[str, object] = {"max_tokens": self.max_tokens}
        if self.temperature is not None:
            out = {"temperature": self.temperature, **out}
        if self.seed is not None:
            out["seed"] = self.seed
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.logprobs:
            out["logprobs"] = True
            out["top_logprobs"] = self.top_logprobs
        out.update(self.extra)
        return out

    def scoring(self) -> str:
        """How this model's labels were scored: ``label_probs@top<K>`` (probabilities from
        log-probabilities), ``hard`` (the label only: not asked for, the route gave none, or
        none could be read), or both with their shares of the ``ok`` records
        (``label_probs@top10:3/4+hard:1/4``). Once the run's records are counted
        (:meth:`note_scored`) they decide; before, what the run asked for and saw."""
        top = f"label_probs@top{self.top_logprobs}"
        if self._scored is not None and self._scored[0] > 0:
            ok, with_probs = self._scored
            if with_probs == ok:
                return top
            if with_probs == 0:
                return "hard"
            return f"{top}:{with_probs}/{ok}+hard:{ok - with_probs}/{ok}"
        if self.logprobs and not self._no_logprobs:
            return top
        return "hard"

    def note_scored(self, ok: int, with_probs: int) -> None:
        """Record how the run's ``ok`` records of this model were scored (``with_probs`` of
        them carry ``label_probs``): :meth:`scoring` names what was actually used."""
        self._scored = (ok, with_probs)

    def mark_schema_ignored(self) -> None:
        """Record that preflight's probe found the route ignoring the JSON schema
        (``judgekit.llm.schema_probe``): :meth:`strategy` says ``prompt`` where it was ``auto``."""
        self._schema_ignored = True

    def mark_no_logprobs(self) -> None:
        """Record that the route gave no log-probabilities: :meth:`scoring` says ``hard``."""
        self._no_logprobs = True
