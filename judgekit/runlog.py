"""Run records: one JSONL line per LLM call (success or not), resume, and usage summaries.

A run directory holds ``records.jsonl`` (append-only). On resume, every task key already recorded
is final and never called again; a line cut short by a crash (kill -9) is dropped and the file
truncated back to its last complete line before appending.
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

Status = Literal["ok", "unscored", "error"]


class Record(BaseModel):
    """One LLM call as the run log keeps it.

    ``status`` is ``ok`` (a validated answer), ``unscored`` (the model answered but never
    validly within the re-asks: ``raw`` keeps its last answer, ``reason`` says why) or ``error``
    (no answer: transient failures outlasted the retries, or the call was refused).
    """

    key: str
    stage: str
    role: str
    route: str
    model: str
    prompt_id: str
    prompt_hash: str
    params: dict[str, Any] = Field(default_factory=dict)
    schema_name: str | None = None
    sample_index: int = 0
    status: Status
    reason: str | None = None
    raw: str | None = None
    parsed: Any = None
    attempts: int = 0
    reasks: int = 0
    latency_s: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    cache_hit: bool = False
    meta: dict[str, Any] = Field(default_factory=dict)


class RunLog:
    """Append-only ``records.jsonl`` of a run directory, with the records already there.

    Args:
        out_dir: the run directory (created if needed).
    """

    def __init__(self, out_dir: Path | str) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.out_dir / "records.jsonl"
        self.records: dict[str, Record] = {}
        self.resumed = 0
        self._load()
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):  # a line cut short by a crash: drop it
            with open(self.path, "r+b") as fh:
                fh.truncate(end)
        for line in data[:end].decode("utf-8").splitlines():
            if line.strip():
                rec = Record.model_validate_json(line)
                self.records[rec.key] = rec
        self.resumed = len(self.records)

    def get(self, key: str) -> Record | None:
        """The record of a finished task, if there is one."""
        return self.records.get(key)

    def append(self, record: Record) -> None:
        """Write one record and flush it to the OS, so a crash loses at most this line."""
        self.records[record.key] = record
        self._fh.write(record.model_dump_json() + "\n")
        self._fh.flush()

    def sync(self) -> None:
        """Flush to disk (fsync)."""
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self.sync()
            self._fh.close()


def usage_summary(records: list[Record]) -> dict[str, Any]:
    """Counts by status and stage, and tokens, cost and latency per (role, model).

    Returns a JSON-ready dict: ``{"calls": n, "status": {...}, "by_stage": {stage: {status:
    n}}, "by_model": {"role|model": {"calls", "cache_hits", "tokens_in", "tokens_out",
    "cost_usd", "latency_s"}}, "reasons": {reason: n}}``.
    """
    status = Counter(r.status for r in records)
    by_stage: dict[str, Counter[str]] = defaultdict(Counter)
    by_model: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    reasons: Counter[str] = Counter()
    for r in records:
        by_stage[r.stage][r.status] += 1
        m = by_model[f"{r.role}|{r.model}"]
        m["calls"] += 1
        m["cache_hits"] += int(r.cache_hit)
        m["tokens_in"] += r.tokens_in
        m["tokens_out"] += r.tokens_out
        m["cost_usd"] += r.cost
        m["latency_s"] += r.latency_s
        if r.reason:
            reasons[r.reason.split(":", 1)[0]] += 1
    return {
        "calls": len(records),
        "status": {k: status.get(k, 0) for k in ("ok", "unscored", "error")},
        "by_stage": {k: dict(v) for k, v in sorted(by_stage.items())},
        "by_model": {k: {kk: round(vv, 6) for kk, vv in v.items()} for k, v in by_model.items()},
        "reasons": dict(reasons.most_common()),
    }


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp file then rename), UTF-8, indented."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", "utf-8")
    tmp.replace(path)
