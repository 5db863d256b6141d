"""Provider batch APIs through litellm: upload, create, retrieve, find, download.

``judgekit run --batch`` sends a route's requests through litellm's Files and Batches functions
(``litellm.create_file``, ``create_batch``, ``retrieve_batch``, ``list_batches``,
``file_content``), in OpenAI's batch format, which judgekit's request lines already are
(:mod:`judgekit.batch.requests`):

* ``openai/...`` and ``azure/...`` routes: the provider's own Batch API (half the price, a
  24 h window); ``api_base`` and the key are the route's, as for online calls;
* ``openai_compatible/...`` and ``hosted_vllm/...`` routes with an ``api_base``: a server that
  implements OpenAI's Files and Batches endpoints (a LiteLLM proxy in front of vLLM, say).
  vLLM's own server has none: run ``judgekit batch export``, ``vllm run-batch`` per shard, then
  ``judgekit batch import`` (docs/providers.md).

Other routes (Anthropic's Message Batches, Vertex and Bedrock, which stage files in a storage
bucket) take requests in another shape or need storage set up in litellm; ``run --batch``
refuses them with that advice rather than guess. Transient failures (429, 5xx, timeouts) are
retried with tenacity; others end the command with one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from judgekit.errors import JudgekitError
from judgekit.llm.endpoint import make_endpoint
from judgekit.llm.errors import EndpointError, describe
from judgekit.llm.providers.litellm import endpoint_error
from judgekit.llm.spec import ModelSpec

# route provider -> litellm's custom_llm_provider for its Files and Batches calls
BATCH_PROVIDERS = {
    "openai": "openai",
    "azure": "azure",
    "openai_compatible": "openai",
    "hosted_vllm": "openai",
}
TERMINAL = frozenset({"completed", "expired", "failed", "cancelled"})
_ATTEMPTS = 4
T = TypeVar("T")


@dataclass(frozen=True)
class BatchState:
    """A provider's batch as judgekit reads it: ``id``, ``status`` (``validating``,
    ``in_progress``, ``finalizing``, ``completed``, ``expired``, ``failed``, ``cancelling``,
    ``cancelled``), its files, request counts, ``expires_at`` (Unix seconds, None if
    unknown) and ``errors`` (one line: why a batch failed validation)."""

    id: str
    status: str
    input_file_id: str | None
    output_file_id: str | None
    error_file_id: str | None
    total: int
    completed: int
    failed: int
    expires_at: int | None
    errors: str

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


def _state(batch: Any) -> BatchState:
    counts = getattr(batch, "request_counts", None)
    errors = getattr(getattr(batch, "errors", None), "data", None) or []
    text = "; ".join(str(getattr(e, "message", e)) for e in errors[:3])
    return BatchState(
        id=batch.id, status=str(batch.status), input_file_id=batch.input_file_id,
        output_file_id=batch.output_file_id, error_file_id=batch.error_file_id,
        total=int(getattr(counts, "total", 0) or 0),
        completed=int(getattr(counts, "completed", 0) or 0),
        failed=int(getattr(counts, "failed", 0) or 0),
        expires_at=batch.expires_at, errors=text,
    )  # fmt: skip


def check_route(spec: ModelSpec) -> str:
    """litellm's ``custom_llm_provider`` for ``spec``'s batches.

    Raises:
        JudgekitError: the route has no batch API judgekit can reach (see the module doc).
    """
    provider = BATCH_PROVIDERS.get(spec.provider)
    if provider is None or (provider == "openai" and spec.provider != "openai"
                            and not spec.api_base):  # fmt: skip
        raise JudgekitError(
            f"{spec.model}: judgekit run --batch reaches OpenAI-format Batch APIs (openai/, "
            "azure/, or a server with /v1/batches); for this route export the requests "
            "(judgekit batch export), run them with its provider's batch tool or vllm "
            "run-batch, then judgekit batch import"
        )
    return provider


class BatchAPI:
    """One route's Files and Batches calls (see the module doc).

    Raises:
        JudgekitError: no batch API for the route, or its API key variable is unset.
    """

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        provider = check_route(spec)
        endpoint = make_endpoint(spec, pause=False)
        self.kwargs: dict[str, Any] = {"custom_llm_provider": provider}
        if endpoint.api_base:
            self.kwargs["api_base"] = endpoint.api_base
        if endpoint.api_key:
            self.kwargs["api_key"] = endpoint.api_key
        elif spec.is_openai_compatible_server:
            self.kwargs["api_key"] = "sk-none"

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """``fn()``, transient failures retried; others raised as one line."""
        policy = Retrying(
            stop=stop_after_attempt(_ATTEMPTS),
            wait=wait_exponential(multiplier=0.5, max=8),
            retry=retry_if_exception(lambda e: getattr(e, "transient", False)),
            reraise=True,
        )
        try:
            for attempt in policy:
                with attempt:
                    try:
                        return fn()
                    except Exception as exc:
                        raise endpoint_error(exc) from exc
        except EndpointError as exc:
            advice = ""
            if exc.kind == "unknown_model" and self.spec.provider != "openai":
                advice = " (a vLLM server has no Batch API: use judgekit batch export and import)"
            raise JudgekitError(
                f"batch {what} on {self.spec.model}: {describe(exc.kind)}: {exc}{advice}"
            ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def upload(self, path: Path) -> str:
        """Upload a request file (purpose ``batch``); its file id."""
        import litellm

        def go() -> str:
            with open(path, "rb") as handle:
                return litellm.create_file(file=handle, purpose="batch", **self.kwargs).id

        return self._call("upload", go)

    def create(self, file_id: str, metadata: dict[str, str]) -> BatchState:
        """Start a batch of the uploaded requests (24 h window)."""
        import litellm

        return _state(self._call("creation", lambda: litellm.create_batch(
            completion_window="24h", endpoint="/v1/chat/completions", input_file_id=file_id,
            metadata=metadata, **self.kwargs)))  # fmt: skip

    def retrieve(self, batch_id: str) -> BatchState:
        """Where the batch stands."""
        import litellm

        return _state(
            self._call("status", lambda: litellm.retrieve_batch(batch_id=batch_id, **self.kwargs))
        )

    def find(self, file_id: str) -> BatchState | None:
        """A batch already made of the uploaded file ``file_id`` (among the latest 100), if
        any: a run killed between creating a batch and writing its id adopts it."""
        import litellm

        page = self._call("listing", lambda: litellm.list_batches(limit=100, **self.kwargs))
        for batch in getattr(page, "data", None) or []:
            if getattr(batch, "input_file_id", None) == file_id:
                return _state(batch)
        return None

    def download(self, file_id: str) -> bytes:
        """The content of an output or error file."""
        import litellm

        response = self._call(
            "download", lambda: litellm.file_content(file_id=file_id, **self.kwargs)
        )
        return bytes(response.content)
