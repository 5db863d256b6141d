"""Helpers of the batch tests: a run exported as batch JSONL or imported from result files,
its shard paths and records, and the body of a request line as written."""

from __future__ import annotations

from pathlib import Path

import judgekit
from judgekit.batch.exporter import ExportBatch
from judgekit.batch.importer import ImportResults
from judgekit.runlog import RunLog


def export(cfg: Path, out: Path, directory: Path, shards: int = 1, **kw) -> ExportBatch:
    executor = ExportBatch(directory, shards)
    result = judgekit.run(cfg, out=out, executor=executor, preflight=False, **kw)
    assert result.summary_data is None  # an export writes no report
    return executor


def do_import(cfg: Path, out: Path, files, manifests=(), **kw):
    executor = ImportResults(files, manifests)
    result = judgekit.run(cfg, out=out, executor=executor, preflight=False, **kw)
    return result, executor.counts


def shard_paths(executor: ExportBatch) -> list[Path]:
    root = Path(executor.manifest.directory)
    return [root / s.file for s in executor.manifest.shards]


def records(out: Path) -> dict:
    log = RunLog(out)
    try:
        return {r.key: r for r in log.iter_records()}
    finally:
        log.close()


def body_bytes(line: bytes) -> bytes:
    """The body of a request line, as the bytes written (independently of judgekit's code)."""
    head = line.index(b',"body":') + len(b',"body":')
    return line[head : line.rindex(b"}")]
