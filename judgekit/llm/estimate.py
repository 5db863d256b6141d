"""``--dry-run``: how many calls a run would send, and roughly how many tokens and dollars.

Nothing is sent. Tasks already in the run log (resume) and answers already in the cache are
counted apart and cost nothing. Input tokens are estimated from the prompt text (characters / 4,
the usual rate for English; other scripts use more tokens per character); output tokens and the
cost are upper bounds (``max_tokens`` per call, re-asks and retries not counted).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from judgekit.llm.cache import ResponseCache
from judgekit.llm.models import ModelState
from judgekit.llm.structured import cached_answer
from judgekit.llm.usage import prices_for
from judgekit.runlog import RunLog

_CHARS_PER_TOKEN = 4


@dataclass
class DryRun:
    """What a run would do. ``by_model`` maps ``role|model`` to the same counters."""

    tasks: int = 0
    recorded: int = 0
    cached: int = 0
    calls: int = 0
    tokens_in: int = 0
    tokens_out_max: int = 0
    cost_max_usd: float = 0.0
    unpriced: set[str] = field(default_factory=set)
    by_model: dict[str, dict[str, float]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(float))
    )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tasks": self.tasks,
            "recorded": self.recorded,
            "cached": self.cached,
            "calls": self.calls,
            "tokens_in_estimate": self.tokens_in,
            "tokens_out_max": self.tokens_out_max,
            "cost_max_usd": round(self.cost_max_usd, 6),
            "unpriced_models": sorted(self.unpriced),
            "by_model": {k: dict(v) for k, v in self.by_model.items()},
        }


def dry_run(tasks: Iterable[Any], runlog: RunLog, cache: ResponseCache | None) -> DryRun:
    """Count ``tasks`` (``llm.client.Task``) into a :class:`DryRun` without sending anything."""
    out = DryRun()
    states: dict[int, ModelState] = {}  # per spec: its cache-key prefixes, as the client's
    for task in tasks:
        out.tasks += 1
        if task.key in runlog:
            out.recorded += 1
            continue
        spec = task.spec
        if cache is not None:
            state = states.get(id(spec))
            if state is None:
                state = states[id(spec)] = ModelState(spec)
            hit = cache.get(state.cache_key(task))
            if hit is not None and cached_answer(hit, task.schema) is not None:
                out.cached += 1
                continue
        chars = sum(len(str(m.get("content") or "")) for m in task.messages)
        t_in = chars // _CHARS_PER_TOKEN + 4 * len(task.messages)
        prices = prices_for(spec)
        if not prices.known:
            out.unpriced.add(spec.model)
        cost = prices.cost(t_in, spec.max_tokens) or 0.0  # unpriced: listed apart
        out.calls += 1
        out.tokens_in += t_in
        out.tokens_out_max += spec.max_tokens
        out.cost_max_usd += cost
        m = out.by_model[f"{task.role}|{spec.label}"]
        m["calls"] += 1
        m["tokens_in_estimate"] += t_in
        m["tokens_out_max"] += spec.max_tokens
        m["cost_max_usd"] += cost
    return out
