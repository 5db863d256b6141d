"""Batch request lines: each task as one line of OpenAI's batch input format.

A line is ``{"custom_id": KEY, "method": "POST", "url": "/v1/chat/completions", "body": BODY}``
(https://platform.openai.com/docs/guides/batch; vLLM's ``run-batch`` reads the same format).
``KEY`` is the task key; ``BODY`` is the very bytes the online aiohttp path posts for the task
(:func:`judgekit.llm.endpoint.request_prefix` and :func:`~judgekit.llm.endpoint.chat_body`:
model id, generation parameters, ``response_format`` or the forced tool call, the messages),
so a batch asks exactly what an online run asks. The request hash (16 hex digits of the body's
SHA-256) ties an answer to the request it answers (:mod:`judgekit.batch.manifest`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from judgekit.errors import JudgekitError
from judgekit.llm.endpoint import chat_body, request_prefix
from judgekit.llm.models import ModelRegistry
from judgekit.llm.task import Task

if TYPE_CHECKING:
    from judgekit.config import RunConfig

BATCH_URL = "/v1/chat/completions"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def batch_tasks(runner: Any) -> Iterator[Task]:
    """Every task of the run, each key once, in the pipeline's order.

    Raises:
        JudgekitError: the pipeline builds later calls from earlier answers (its calls are not
            all known in advance), so a batch cannot hold them.
    """
    note = getattr(runner, "dry_run_note", None)
    if note:
        raise JudgekitError(
            f"the {runner.config.pipeline} pipeline builds its later calls from earlier answers: "
            "batches need a pipeline whose calls are all known in advance (classify, pairwise, "
            "cultural, errors, localise); run it online"
        )

    def unique() -> Iterator[Task]:
        seen: set[str] = set()
        for task in runner.tasks():
            if task.key not in seen:  # a task several jobs share (cultural) is one request
                seen.add(task.key)
                yield task

    return unique()


def config_hash(cfg: RunConfig) -> str:
    """SHA-256 of the run config as loaded (overrides applied; ``cache`` and ``out`` left
    out: they change where answers are kept, not what is asked)."""
    data = cfg.model_dump(mode="json", exclude={"cache", "out"})
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def model_dir(label: str) -> str:
    """A model's label as a directory name (characters outside ``[A-Za-z0-9._-]`` become
    ``-``)."""
    return _UNSAFE.sub("-", label).strip("-") or "model"


class Requests:
    """The request bodies, lines and hashes of tasks, built as the online path builds them.

    Args:
        models: the client's per-spec states (output format of each schema).
    """

    def __init__(self, models: ModelRegistry) -> None:
        self.models = models
        self._prefixes: dict[tuple[int, str, str], bytes] = {}

    def body(self, task: Task) -> bytes:
        """The request body of ``task`` (UTF-8 JSON bytes)."""
        fmt = self.models.get(task.spec).format(task.schema)[0]
        ident = (id(task.spec), fmt.digest, fmt.strategy)
        prefix = self._prefixes.get(ident)
        if prefix is None:
            prefix = self._prefixes[ident] = request_prefix(task.spec, fmt)
        return chat_body(prefix, task.messages, fmt)

    def hash(self, task: Task) -> str:
        """16 hex digits of the SHA-256 of the request body of ``task``."""
        return request_hash(self.body(task))

    def line(self, task: Task) -> tuple[bytes, str]:
        """(the batch input line of ``task`` with its newline, its request hash)."""
        body = self.body(task)
        key = json.dumps(task.key, ensure_ascii=False).encode("utf-8")
        head = b'{"custom_id":' + key + b',"method":"POST","url":"' + BATCH_URL.encode()
        return head + b'","body":' + body + b"}\n", request_hash(body)


def request_hash(body: bytes) -> str:
    """16 hex digits of the SHA-256 of a request body."""
    return hashlib.sha256(body).hexdigest()[:16]
