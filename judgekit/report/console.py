"""Console summaries of finished runs, one printer per pipeline (rich tables).

Each printer takes the run's summary (the dict written to ``summary.json``), a rich console and,
where it helps, the runner; it reads nothing else and prints only. Registered per pipeline in
``judgekit.pipelines`` (``get_printer``); the CLI calls it after ``judgekit.run``.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table


def reasons(counts: dict[str, int]) -> str:
    """``3 not 5 distinct meanings, 1 generation truncated`` from counts by reason."""
    return ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in counts.items())


def print_classify(summary: dict[str, Any], console: Any, run: Any = None) -> None:
    """The label counts per rater (labels in the config's order)."""
    labels = run.options.labels if run is not None else summary["signature"]["labels"]
    table = Table(title="labels per rater")
    table.add_column("rater")
    for label in labels:
        table.add_column(label)
    for rater, counts in summary.get("labels", {}).items():
        table.add_row(rater, *(str(counts.get(label, 0)) for label in labels))
    console.print(table)
    common = summary.get("labels_common") or {}
    if common.get("incomplete") and len(common.get("shares", {})) > 1:
        table = Table(title=f"label shares on the {common['n_common']} items every rater "
                      "labelled (raters compared here)")  # fmt: skip
        table.add_column("rater")
        for label in labels:
            table.add_column(label)
        for rater, shares in common["shares"].items():
            name = rater + (" (incomplete)" if rater in common["incomplete"] else "")
            table.add_row(name, *("-" if shares[lab] is None else f"{shares[lab]:.3f}"
                                  for lab in labels))  # fmt: skip
        console.print(table)


def _by_lang(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    status: dict[str, dict[str, Any]] = {}
    for row in summary["items"]["by_model_lang"]:
        agg = status.setdefault(row["lang"], {"planned": 0, "judged": 0, "excluded": {}})
        agg["planned"] += row["planned"]
        agg["judged"] += row["judged"]
        for reason, n in row["excluded"].items():
            agg["excluded"][reason] = agg["excluded"].get(reason, 0) + n
    return status


def print_spilling(summary: dict[str, Any], console: Any, run: Any = None) -> None:
    """One row per language (pooled over models): the spilling rate, or why there is none
    (items excluded, by reason); then the overall rate and the English back-check."""
    table = Table(title="spilling rate by language (share of judged meanings found invalid)")
    for col in ("lang", "items", "judged", "meanings", "invalid", "rate", "sd", "excluded"):
        table.add_column(col)
    rates = {row["lang"]: row for row in summary.get("rates", {}).get("by_lang", [])}
    for lang, agg in _by_lang(summary).items():
        rate = rates.get(lang)
        sd = None if rate is None else rate["std_item_rate"]
        table.add_row(
            lang,
            str(agg["planned"]),
            str(agg["judged"]),
            "-" if rate is None else str(rate["n_judged"]),
            "-" if rate is None else str(rate["n_invalid"]),
            "no rate" if rate is None else f"{rate['spilling_rate']:.3f}",
            "-" if sd is None else f"{sd:.3f}",
            reasons(agg["excluded"]) or "-",
        )
    console.print(table)
    if summary.get("spilling_rate") is not None:
        judged = sum(row["n_judged"] for row in rates.values())
        invalid = sum(row["n_invalid"] for row in rates.values())
        console.print(
            f"overall spilling rate {summary['spilling_rate']:.3f} "
            f"({invalid} of {judged} judged meanings invalid)"
        )
    _print_models(summary.get("models_compared") or {}, console)
    back = summary.get("backcheck", {}).get("overall") or {}
    if back.get("n_rejected"):
        why = reasons(summary["items"].get("backcheck_excluded") or {})
        console.print(
            f"English back-check: {back['n_accepted_en']} of {back['n_rejected']} rejected "
            f"meanings accepted in English ({back['accepted_share']:.3f})"
            + (f"; items not back-checked: {why}" if why else "")
        )


def _print_models(compared: dict[str, Any], console: Any) -> None:
    """One line ranking the models on their common items (judgekit.metrics.common_items)."""
    ranking = compared.get("ranking") or []
    if len(ranking) < 2:
        return
    shown = []
    for r in ranking:
        rate = r["spilling_rate_common"]
        text = f"{r['model']} " + ("-" if rate is None else f"{rate:.3f}")
        shown.append(text + (" (incomplete)" if r["incomplete"] else ""))
    console.print(
        f"models on the {compared['n_common']} items judged for every model (lower is better): "
        + ", ".join(shown)
    )


def print_localise(summary: dict[str, Any], console: Any, run: Any = None) -> None:
    """Localised / excluded counts per (generator, locale)."""
    table = Table(title="localised pairs (passed the checks) per generator and locale")
    for col in ("generator", "locale", "pairs", "localised", "unchanged", "excluded"):
        table.add_column(col)
    for row in summary.get("by_locale", []):
        table.add_row(*(str(row[k]) for k in ("model", "locale", "planned", "localised",
                                               "unchanged", "excluded")))  # fmt: skip
    console.print(table)


def _rank(row: dict[str, Any]) -> str:
    """A system's rank as shown: ``-`` without one, ``=1`` when it shares it (a tie)."""
    if row.get("rank") is None:
        return "-"
    return ("=" if row.get("tied") else "") + str(row["rank"])


def print_errors(summary: dict[str, Any], console: Any, run: Any = None) -> None:
    """Per-type segment counts (paper Table 5 style) and mean MQM per system."""
    fixed = {"system", "n_scored", "locale_specific", "general", "total", "mean_mqm",
             "n_common", "mean_mqm_common", "incomplete", "rank", "tied"}  # fmt: skip
    rows = summary.get("type_counts", [])
    if run is not None:
        ids = run.rubric.ids()
    else:  # the rubric's type ids are the other columns, in order
        ids = [k for k in (rows[0] if rows else {}) if k not in fixed]
    common = rows[0]["n_common"] if rows else 0
    table = Table(title="segments with >= 1 error of each type (once per type per segment)")
    for col in ("system", "scored", *ids, "locale", "general", "total", "mean MQM",
                f"MQM on {common} common", "rank"):  # fmt: skip
        table.add_column(col)
    for row in rows:
        mqm, on_common = row.get("mean_mqm"), row.get("mean_mqm_common")
        name = row["system"] + (" (incomplete)" if row["incomplete"] else "")
        table.add_row(name, str(row["n_scored"]), *(str(row[t]) for t in ids),
                      str(row["locale_specific"]), str(row["general"]), str(row["total"]),
                      "-" if mqm is None else f"{mqm:.2f}",
                      "-" if on_common is None else f"{on_common:.2f}",
                      _rank(row))  # fmt: skip
    console.print(table)
    if len(rows) > 2:  # several systems: say what the ranking compares
        console.print(f"systems ranked on the {common} segments scored for every system; "
                      "incomplete = a system with unscored segments")  # fmt: skip
    tied = [r["system"] for r in rows if r.get("tied")]
    if tied:
        console.print(f"tied (=): {', '.join(tied)} have equal MQM on the common segments and "
                      "share a rank")  # fmt: skip
    if summary.get("calibration"):
        console.print(f"calibration: {summary['files'].get('calibration')}")
