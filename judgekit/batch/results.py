"""The one reader of batch result files: OpenAI's output and error files, vLLM's ``run-batch``.

Every shape a result line comes in is read here (one JSON object a line):

* answered (OpenAI output file; vLLM): ``{"id", "custom_id", "response": {"status_code": 200,
  "request_id", "body": <chat.completion>}, "error": null}``;
* refused (OpenAI error file): ``"response": {"status_code": 4xx/5xx, "body": {"error":
  {"message", ...}}}``;
* not sent (OpenAI error file; an expired or cancelled batch): ``"response": null, "error":
  {"code": "batch_expired", "message"}``;
* failed in vLLM (``run_batch.py``'s ``make_error_request_output``): ``"response":
  {"status_code": 400, "body": null}, "error": "<message>"`` (newer vLLM: the error object,
  and its code as ``status_code``).

:meth:`ResultIndex.read` reads every file once and fails with one located
:class:`~judgekit.errors.InputError` (file, line, field) on the first line that is not such a
result: not UTF-8, not JSON (a last line cut short names the file as truncated), not an object,
without a ``custom_id``, or a batch *request* line (the input file given instead of the output).
Nothing is recorded before every file has been read. The index keeps each key's place in its
file, not the answers (100,000 answers take a few MB); :meth:`ResultIndex.get` reads one back.
A key met twice keeps its first answer (an answer beats an error); the others are counted.
"""

from __future__ import annotations

import json
import mmap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.errors import InputError


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One result line.

    Attributes:
        key: the ``custom_id`` (a task key).
        body: the ``chat.completion`` of an answered request (HTTP 200), else None.
        status: the request's HTTP status; None where it was never sent (expired).
        error: why there is no answer (None when ``body`` is set).
        source: the file; ``line``: its 1-based line.
    """

    key: str
    body: dict[str, Any] | None
    status: int | None
    error: str | None
    source: str
    line: int


def _message(value: Any) -> str:
    """The text of an error value (a string, ``{"message"}``, ``{"error": {"message"}}``)."""
    if isinstance(value, dict):
        inner = value.get("error", value)
        if isinstance(inner, dict):
            code, text = inner.get("code"), inner.get("message")
            if text is not None:
                return f"{code}: {text}" if isinstance(code, str) and code else str(text)
        return json.dumps(value, ensure_ascii=False)[:300]
    return str(value)


def parse_result(obj: Any, path: Path | str, line: int) -> BatchResult:
    """The :class:`BatchResult` of one decoded line (see the module doc for the shapes).

    Raises:
        InputError: not a result line (the field named).
    """
    if not isinstance(obj, dict):
        raise InputError(path, "expected a JSON object per line (a batch result)", line=line)
    key = obj.get("custom_id")
    if "body" in obj and "method" in obj:
        advice = "give the batch's output file (vllm run-batch -o, or the batch's output_file_id)"
        raise InputError(path, f"a batch request line, not a result: {advice}", line=line)
    if not isinstance(key, str) or not key:
        raise InputError(path, "missing or not a string", line=line, field="custom_id")
    response, error = obj.get("response"), obj.get("error")
    if response is None:
        if error is None:
            raise InputError(path, "a result needs a response or an error", line=line,
                             field="response")  # fmt: skip
        return BatchResult(key, None, None, _message(error), str(path), line)
    if not isinstance(response, dict):
        raise InputError(path, "expected an object or null", line=line, field="response")
    status = response.get("status_code", 200)  # vLLM's default is 200
    if not isinstance(status, int) or isinstance(status, bool):
        raise InputError(path, "expected an HTTP status", line=line, field="response.status_code")
    body = response.get("body")
    if status == 200 and error is None and isinstance(body, dict):
        return BatchResult(key, body, 200, None, str(path), line)
    if error is not None:
        reason = _message(error)
    elif body is not None:
        reason = _message(body)
    else:
        reason = "no body"
    return BatchResult(key, None, status, f"HTTP {status}: {reason}", str(path), line)


def _decode(raw: bytes, path: Path, line: int, last: bool) -> Any:
    try:
        text = raw.decode("utf-8-sig" if line == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 ({exc.reason})", line=line) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if last and not raw.endswith(b"\n"):
            raise InputError(path, f"the last line is cut short ({exc.msg}): the file is "
                             "truncated; fetch it again", line=line) from None  # fmt: skip
        raise InputError(path, f"invalid JSON: {exc.msg}", line=line) from None
    except (ValueError, RecursionError) as exc:  # huge integers, nesting too deep
        raise InputError(path, f"invalid JSON: {str(exc).split(';')[0]}", line=line) from None


def _lines(path: Path) -> Iterator[tuple[int, int, bytes, bool]]:
    """(1-based line, byte offset, raw line, is last) of each non-blank line of ``path``."""
    with open(path, "rb") as handle:
        offset = 0
        previous: tuple[int, int, bytes] | None = None
        for number, raw in enumerate(handle, 1):
            if raw.strip():
                if previous is not None:
                    yield (*previous, False)
                previous = (number, offset, raw)
            offset += len(raw)
        if previous is not None:
            yield (*previous, True)


class ResultIndex:
    """Where each key's result is in a set of result files (see the module doc).

    Attributes:
        paths: the files, in the order given.
        lines: result lines read; ``duplicates``: lines for a key already met (ignored).
    """

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = list(paths)
        self.lines = 0
        self.duplicates = 0
        self._where: dict[str, tuple[int, int, int, int, bool]] = {}
        self._maps: list[mmap.mmap | None] = []

    @classmethod
    def read(cls, paths: Sequence[Path | str]) -> ResultIndex:
        """Index ``paths`` (every line checked; see the module doc).

        Raises:
            InputError: a file is missing or a line is not a result (located).
        """
        index = cls([Path(p) for p in paths])
        for number, path in enumerate(index.paths):
            if path.is_dir():
                raise InputError(path, "is a directory, expected a batch result file (JSONL)")
            if not path.is_file():
                raise InputError(path, "file not found")
            for line, offset, raw, last in _lines(path):
                result = parse_result(_decode(raw, path, line, last), path, line)
                index._add(result, (number, offset, len(raw), line, result.body is not None))
        return index

    def _add(self, result: BatchResult, where: tuple[int, int, int, int, bool]) -> None:
        self.lines += 1
        seen = self._where.get(result.key)
        if seen is None:
            self._where[result.key] = where
            return
        self.duplicates += 1
        if where[4] and not seen[4]:  # an answer beats an error met first
            self._where[result.key] = where

    def __contains__(self, key: object) -> bool:
        return key in self._where

    def __len__(self) -> int:
        return len(self._where)

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def answered(self, key: str) -> bool:
        """Whether ``key``'s result is an answer (HTTP 200 with a body)."""
        return self._where[key][4]

    def get(self, key: str) -> BatchResult:
        """The result of ``key`` (read back from its file, memory-mapped: no system call per
        result).

        Raises:
            KeyError: no result for ``key``.
        """
        number, offset, length, line, _ = self._where[key]
        if not self._maps:
            self._maps = [None] * len(self.paths)
        view = self._maps[number]
        if view is None:  # a file with an indexed line is not empty: it can be mapped
            with open(self.paths[number], "rb") as handle:
                view = self._maps[number] = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        raw = view[offset : offset + length]
        path = self.paths[number]
        return parse_result(_decode(raw, path, line, False), path, line)

    def close(self) -> None:
        """Unmap the files mapped by :meth:`get` (idempotent)."""
        for view in self._maps:
            if view is not None:
                view.close()
        self._maps = []
