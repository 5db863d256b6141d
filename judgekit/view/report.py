"""``judgekit view``: build the report of one or more runs (and humans) as one HTML file.

The report holds, per run, the signature line and every part of ``summary.json``
(:mod:`judgekit.view.summary`), every figure, and every record in a paged table
(:mod:`judgekit.view.rows`) with the detail context of its pipeline
(:mod:`judgekit.view.profiles`); across runs and judges, agreement and Cohen's kappa, and with
human labels, the judges against the human majority (:mod:`judgekit.view.compare`), their
rank clusters (:mod:`judgekit.view.clusters`) and, where records carry label probabilities,
their confidence (:mod:`judgekit.view.confidence`).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit import __version__
from judgekit.data.atomic import write_text
from judgekit.data.jsonfile import json_safe
from judgekit.drift.status import StaleCheck, load_drift
from judgekit.errors import InputError
from judgekit.view.clusters import clusters_vs_humans, compare_with_humans
from judgekit.view.compare import (
    MAX_PAIRS,
    against_humans,
    compare_sources,
    label_counts,
    shared_pairs,
    sources,
)
from judgekit.view.confidence import confidence_vs_humans
from judgekit.view.data import RunData, read_run
from judgekit.view.overview import cross_headline, plural, vs_humans
from judgekit.view.page import data_uri, notes_html, render_page
from judgekit.view.profiles import extras, profile
from judgekit.view.rows import add_facet, encode_rows
from judgekit.view.summary import signature_line, summary_blocks
from judgekit.view.tune import expand_tune_dirs, tune_blocks
from judgekit.view.which_facts import item_languages, judge_facts
from judgekit.view.which_judge import which_judge_sources


@dataclass(frozen=True)
class ReportInfo:
    """What :func:`build_report` wrote: ``path``, ``bytes`` (file size), ``records`` (rows in
    all runs), ``runs``, ``pairs`` (judge pairs compared), ``humans`` (judges scored against
    human labels), ``seconds`` (build time, wall clock) and ``confidence`` (judges whose label
    probabilities were scored against the human labels)."""

    path: Path
    bytes: int
    records: int
    runs: int
    pairs: int
    humans: int
    seconds: float
    confidence: int = 0


def _warnings(run: RunData) -> list[str]:
    out = []
    if not run.summary:
        out.append("no summary.json: the run ended before its report (only records are shown)")
    if run.cut_lines:
        out.append("the last line of records.jsonl was cut short (a crash) and is not shown")
    if run.replaced:
        out.append(f"{plural(run.replaced, 'record')} recorded again later (the last one is shown)")
    calls = (run.summary.get("usage") or {}).get("calls")
    if calls is not None and calls != len(run.records):
        out.append(
            f"summary.json counts {calls} records, records.jsonl holds {len(run.records)} "
            "(a resume or a rerun since the summary was written)"
        )
    return out


def run_payload(run: RunData) -> dict[str, Any]:
    """The page's data for one run (module doc)."""
    rows_by_key = {record["key"]: i for i, record in enumerate(run.records)}
    signature = run.summary.get("signature") or {}
    tuned, tune_png = tune_blocks(run.path)  # a calibrate tune candidate: the tune's card
    return {
        "name": run.name,
        "path": str(run.path),
        "pipeline": run.pipeline or "unknown",
        "signature_line": signature_line(signature) if signature else "no signature",
        "blocks": json_safe(summary_blocks(run.summary, run.pipeline) + tuned),
        "figures": [
            {"name": name, "uri": data_uri(png)}
            for name, png in {**run.figures, **tune_png}.items()
        ],  # fmt: skip
        "rows": encode_rows(run.records, profile(run.pipeline)),
        "extras": json_safe(extras(run, rows_by_key)),
        "warnings": _warnings(run),
    }


def build_report(
    runs: list[str | Path],
    out: str | Path,
    *,
    labels: str | Path | None = None,
    tie_policy: str = "exclude",
    n_resamples: int = 1000,
    seed: int = 0,
    drift: str | Path | None = None,
) -> ReportInfo:
    """Write the report of the run directories ``runs`` (and human ``labels``) to ``out``.

    Args:
        runs: one or more run directories (``judgekit run`` / ``judgekit audit`` output); a
            ``calibrate tune`` output stands for its chosen candidate's run, and a candidate's
            card carries the tune's report (:mod:`judgekit.view.tune`).
        out: the HTML file to write (its folder is created).
        labels: a long ``item,rater,label`` table of human labels (CSV/TSV/JSONL, as
            ``judgekit calibrate judge --human`` reads), or None.
        tie_policy: human ties: exclude, error or own_class (:mod:`judgekit.labels.majority`).
        n_resamples: bootstrap resamples for the CIs (0: no CI). seed: their seed.
        drift: a drift document (``judgekit drift run``'s ``drift.json``): each run that
            depended on a judge it found drifted says so first on its card (``stale: ...``, the
            rule of ``judgekit drift status``).

    Raises:
        InputError: a path that is not a run directory, a malformed file (file, line, field),
            an ``out`` that is one of the files read (records.jsonl, ``labels``...), or a
            ``drift`` file that is no drift document.
    """
    started = time.perf_counter()
    with _cycle_collection_paused():
        return _build_report(runs, out, labels, tie_policy, n_resamples, seed, drift, started)


@contextmanager
def _cycle_collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused, then restored as it was. A report of 100,000
    records makes millions of small objects that hold no cycles (records, columns, rows; each
    freed by reference counting as ever), over which every collection would walk again for
    nothing to collect: at 100,000 records that walking was about a sixth of the build."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _build_report(
    runs: list[str | Path], out: str | Path, labels: str | Path | None, tie_policy: str,
    n_resamples: int, seed: int, drift: str | Path | None, started: float,
) -> ReportInfo:  # fmt: skip
    """:func:`build_report`'s work (its doc), ``started`` the ``time.perf_counter()`` it began."""
    data = [read_run(path) for path in expand_tune_dirs(runs)]
    inputs = {f.resolve() for run in data for f in run.files}
    if Path(out).resolve() in inputs | ({Path(labels).resolve()} if labels is not None else set()):
        raise InputError(out, "an input of this report (it would be overwritten): give another -o")
    found, links = sources(data)
    pairs = compare_sources(found, links, n_resamples=n_resamples, seed=seed)
    against = _against_humans(found, links, data, labels, tie_policy, n_resamples, seed)
    humans, confidence = against["humans"], against["confidence"]
    payload = {
        "judgekit": __version__,
        "built": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "runs": [run_payload(run) for run in data],
        "sources": [
            {k: s[k] for k in ("id", "run", "rater", "name", "origin")}
            | {"n": len(s["labels"]), "counts": label_counts(s)}
            for s in found
        ],
        "pairs": pairs,
        **against,
    }
    for index, run in enumerate(data):
        part = payload["runs"][index]
        part["blocks"][0]["items"] += json_safe(cross_headline(index, found, pairs, humans))
        if humans is not None:
            add_facet(part["rows"], "vs_humans", vs_humans(index, run, found, links, humans))
    if drift is not None:
        mark_stale(payload["runs"], data, drift)
    total = shared_pairs(found)
    if total > len(pairs):  # said on the first run's card, never silent
        payload["runs"][0]["warnings"].append(
            f"{total - len(pairs)} of {plural(total, 'judge pair')} are not compared (at most "
            f"{MAX_PAIRS}, 8 sources, are): give fewer runs to compare the others"
        )
    notes = [(i, name, text) for i, run in enumerate(data) for name, text in run.notes.items()]
    title = "judgekit view: " + ", ".join(run.name for run in data)
    page = render_page(payload, title, notes_html(notes))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, page)
    return ReportInfo(
        path=out,
        bytes=out.stat().st_size,
        records=sum(len(run.records) for run in data),
        runs=len(data),
        pairs=len(pairs),
        humans=0 if humans is None else sum("note" not in j for j in humans["judges"]),
        seconds=time.perf_counter() - started,
        confidence=sum("note" not in c for c in confidence),
    )


def _against_humans(
    found: list[dict[str, Any]], links: Any, data: list[RunData], labels: str | Path | None,
    tie_policy: str, n_resamples: int, seed: int,
) -> dict[str, Any]:  # fmt: skip
    """The page's parts against human ``labels``: ``humans``, ``clusters``, ``confidence`` and
    ``which`` (None, or [] for confidence, without labels)."""
    if labels is None:
        return {"humans": None, "clusters": None, "confidence": [], "which": None}
    boot = {"n_resamples": n_resamples, "seed": seed}
    compared = compare_with_humans(found, labels, tie_policy=tie_policy,
                                   languages=item_languages(data), **boot)  # fmt: skip
    confidence = confidence_vs_humans(found, data, labels, **boot)
    which = which_judge_sources(compared)
    if which is not None and "facets" in which:
        which["judges"] = judge_facts(found, data, confidence, which["wide_share"])
    return {
        "humans": against_humans(found, links, labels, tie_policy=tie_policy, **boot),
        "clusters": clusters_vs_humans(compared),
        "confidence": confidence,
        "which": which,
    }


def mark_stale(parts: list[dict[str, Any]], data: list[RunData], drift: str | Path) -> None:
    """Put ``stale: ...`` first among the warnings of each run card (``parts``, one per run of
    ``data``) whose run depended on a judge the drift document ``drift`` found drifted.

    Raises:
        InputError: ``drift`` is no drift document (``judgekit.drift.status.load_drift``).
    """
    check = StaleCheck(load_drift(drift))
    for part, run in zip(parts, data, strict=True):
        reason = check(run.summary.get("signature") or {})
        if reason:
            part["warnings"].insert(0, f"stale: this run {reason}, which drifted ({drift})")
