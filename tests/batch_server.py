"""A real loopback server with OpenAI's Files and Batches endpoints, for tests of batch runs.

:class:`BatchServer` is a :class:`~fault_server.FaultServer` (``/v1/chat/completions`` answers
as there: deterministic valid JSON for the requested schema, faults by directive) that also
serves, as OpenAI's API does:

* ``POST /v1/files`` (multipart: ``purpose``, ``file``), ``GET /v1/files/{id}``,
  ``GET /v1/files/{id}/content``, ``DELETE /v1/files/{id}``;
* ``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window``, ``metadata``),
  ``GET /v1/batches/{id}``, ``GET /v1/batches``, ``POST /v1/batches/{id}/cancel``.

A batch moves one state per ``GET`` of it: ``validating`` -> ``in_progress`` -> ``finalizing``
-> ``completed``. It stays ``in_progress`` while ``hold`` is set (a test releases it when it is
ready: nothing races the test). When it leaves ``in_progress`` every request line is sent to
this server's own ``/v1/chat/completions`` over HTTP, so a batch answers exactly what an online
call answers; 200 answers go to the output file, others to the error file (OpenAI's line
shape: ``{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}``).
:meth:`BatchServer.expire` ends a held batch as ``expired`` after its first ``answered``
lines: the rest go to the error file with OpenAI's ``batch_expired`` error.

:func:`vllm_run_batch` does what ``vllm run-batch -i IN -o OUT`` does with a server's answers:
each input line's body is sent to a server's ``/v1/chat/completions`` and the results are
written in vLLM's ``BatchRequestOutput`` shape (``vllm/entrypoints/openai/run_batch.py``:
``id`` ``vllm-<uuid>``, ``response.request_id`` ``vllm-batch-<uuid>``, the body as vLLM's
``ChatCompletionResponse`` dumps it; a failed request has ``status_code`` 400 and no body, and
``error`` the message).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from fault_server import FaultServer

_EXPIRED = {
    "code": "batch_expired",
    "message": "This request could not be executed before the completion window expired.",
}


class BatchServer(FaultServer):
    """FaultServer plus OpenAI's Files and Batches endpoints (see the module doc).

    Attributes:
        hold: batches stay ``in_progress`` while True (``release()`` clears it).
        files: ``id -> {"bytes": ..., "purpose", "filename", "created_at"}``.
        batches: ``id -> batch object`` (as ``GET /v1/batches/{id}`` returns it).
        uploads, creations, retrievals: counts of ``POST /v1/files``, ``POST /v1/batches``
            and ``GET /v1/batches/{id}``.
    """

    def __init__(self, *, hold: bool = False, **kw: Any) -> None:
        super().__init__(**kw)
        self.hold = hold
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.uploads = self.creations = self.retrievals = 0
        self._expire: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._batch_lock = threading.Lock()

    # -- control from the test -----------------------------------------------------------------

    def release(self) -> None:
        """Let held batches finish (on their next retrieval)."""
        self.hold = False

    def expire(self, batch_id: str, answered: int) -> None:
        """End ``batch_id`` as ``expired`` on its next retrieval, with only its first
        ``answered`` lines answered."""
        with self._batch_lock:
            self._expire[batch_id] = answered

    def content(self, file_id: str) -> bytes:
        return self.files[file_id]["bytes"]

    # -- HTTP ----------------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = super().make_app()
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}", self._file)
        app.router.add_get("/v1/files/{id}/content", self._file_content)
        app.router.add_delete("/v1/files/{id}", self._delete_file)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches", self._list)
        app.router.add_get("/v1/batches/{id}", self._retrieve)
        app.router.add_post("/v1/batches/{id}/cancel", self._cancel)
        return app

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids):04d}{uuid.uuid4().hex[:8]}"

    def _store(self, data: bytes, purpose: str, filename: str) -> dict[str, Any]:
        file_id = self._new_id("file")
        entry = {"bytes": data, "purpose": purpose, "filename": filename,
                 "created_at": int(time.time())}  # fmt: skip
        self.files[file_id] = entry
        return self._file_object(file_id)

    def _file_object(self, file_id: str) -> dict[str, Any]:
        entry = self.files[file_id]
        return {"id": file_id, "object": "file", "bytes": len(entry["bytes"]),
                "created_at": entry["created_at"], "filename": entry["filename"],
                "purpose": entry["purpose"], "status": "processed", "expires_at": None,
                "status_details": None}  # fmt: skip

    def _missing(self, what: str, ident: str) -> web.Response:
        return self._error_response(404, f"No such {what}: {ident}", kind="invalid_request_error")

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        purpose = str(form.get("purpose", ""))
        if upload is None or not hasattr(upload, "file"):
            return self._error_response(400, "missing 'file'")
        if purpose != "batch":
            return self._error_response(400, f"purpose must be 'batch', got {purpose!r}")
        data = upload.file.read()
        self.uploads += 1
        return web.json_response(self._store(data, purpose, upload.filename or "upload.jsonl"))

    async def _file(self, request: web.Request) -> web.Response:
        file_id = request.match_info["id"]
        if file_id not in self.files:
            return self._missing("file", file_id)
        return web.json_response(self._file_object(file_id))

    async def _file_content(self, request: web.Request) -> web.Response:
        file_id = request.match_info["id"]
        if file_id not in self.files:
            return self._missing("file", file_id)
        return web.Response(body=self.files[file_id]["bytes"], content_type="application/jsonl")

    async def _delete_file(self, request: web.Request) -> web.Response:
        file_id = request.match_info["id"]
        if self.files.pop(file_id, None) is None:
            return self._missing("file", file_id)
        return web.json_response({"id": file_id, "object": "file", "deleted": True})

    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        file_id = body.get("input_file_id")
        if file_id not in self.files:
            return self._missing("file", str(file_id))
        if body.get("endpoint") != "/v1/chat/completions":
            return self._error_response(400, f"unsupported endpoint {body.get('endpoint')!r}")
        lines = [ln for ln in self.files[file_id]["bytes"].splitlines() if ln.strip()]
        now = int(time.time())
        batch = {
            "id": self._new_id("batch"), "object": "batch", "endpoint": body["endpoint"],
            "errors": None, "input_file_id": file_id,
            "completion_window": body.get("completion_window", "24h"), "status": "validating",
            "output_file_id": None, "error_file_id": None, "created_at": now,
            "in_progress_at": None, "expires_at": now + 86400, "finalizing_at": None,
            "completed_at": None, "failed_at": None, "expired_at": None, "cancelling_at": None,
            "cancelled_at": None,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
        }  # fmt: skip
        self.batches[batch["id"]] = batch
        self.creations += 1
        return web.json_response(batch)

    async def _list(self, request: web.Request) -> web.Response:
        data = list(self.batches.values())
        return web.json_response({"object": "list", "data": data, "has_more": False})

    async def _cancel(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return self._missing("batch", request.match_info["id"])
        batch.update(status="cancelled", cancelled_at=int(time.time()))
        return web.json_response(batch)

    async def _retrieve(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["id"]
        batch = self.batches.get(batch_id)
        if batch is None:
            return self._missing("batch", batch_id)
        self.retrievals += 1
        await self._advance(batch, str(request.url.origin()))
        return web.json_response(batch)

    async def _advance(self, batch: dict[str, Any], origin: str) -> None:
        """One step of the batch's life (see the module doc)."""
        now = int(time.time())
        status = batch["status"]
        with self._batch_lock:
            expire = self._expire.pop(batch["id"], None)
        if status == "validating":
            batch.update(status="in_progress", in_progress_at=now)
        elif status == "in_progress" and expire is not None:
            await self._execute(batch, origin, answered=expire)
            batch.update(status="expired", expired_at=now)
        elif status == "in_progress" and not self.hold:
            await self._execute(batch, origin, answered=None)
            batch.update(status="finalizing", finalizing_at=now)
        elif status == "finalizing":
            batch.update(status="completed", completed_at=now)

    async def _execute(self, batch: dict[str, Any], origin: str, answered: int | None) -> None:
        """Send the batch's lines to this server's chat endpoint; write the output and error
        files (lines past ``answered`` expire unsent)."""
        lines = [ln for ln in self.content(batch["input_file_id"]).splitlines() if ln.strip()]
        done, failed = [], []
        async with aiohttp.ClientSession() as session:
            for number, line in enumerate(lines):
                request = json.loads(line)
                ident = f"batch_req_{uuid.uuid4().hex[:12]}"
                out = {"id": ident, "custom_id": request["custom_id"]}
                if answered is not None and number >= answered:
                    failed.append({**out, "response": None, "error": _EXPIRED})
                    continue
                url = origin + request["url"]
                async with session.post(url, json=request["body"]) as response:
                    status, body = response.status, await response.json()
                out["response"] = {"status_code": status, "request_id": f"req_{number}",
                                   "body": body}  # fmt: skip
                out["error"] = None
                (done if status == 200 else failed).append(out)
        batch["request_counts"] = {"total": len(lines), "completed": len(done),
                                   "failed": len(failed)}  # fmt: skip
        name = batch["id"]
        if done:
            stored = self._store(_jsonl(done), "batch_output", f"{name}_output")
            batch["output_file_id"] = stored["id"]
        if failed:
            stored = self._store(_jsonl(failed), "batch_output", f"{name}_error")
            batch["error_file_id"] = stored["id"]


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def _vllm_body(body: dict[str, Any]) -> dict[str, Any]:
    """A chat.completion as vLLM's ``ChatCompletionResponse.model_dump_json()`` writes it."""
    choices = []
    for choice in body["choices"]:
        message = {"role": "assistant", "content": None, "refusal": None, "annotations": None,
                   "audio": None, "function_call": None, "tool_calls": [],
                   "reasoning_content": None, **choice["message"]}  # fmt: skip
        choices.append({"index": choice["index"], "message": message, "logprobs": None,
                        "finish_reason": choice["finish_reason"], "stop_reason": None,
                        "token_ids": None})  # fmt: skip
    usage = {**body["usage"], "prompt_tokens_details": None}
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion",
            "created": body["created"], "model": body["model"], "choices": choices,
            "service_tier": None, "system_fingerprint": None, "usage": usage,
            "prompt_logprobs": None, "prompt_token_ids": None,
            "kv_transfer_params": None}  # fmt: skip


def vllm_run_batch(input_file: Path, output_file: Path, base_url: str) -> int:
    """``vllm run-batch -i input_file -o output_file`` answered by the server at ``base_url``
    (``http://host:port/v1``); returns the lines written (see the module doc)."""

    async def go() -> list[dict[str, Any]]:
        rows = []
        async with aiohttp.ClientSession() as session:
            for line in input_file.read_text(encoding="utf-8").strip().split("\n"):
                if not line.strip():
                    continue
                request = json.loads(line)
                out = {"id": f"vllm-{uuid.uuid4().hex}", "custom_id": request["custom_id"]}
                url = base_url.rsplit("/v1", 1)[0] + request["url"]
                async with session.post(url, json=request["body"]) as response:
                    status, body = response.status, await response.json()
                request_id = f"vllm-batch-{uuid.uuid4().hex}"
                if status == 200:
                    out["response"] = {"status_code": 200, "request_id": request_id,
                                       "body": _vllm_body(body)}  # fmt: skip
                    out["error"] = None
                else:
                    out["response"] = {"status_code": 400, "request_id": request_id, "body": None}
                    out["error"] = str(body.get("error", {}).get("message", body))
                rows.append(out)
        return rows

    rows = asyncio.run(go())
    # vLLM writes each output with model_dump_json() and a newline (write_local_file)
    output_file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return len(rows)


# --------------------------------------------------------------------------------------------
# Run configs for the batch tests
# --------------------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]
CLASSIFY_ITEMS = REPO / "prompts" / "classify" / "examples.jsonl"
PAIRWISE_ITEMS = REPO / "prompts" / "pairwise" / "llmbar" / "natural-sample.jsonl"
KEY_ENV = "JUDGEKIT_TEST_BATCH_KEY"  # tests set it to a dummy key for openai/ routes


def judge_lines(route: str, base_url: str) -> str:
    """The ``judge:`` section for ``route`` served by the stub at ``base_url``."""
    key = f"\n  api_key_env: {KEY_ENV}" if route.startswith("openai/") else ""
    return f"judge:\n  model: {route}\n  api_base: {base_url}{key}\n  max_retries: 1\n"


def classify_config(folder: Path, base_url: str, *, route: str = "openai/gpt-4o-mini",
                    items: Path = CLASSIFY_ITEMS, labels: str = "[positive, negative, neutral]",
                    name: str = "classify") -> Path:  # fmt: skip
    """A classify config over ``items`` with its cache in ``folder/cache``."""
    path = folder / f"{name}.yaml"
    path.write_text(
        f"pipeline: classify\nname: {name}\n{judge_lines(route, base_url)}"
        f"classify:\n  items: {items}\n  labels: {labels}\n"
        f"cache:\n  dir: {folder / 'cache'}\n",
        encoding="utf-8",
    )
    return path


def pairwise_config(folder: Path, base_url: str, *, route: str = "openai/gpt-4o-mini",
                    limit: int = 6) -> Path:  # fmt: skip
    """A pairwise config over ``limit`` LLMBar items (both orders: 2 tasks an item)."""
    path = folder / "pairwise.yaml"
    path.write_text(
        f"pipeline: pairwise\nlimit: {limit}\n{judge_lines(route, base_url)}"
        f"  max_tokens: 128\npairwise:\n  items: {PAIRWISE_ITEMS}\n  n_resamples: 200\n"
        f"cache:\n  dir: {folder / 'cache'}\n",
        encoding="utf-8",
    )
    return path


def stub_batch(srv: BatchServer, request_file: Path, out_dir: Path) -> list[Path]:
    """Send ``request_file`` through the stub's Batch API with the ``openai`` client (upload,
    create, poll until it ends, download); the output and error files written to ``out_dir``."""
    import openai

    client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test")
    with open(request_file, "rb") as handle:
        uploaded = client.files.create(file=handle, purpose="batch")
    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    for _ in range(20):
        batch = client.batches.retrieve(batch.id)
        if batch.status in ("completed", "expired", "failed", "cancelled"):
            break
    assert batch.status == "completed", batch.status
    written = []
    for kind, file_id in (("output", batch.output_file_id), ("errors", batch.error_file_id)):
        if file_id is not None:
            path = out_dir / f"{request_file.stem}.{kind}.jsonl"
            path.write_bytes(client.files.content(file_id).content)
            written.append(path)
    return written
