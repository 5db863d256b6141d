"""What a run leaves behind, as Python: :class:`RunResult` and :func:`load_run`.

``judgekit.run(...)`` returns a RunResult; ``judgekit.load_run(DIR)`` builds one from a finished
run directory. The records and labels tables are read from disk when first asked for (pandas is
imported then, not before).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgekit.errors import InputError
from judgekit.summary import RunSummary, parse_summary

if TYPE_CHECKING:
    import pandas as pd

    from judgekit.llm.estimate import DryRun

_HIDDEN = {".lock"}


@dataclass
class RunResult:
    """One run: where it is, its summary and its tables.

    Attributes:
        out_dir: the run directory.
        pipeline: the pipeline's name (``classify``, ``spilling``...).
        summary_data: ``summary.json`` as a dict (None for a dry run); ``summary`` is its
            typed form.
        elapsed_s: wall seconds of the run (0 for :func:`load_run`).
        requests: HTTP attempts this process sent (retries and re-asks included).
        cache_hits: tasks this process answered from the cache (no request sent).
        transient: those attempts that failed transiently, by kind (``timeout``...).
        cache_rejected: cache entries that were not valid answers (their tasks were called):
            not JSON, or not an answer of the task's schema.
        cache_pickled: cache entries in the pickle format of earlier judgekit versions, never
            unpickled (their tasks were called; the fresh answers replace them as JSON).
        cache_write_errors, cache_write_error: answers the cache could not store, and why.
        warnings: the endpoint warnings of the run, one line each (an endpoint that ignores
            the JSON schema: :mod:`judgekit.llm.health`).
        estimate: the dry run's counts (``--dry-run``; None otherwise, or where the pipeline's
            later calls depend on answers); ``dry_run_note`` says what was not counted.
        runner: the pipeline's runner (None for :func:`load_run`).
    """

    out_dir: Path
    pipeline: str = ""
    summary_data: dict[str, Any] | None = None
    elapsed_s: float = 0.0
    requests: int = 0
    cache_hits: int = 0
    transient: dict[str, int] = field(default_factory=dict)
    cache_rejected: int = 0
    cache_pickled: int = 0
    cache_write_errors: int = 0
    cache_write_error: str = ""
    warnings: list[str] = field(default_factory=list)
    estimate: DryRun | None = None
    dry_run_note: str | None = None
    runner: Any = field(default=None, repr=False)
    _records: Any = field(default=None, repr=False)

    @property
    def summary(self) -> RunSummary | None:
        """The typed ``summary.json`` (a pipeline's own sub-model; None for a dry run)."""
        from pydantic import ValidationError

        if self.summary_data is None:
            return None
        try:
            return parse_summary(self.summary_data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            field = str(first["loc"][0]) if first["loc"] else None
            raise InputError(
                self.out_dir / "summary.json",
                f"not a {self.pipeline or 'run'} summary ({where}: {first['msg']})",
                field=field,
            ) from None

    @property
    def files(self) -> dict[str, Path]:
        """Every file the run wrote, by path relative to ``out_dir`` (``records.jsonl``,
        ``summary.json``, ``labels.csv``, ``pairs/<generator>/<locale>.source.txt``...)."""
        if not self.out_dir.is_dir():
            return {}
        found = sorted(p for p in self.out_dir.rglob("*") if p.is_file())
        return {
            str(p.relative_to(self.out_dir)): p
            for p in found
            if p.name not in _HIDDEN and not p.name.endswith(".tmp")
        }

    @property
    def records(self) -> pd.DataFrame:
        """``records.jsonl`` as a DataFrame: one row per task (the last line of a key wins, as
        on resume), the record fields as columns (``key``, ``stage``, ``model``, ``status``,
        ``parsed``, ``raw``, ``reason``, ``tokens_in``... ; ``meta`` a dict per row)."""
        if self._records is None:
            self._records = read_records(self.out_dir)
        return self._records

    @property
    def labels(self) -> pd.DataFrame | None:
        """The long label table ``item, rater, label`` (``labels.csv``) where the pipeline
        writes one (classify, spilling, cultural); None otherwise. Text columns, read by the one
        table reader in the label vocabulary (:mod:`judgekit.data.vocabulary`): NFC item ids
        and rater names, labels in their text form (``""`` where missing)."""
        import pandas as pd

        from judgekit.data.tables import read_table
        from judgekit.data.vocabulary import canonical_id, label_text

        path = self.out_dir / "labels.csv"
        if not path.is_file():
            return None
        table = read_table(path)
        rows = [dict(row) for _, row in table.rows]
        for row in rows:
            for key in ("item", "rater"):
                if key in row:
                    row[key] = canonical_id(row[key]) or ""
            if "label" in row:
                row["label"] = label_text(row["label"]) or ""
        return pd.DataFrame(rows, columns=table.columns, dtype=str)

    @property
    def all_failed(self) -> bool:
        """True when the run has records and every one is an ``error`` (nothing answered)."""
        usage = (self.summary_data or {}).get("usage") or {}
        calls = usage.get("calls", 0)
        return bool(calls) and usage.get("status", {}).get("error", 0) == calls

    @property
    def nothing_scored(self) -> bool:
        """True when the run has records and none is ``ok`` (every answer failed validation,
        or got no answer)."""
        usage = (self.summary_data or {}).get("usage") or {}
        return bool(usage.get("calls", 0)) and not usage.get("status", {}).get("ok", 0)


def read_records(run_dir: Path) -> pd.DataFrame:
    """The records of ``run_dir/records.jsonl`` as a DataFrame, one row per key, read by the one
    reader of that file (:func:`judgekit.record_file.read_record_lines`: the last complete
    line of a key wins and takes its position; a line cut by a crash is ignored). Columns are
    :class:`~judgekit.runlog.Record`'s fields; a field a line lacks holds its default.

    Raises:
        InputError: no records.jsonl, or a complete line that is not a record (file, line,
            field).
    """
    import pandas as pd

    from judgekit.record_file import read_record_lines, with_defaults
    from judgekit.runlog import Record

    path = run_dir / "records.jsonl"
    if not path.is_file():
        raise InputError(run_dir, "not a run directory: no records.jsonl in it")
    rows = with_defaults(read_record_lines(path).records)
    return pd.DataFrame(rows, columns=list(Record.model_fields))


def load_run(path: Path | str) -> RunResult:
    """A finished run directory as a :class:`RunResult` (``summary.json`` and the tables).

    Raises:
        InputError: ``path`` is not a finished run directory (no ``summary.json``), or its
            summary is not UTF-8, not JSON, not an object or its signature not an object
            (``RunResult.summary`` and ``labels`` raise it for a summary or a labels.csv of
            the wrong shape).
    """
    out_dir = Path(path)
    summary_path = out_dir / "summary.json"
    if not summary_path.is_file():
        raise InputError(out_dir, "not a finished run directory: no summary.json in it")
    try:
        data = json.loads(summary_path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(summary_path, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InputError(summary_path, f"not JSON ({exc.msg})", line=exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError(summary_path, "expected a JSON object")
    if not isinstance(data.get("signature") or {}, dict):
        raise InputError(summary_path, "'signature' must be an object", field="signature")
    pipeline = str((data.get("signature") or {}).get("pipeline", ""))
    return RunResult(out_dir, pipeline=pipeline, summary_data=data)
