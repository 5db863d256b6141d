"""ModelSpec: one model as a role sees it: its litellm route, where it is served, how to call it.

A route is a litellm model string: ``hosted_vllm/<hf-id>`` with ``api_base`` for a vLLM server,
``openai/...``, ``anthropic/...``, ``gemini/...``, ``openrouter/...`` for hosted APIs, or
``local/<name>`` for the embedded llama.cpp model that judgekit starts itself.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

StructuredOutput = Literal["auto", "json_schema", "json_object", "tools", "prompt"]

# Default in-flight limits: a vLLM server batches hundreds of requests; the embedded llama.cpp
# server answers one at a time; hosted APIs get a polite default.
_DEFAULT_CONCURRENCY = {"local": 1, "hosted_vllm": 256, "openai_compatible": 64}
_API_CONCURRENCY = 8


class ModelSpec(BaseModel):
    """One model bound to a role (``generator``, ``judge``, ``translator``...).

    Attributes:
        model: litellm route, e.g. ``hosted_vllm/Qwen/Qwen3-8B`` or ``local/smollm2-135m``.
        name: label used in tables and figures (default: the route without its provider).
        api_base: server URL for OpenAI-compatible servers (``http://localhost:8000/v1``).
        api_key_env: name of the environment variable that holds the API key (the key itself is
            never written in a config, record, cache entry or log).
        temperature, max_tokens, seed, top_p: generation parameters (temperature default 0).
        timeout: seconds one HTTP call may take before it counts as a transient failure.
        max_concurrency: calls in flight for this model (default by backend: local 1,
            vLLM 256, APIs 8).
        structured_output: how the output schema is enforced: ``json_schema`` (vLLM guided
            decoding, OpenAI), ``json_object`` (llama.cpp: json_object plus schema), ``tools``
            (instructor's tool calling, for APIs), ``prompt`` (schema in the prompt only) or
            ``auto`` (chosen from the route). Validation with pydantic happens in every case.
        max_reasks: re-asks after an invalid answer (bounded; the context never grows by more
            than one answer and one correction).
        max_retries: attempts for transient errors (429, 5xx, timeouts, connection errors).
        retry_max_wait: longest back-off between two attempts, in seconds.
        price_input_per_mtok, price_output_per_mtok: USD per million tokens; None = litellm's
            price table for API routes, 0 for local servers.
        extra: further keyword arguments passed to litellm as they are.
    """

    model_config = ConfigDict(extra="forbid")

    model: str
    name: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(512, ge=1)
    seed: int | None = 0
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    timeout: float = Field(120.0, gt=0)
    max_concurrency: int | None = Field(None, ge=1)
    structured_output: StructuredOutput = "auto"
    max_reasks: int = Field(2, ge=0, le=5)
    max_retries: int = Field(4, ge=1, le=20)
    retry_max_wait: float = Field(30.0, gt=0)
    price_input_per_mtok: float | None = Field(None, ge=0)
    price_output_per_mtok: float | None = Field(None, ge=0)
    extra: dict[str, object] = Field(default_factory=dict)

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
        return self.is_local or self.provider == "hosted_vllm"

    def concurrency(self) -> int:
        """In-flight limit: ``max_concurrency`` or the backend's default."""
        if self.max_concurrency is not None:
            return self.max_concurrency
        if self.provider in _DEFAULT_CONCURRENCY:
            return _DEFAULT_CONCURRENCY[self.provider]
        return _API_CONCURRENCY

    def strategy(self) -> StructuredOutput:
        """The structured-output strategy for this backend (``auto`` resolved).

        llama.cpp rejects OpenAI's ``json_schema`` response format but constrains decoding with
        ``{"type": "json_object", "schema": ...}``; vLLM and OpenAI honour ``json_schema``;
        other APIs get instructor's tool calling.
        """
        if self.structured_output != "auto":
            return self.structured_output
        if self.is_local:
            return "json_object"
        if self.provider in ("hosted_vllm", "openai", "azure"):
            return "json_schema"
        return "tools"

    def params(self) -> dict[str, object]:
        """Generation parameters that change the answer (part of the cache key)."""
        out: dict[str, object] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.seed is not None:
            out["seed"] = self.seed
        if self.top_p is not None:
            out["top_p"] = self.top_p
        out.update(self.extra)
        return out
