"""Reading one model's label probabilities run by run: the first answer decides whether a run
scores ``label_probs`` or hard labels, and whatever cannot be read is said once and counted.

The reading itself is :func:`judgekit.llm.logprobs.label_probs` (docs/confidence.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from judgekit.llm.logprobs import LogprobsMismatch, label_probs, label_target

_NONE = (
    "the first answer came without log-probabilities: this run scores hard labels (records "
    "without label_probs)"
)
_LOST = (
    "an answer came without log-probabilities after earlier ones had them: its record has no "
    "label_probs (counted in usage.label_probs)"
)


class LogprobWatch:
    """Reads the label probabilities of one model's answers for the records, and says once,
    in one line, when they are missing.

    The first answer decides: without log-probabilities, the model scores hard labels for the
    rest of the run (one warning; :meth:`ModelSpec.scoring` says ``hard``), so no run switches
    silently mid-way. An answer that lacks them after earlier ones had them, or whose
    log-probabilities cannot be read at the label, gets no ``label_probs`` (one warning per
    kind; counted in ``usage.label_probs`` of ``summary.json``).
    """

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.mode: str | None = None  # "label_probs" or "hard", once the first answer came
        self._warned: set[str] = set()

    def _warn(self, kind: str, line: str, on_warning: Callable[[str], None] | None) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            if on_warning is not None:
                on_warning(f"{self.spec.model}: {line}")

    def read(
        self,
        choice: Mapping[str, Any] | None,
        schema: type[BaseModel],
        content: str | None,
        on_warning: Callable[[str], None] | None,
    ) -> dict[str, Any]:
        """The record fields (``label_probs``, ``label_probs_bound``) of one validated
        answer; empty when there are none to give."""
        target = label_target(schema)
        if target is None:
            self._warn(
                f"schema:{schema.__name__}",
                f"{schema.__name__} has no one enum label field: its records get no label_probs",
                on_warning,
            )
            return {}
        if self.mode == "hard":
            return {}
        try:
            found = label_probs(choice or {}, target[1], target[0], content)
        except LogprobsMismatch as exc:
            self._warn("mismatch", f"log-probabilities not read at the label ({exc})", on_warning)
            return {}
        if found is None:
            first, self.mode = self.mode is None, self.mode or "hard"
            if first:
                self.spec.mark_no_logprobs()
            self._warn("none" if first else "lost", _NONE if first else _LOST, on_warning)
            return {}
        self.mode = "label_probs"
        return {"label_probs": found.probs, "label_probs_bound": found.bounds or None}


def cached_label_probs(hit: Any) -> dict[str, Any]:
    """The ``label_probs`` / ``label_probs_bound`` a cache entry stored with its answer, when
    they are well formed (probabilities in [0, 1], ``label_probs`` summing to 1); else nothing."""
    probs = hit.get("label_probs") if isinstance(hit, Mapping) else None
    if not _in_range(probs) or not probs or abs(sum(probs.values()) - 1.0) > 1e-6:
        return {}
    bound = hit.get("label_probs_bound")
    return {"label_probs": probs, "label_probs_bound": bound if _in_range(bound) else None}


def _in_range(values: Any) -> bool:
    return isinstance(values, dict) and all(
        isinstance(k, str) and isinstance(p, int | float) and 0.0 <= p <= 1.0
        for k, p in values.items()
    )


def note_scoring(specs: Iterable[Any], records: Iterable[Any]) -> None:
    """Give each spec that asked for log-probabilities (or was told the route gives none) the
    count of its ``ok`` records in ``records`` and of those with ``label_probs``
    (``ModelSpec.note_scored``), matched by route and name: the signature then names the
    scoring the records actually carry (``label_probs@top10``, ``hard``, or both with their
    shares), whether they were answered now, resumed from the run log or read from the cache.
    """
    asking = {(s.model, s.label): s for s in specs if s.logprobs or s._no_logprobs}
    if not asking:
        return
    counts = {key: [0, 0] for key in asking}
    for record in records:
        count = counts.get((record.route, record.model))
        if count is not None and record.status == "ok":
            count[0] += 1
            count[1] += record.label_probs is not None
    for key, (ok, with_probs) in counts.items():
        asking[key].note_scored(ok, with_probs)
