"""Prices and running usage totals: tokens, cost and latency per (role, model).

Prices are resolved once per model, never per call: the spec's own price (USD per million
tokens) if set (0 included), 0 for servers judgekit talks to directly (the embedded model,
vLLM, ``openai_compatible``), else litellm's bundled price table (``litellm.model_cost``, read
from the installed package, never the network). A route that table does not price (litellm's
own ``cost_per_token`` raises ``ModelNotMappedError`` for it) has no known price: its calls
cost ``None``, never $0, and summaries count them as calls of unknown cost.

Answers of a batch (``judgekit.batch``) are priced by :func:`batch_prices_for`: the table's
batch price (``input_cost_per_token_batches``...) where it has one, else half the online price,
as litellm's own ``batch_cost_calculator`` does (OpenAI's, Anthropic's and Vertex's batch
discount); a price set in the spec is an online price and is halved the same way.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from judgekit.llm.spec import ModelSpec


@dataclass(frozen=True)
class Prices:
    """USD per token for input and output; ``known`` is False when no price was found."""

    input: float = 0.0
    output: float = 0.0
    known: bool = True

    def cost(self, tokens_in: int, tokens_out: int) -> float | None:
        """USD for one call; None when no price is known (an unknown cost is not $0)."""
        if not self.known:
            return None
        return tokens_in * self.input + tokens_out * self.output


_cache: dict[tuple[str, float | None, float | None], Prices] = {}


def prices_for(spec: ModelSpec) -> Prices:
    """The prices of ``spec`` (see the module doc); cached per route and configured price."""
    key = (spec.model, spec.price_input_per_mtok, spec.price_output_per_mtok)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    if spec.price_input_per_mtok is not None or spec.price_output_per_mtok is not None:
        p_in, p_out = spec.price_input_per_mtok or 0.0, spec.price_output_per_mtok or 0.0
        prices = Prices(p_in / 1e6, p_out / 1e6)
    elif spec.is_openai_compatible_server:
        prices = Prices()
    else:
        prices = _table_prices(spec.model)
    _cache[key] = prices
    return prices


_batch_cache: dict[tuple[str, float | None, float | None], Prices] = {}


def batch_prices_for(spec: ModelSpec) -> Prices:
    """The prices of one answer of a batch for ``spec`` (see the module doc): 0 for servers
    judgekit talks to directly, the table's ``*_batches`` prices, else half the online price;
    unknown (``known`` False) where the online price is."""
    key = (spec.model, spec.price_input_per_mtok, spec.price_output_per_mtok)
    hit = _batch_cache.get(key)
    if hit is not None:
        return hit
    online = prices_for(spec)
    prices = Prices(online.input / 2, online.output / 2, online.known)
    configured = spec.price_input_per_mtok is not None or spec.price_output_per_mtok is not None
    if online.known and not configured and not spec.is_openai_compatible_server:
        prices = _table_prices(spec.model, suffix="_batches", fallback=prices)
    _batch_cache[key] = prices
    return prices


def _table_prices(route: str, suffix: str = "", fallback: Prices | None = None) -> Prices:
    import judgekit.llm  # noqa: F401  (sets LITELLM_LOCAL_MODEL_COST_MAP before litellm loads)

    litellm: Any = sys.modules.get("litellm")
    if litellm is None:
        import litellm
    names = (f"input_cost_per_token{suffix}", f"output_cost_per_token{suffix}")
    for name in (route, route.split("/", 1)[1]):
        info = litellm.model_cost.get(name)
        priced = isinstance(info, dict) and (names[0] in info or names[1] in info)
        if priced:  # some entries price by second or image only: not a token price
            return Prices(float(info.get(names[0]) or 0.0), float(info.get(names[1]) or 0.0))
    return Prices(known=False) if fallback is None else fallback


@dataclass
class UsageTotals:
    """Totals of records per ``role|model``: ``calls``, ``cache_hits``, ``tokens_in``,
    ``tokens_out``, ``cost_usd`` (known costs), ``cost_unknown`` (calls without a price: not
    counted as $0) and ``latency_s`` (seconds, summed). The one tally of a run's usage: the
    client keeps one for live progress, and ``summary.json``'s usage block
    (:func:`judgekit.run_usage.usage_summary`) adds the run's records to another."""

    by_model: dict[str, dict[str, float]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(float))
    )

    def add(self, record: Any) -> None:
        """Count one record (anything with role, model, status, tokens, cost, latency)."""
        m = self.by_model[f"{record.role}|{record.model}"]
        m["calls"] += 1
        m["cache_hits"] += int(record.cache_hit)
        m["tokens_in"] += record.tokens_in
        m["tokens_out"] += record.tokens_out
        m["cost_usd"] += record.cost or 0.0
        m["cost_unknown"] += record.cost is None
        m["latency_s"] += record.latency_s

    def cost_text(self) -> str:
        """``$0.0123``, plus ``(cost unknown for N calls)`` when some calls have no price."""
        return cost_text(self.total("cost_usd"), int(self.total("cost_unknown")))

    def total(self, name: str) -> float:
        """The sum of one counter over every model (``tokens_in``, ``cost_usd``, ``ok``...)."""
        return sum(m.get(name, 0.0) for m in self.by_model.values())


def cost_text(cost_usd: float, unknown: int) -> str:
    """``$0.0123``, plus ``(cost unknown for N calls)`` when ``unknown`` > 0 calls had no price."""
    text = f"${cost_usd:.4f}"
    return text + (f" (cost unknown for {unknown} calls)" if unknown else "")
