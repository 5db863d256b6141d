"""What the report's cross-run figures add to each run: headline rows for the judges' agreement
(with each other and with the humans, the human ceiling beside it) and the "vs humans" column
of the Items table.

* :func:`cross_headline`: per source of a run, its agreement and Cohen's kappa with every other
  source it was compared with, and with ``--labels`` its accuracy and kappa against the human
  majority and the human ceiling (each human against the others) on the same references;
* :func:`vs_humans`: per record, ``agrees`` / ``disagrees`` (with the human majority) for the
  records whose own label was scored against the humans, None for the others (generations,
  failed calls, items without a human majority, ties).
"""

from __future__ import annotations

from typing import Any

from judgekit.labels.majority import TIE
from judgekit.view.data import RunData
from judgekit.view.profiles import profile

Row = list[Any]  # [name, value, path (None: not in summary.json), [low, high] or None]


def plural(n: int, word: str, words: str | None = None) -> str:
    """``"1 run"``, ``"2 runs"`` (``words``: an irregular plural)."""
    return f"{n:,} {word if n == 1 else words or word + 's'}"


def _est(name: str, est: dict[str, Any] | None) -> Row | None:
    if not est or est.get("value") is None:
        return None
    ci = est.get("ci")
    return [name, est["value"], None, list(ci) if ci else None]


def cross_headline(
    run: int, found: list[dict[str, Any]], pairs: list[dict[str, Any]], humans: dict | None
) -> list[Row]:
    """The headline rows of run ``run`` from compare mode and judge vs humans (module doc).

    Left out, to keep the headline short (the Compare and Judge vs humans tabs have them all):
    a rater ``judge#...`` (one order or sample) where the run also has ``judge`` itself, and
    pairs of one judge with itself (two orders or samples of one run)."""
    ids = {s["id"] for s in found if s["run"] == run}
    names = {s["rater"] for s in found if s["run"] == run}
    ids -= {s["id"] for s in found if s["id"] in ids and _base(s["rater"]) in names - {s["rater"]}}
    rows: list[Row | None] = []
    for judge in (humans or {}).get("judges", []):
        if judge["source"] not in ids or "note" in judge:
            continue
        rater = found[judge["source"]]["rater"]
        rows.append(_est(f"accuracy vs the human majority [95% CI], {rater}", judge["accuracy"]))
        ceiling = judge.get("ceiling") or {}
        if "humans" in ceiling:
            rows += [
                _est(f"human ceiling on {rater}'s items (each human vs the others), accuracy "
                     "[95% CI]", ceiling["humans"]["accuracy"]),
                _est(f"{rater} on the ceiling's references, accuracy [95% CI]",
                     (ceiling.get("judge") or {}).get("accuracy")),
            ]  # fmt: skip
    for pair in pairs:
        a, b = found[pair["a"]], found[pair["b"]]
        if a["run"] == b["run"] and _base(a["rater"]) == _base(b["rater"]):
            continue
        for mine, other in ((pair["a"], pair["b"]), (pair["b"], pair["a"])):
            if mine in ids:
                me, them = found[mine]["rater"], found[other]["name"]
                rows += [
                    _est(f"agreement of {me} with {them} [95% CI]", pair["agreement"]),
                    _est(f"Cohen's kappa of {me} with {them} [95% CI]", pair["kappa"]),
                ]
    return [r for r in rows if r is not None]


def _base(rater: str) -> str:
    return rater.split("#", 1)[0]


def vs_humans(
    run: int,
    data: RunData,
    found: list[dict[str, Any]],
    links: list[dict[tuple[str, str], int]],
    humans: dict[str, Any],
) -> list[str | None]:
    """The "vs humans" column of run ``run`` (module doc): a record disagrees when one of its
    own units (its own rater's label: the model, ``model#sK``, ``judge#order``) differs from
    the human majority, agrees when every such unit matches. Sources whose rater is one of the
    human raters are humans, not judges, and are left out."""
    prof = profile(data.pipeline)
    multi = len({r.get("sample_index") or 0 for r in data.records}) > 1
    own = [prof.raters(r, multi)[0] for r in data.records]
    majority, raters = humans["majority"], set(humans["raters"])
    out: list[str | None] = [None] * len(data.records)
    for source in found:
        if source["run"] != run or source["rater"] in raters:
            continue
        for unit, label in source["labels"].items():
            ref, row = majority.get(unit), links[run].get((unit, source["rater"]))
            if ref is None or ref == TIE or row is None or own[row] != source["rater"]:
                continue
            out[row] = "disagrees" if label != ref or out[row] == "disagrees" else "agrees"
    return out
