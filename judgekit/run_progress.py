"""Where a run stands: the one :class:`RunProgress` object the engine passes to ``on_progress``
(:func:`judgekit.run`), which ``judgekit run``'s progress bar shows."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal


@dataclass
class RunProgress:
    """Where a run stands, passed to ``on_progress`` (one object, updated in place).

    Attributes:
        event: ``planned`` (once, before any call: ``planned``, ``resumed`` and ``out_dir``
            are known), ``item`` (an item ended: ``done`` grew by one), ``record`` (records
            were written; at most every 0.2 s), ``tick`` (every second, and once at the end).
        run_name, pipeline, out_dir: the run.
        planned: items the run will do (``plan()``); ``done``: items ended so far.
        resumed: records already in ``records.jsonl`` when the run started.
        records: records in ``records.jsonl`` now (resumed ones included).
        status: records of this process by status (``ok``, ``unscored``, ``error``), and
            ``cached`` (answered from the cache).
        requests: HTTP attempts this process sent (retries and re-asks included).
        transient: those attempts that failed transiently, by kind (``timeout``: no answer
            within the config's ``timeout``; ``rate_limit``, ``server``, ``connection``).
        tokens: input + output tokens of this process's records; ``cost_usd``: their cost,
            and ``cost_unknown`` the records whose price no table knows (not counted as $0).
        preflight: what the checks before the first call covered and took (one line; empty
            when they were skipped).
        batch: where a batch run stands (one line: the batches' states, counts and the time
            left in their window; empty for an online run).
    """

    event: Literal["planned", "item", "record", "tick"] = "planned"
    run_name: str = ""
    pipeline: str = ""
    out_dir: Path = Path()
    planned: int = 0
    done: int = 0
    resumed: int = 0
    records: int = 0
    status: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    transient: dict[str, int] = field(default_factory=dict)
    tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0
    preflight: str = ""
    batch: str = ""
