"""The usage block of a run's ``summary.json``: calls, requests, statuses, reasons, tokens and
cost per role and model, read from the run's records (:func:`usage_summary`)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from judgekit.llm.usage import UsageTotals
from judgekit.runlog import Record


def usage_summary(records: Iterable[Record]) -> dict[str, Any]:
    """Counts by status and stage, and tokens, cost and latency per (role, model).

    ``records`` may be any iterable (it is read once, so a stream from disk works).
    Returns a JSON-ready dict: ``{"calls": n (records: one per task), "requests": n (HTTP
    attempts, retries and re-asks included), "status": {...}, "by_stage": {stage: {status:
    n}}, "by_model": {"role|model": {"calls", "cache_hits", "tokens_in", "tokens_out",
    "cost_usd", "cost_unknown", "latency_s"}}, "served_by": {endpoint: n}, "reasons": {reason:
    n}, "reasons_by_model": {"role|model": {reason: n}} (``content_filter``, ``refusal``,
    ``truncated``, ``context_length``...: docs/providers.md), "totals": {"tokens_in",
    "tokens_out", "cost_usd", "cost_unknown"}}``; latency is summed
    in seconds; ``normalised`` counts the answers whose booleans were read from strings
    (``judgekit.llm.answers``); ``cost_usd`` sums the known costs and ``cost_unknown`` counts
    the calls whose price is unknown (their cost is not counted as $0); ``batch`` counts the
    records a batch answered and their cost, at batch prices (``judgekit.batch``);
    ``label_probs`` (only where log-probabilities were asked for) counts the ``ok`` records
    that asked, those ``with`` label probabilities and those ``without`` (the route gave none);
    ``served`` (only where a provider named them) counts per ``role|model`` the
    ``served_model`` and ``system_fingerprint`` values its answers carried (what
    ``judgekit drift`` compares between two runs of a judge).
    """
    calls = requests = normalised = batch = 0
    asked = scored = 0  # ok records that asked for log-probabilities, and got label_probs
    batch_cost = 0.0
    status: Counter[str] = Counter()
    by_stage: dict[str, Counter[str]] = defaultdict(Counter)
    tally = UsageTotals()
    reasons: Counter[str] = Counter()
    model_reasons: dict[str, Counter[str]] = defaultdict(Counter)
    served: Counter[str] = Counter()
    who = _Served()
    for r in records:
        calls += 1
        requests += r.attempts
        normalised += r.normalised > 0
        if r.batch is not None:
            batch += 1
            batch_cost += r.cost or 0.0
        status[r.status] += 1
        by_stage[r.stage][r.status] += 1
        if r.status == "ok" and r.params.get("logprobs"):
            asked += 1
            scored += r.label_probs is not None
        tally.add(r)
        if r.served_by:
            served[r.served_by] += 1
        who.add(r)
        if r.reason:
            reasons[r.reason.split(":", 1)[0]] += 1
            model_reasons[f"{r.role}|{r.model}"][r.reason.split(":", 1)[0]] += 1

    def value(name: str, v: float) -> float | int:  # counts as integers, the rest rounded
        return round(v, 6) if name in ("cost_usd", "latency_s") else int(v)

    totals = {
        name: value(name, tally.total(name))
        for name in ("tokens_in", "tokens_out", "cost_usd", "cost_unknown")
    }
    out = {
        "calls": calls,
        "requests": requests,
        "status": {k: status.get(k, 0) for k in ("ok", "unscored", "error")},
        "by_stage": {k: dict(v) for k, v in sorted(by_stage.items())},
        "by_model": {
            k: {kk: value(kk, vv) for kk, vv in v.items()} for k, v in tally.by_model.items()
        },
        "served_by": dict(served.most_common()),
        "reasons": dict(reasons.most_common()),
        "reasons_by_model": {k: dict(v.most_common()) for k, v in model_reasons.items()},
        "normalised": normalised,
        "batch": {"records": batch, "cost_usd": round(batch_cost, 6)},
        "totals": totals,
    }
    if who.seen:
        out["served"] = who.as_dict()
    if asked:
        out["label_probs"] = {"ok": asked, "with": scored, "without": asked - scored}
    return out


class _Served:
    """Per ``role|model``, the ``served_model`` and ``system_fingerprint`` values counted."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))

    def add(self, r: Record) -> None:
        for name in ("served_model", "system_fingerprint"):
            if (value := getattr(r, name)) is not None:
                self.seen[f"{r.role}|{r.model}"][name][value] += 1

    def as_dict(self) -> dict[str, dict[str, dict[str, int]]]:
        return {k: {name: dict(c.most_common()) for name, c in v.items()}
                for k, v in sorted(self.seen.items())}  # fmt: skip
