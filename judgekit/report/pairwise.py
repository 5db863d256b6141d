"""The pairwise run's report: verdict tables, per-judge statistics beside published judges, the
accuracy-vs-agreement figure, ``summary.json`` and the console table.

Files written to the run directory:

* ``verdicts.csv``: one row per (item, judge): ``item, subset, judge, gold, original, swapped,
  resolved, status`` (verdicts in the original outputs' identities; ``status`` is
  ``consistent``, ``inconsistent`` or ``incomplete``).
* ``labels.csv``: the long ``item,rater,label`` table for ``judgekit calibrate``: raters
  ``<judge>#original`` and ``<judge>#swapped`` (one per judge and order) and ``<judge>`` (the
  resolved verdict; none for an excluded or incomplete item). ``gold.csv``: the gold labels in
  the same layout (rater ``gold``).
* ``pairwise.csv``: :func:`judgekit.metrics.pairwise.judge_table` for the run's judges
  (``source`` ``run``) and, where configured, the published judges on the same items
  (``source`` ``published``).
* ``items.jsonl``: the judged items in LLMBar's fields (``id, subset, input, output_1,
  output_2, label``), so the run directory shows what was judged without the input file.
* ``accuracy_vs_agreement.png`` and ``summary.json`` (signature, counts that add up, the table).
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from judgekit.data.atomic import open_output, save_figure, write_frame
from judgekit.data.jsonfile import json_safe, write_json
from judgekit.data.pairwise import VERDICT_COLUMNS
from judgekit.metrics.concordance import unswap_verdicts
from judgekit.metrics.pairwise import judge_table, resolve_verdicts
from judgekit.run_usage import usage_summary
from judgekit.runlog import Record

if TYPE_CHECKING:
    from judgekit.pipelines.pairwise import PairwiseRun

FIGURE = "accuracy_vs_agreement.png"


def run_verdicts(run: PairwiseRun, records: Iterable[Record]) -> tuple[pd.DataFrame, dict]:
    """The run's verdict frame (one row per item and judge, items in file order, judges in
    config order) and the usage summary of ``records`` (read once).

    A task without a valid answer leaves its order's verdict missing (None); the frame's
    ``excluded`` attribute counts those by ``verdict_<status>``.
    """
    got: dict[tuple[str, str], dict[str, str]] = {}
    excluded: Counter[str] = Counter()

    def scan() -> Iterator[Record]:
        for record in records:
            if record.status == "ok":
                verdict = record.parsed["verdict"]
                if record.meta["order"] == "swapped":
                    verdict = unswap_verdicts([verdict])[0]
                got.setdefault((record.model, record.meta["item"]), {})[record.meta["order"]] = (
                    verdict
                )
            else:
                excluded[f"verdict_{record.status}"] += 1
            yield record

    usage = usage_summary(scan())
    rows = [
        (judge.label, item.subset, item.id, item.gold, *_orders(got.get((judge.label, item.id))))
        for item in run.judged_items
        for judge in run.judges
    ]
    frame = pd.DataFrame(rows, columns=list(VERDICT_COLUMNS))
    frame.attrs["excluded"] = dict(sorted(excluded.items()))
    return frame, usage


def _orders(found: dict[str, str] | None) -> tuple[str | None, str | None]:
    found = found or {}
    return found.get("original"), found.get("swapped")


def published_verdicts(run: PairwiseRun) -> tuple[pd.DataFrame | None, dict[str, Any]]:
    """The configured published verdicts restricted to the run's items (matched on subset and
    id) and promptings, and a note: rows kept, items matched, gold labels that differ."""
    if run.published is None:
        return None, {}
    frame = run.published
    wanted = run.options.published_prompting
    if wanted:
        frame = frame[frame["judge"].str.split("/", n=1).str[1].isin(wanted)]
    gold = {(item.subset, item.id): item.gold for item in run.items}
    keys = list(zip(frame["subset"], frame["item"], strict=True))
    frame = frame[[key in gold for key in keys]]
    triples = list(zip(frame["subset"], frame["item"], frame["gold"], strict=True))
    differ = sum(gold[(s, i)] != g for s, i, g in triples)
    matched = {(s, i) for s, i, _ in triples}
    note = {
        "file": str(run.options.published),
        "judges": list(dict.fromkeys(frame["judge"])),
        "rows": len(frame),
        "items_matched": len(matched),
        "items_in_run": len(gold),
        "gold_differs": int(differ),
    }
    return frame.drop(columns="line"), note


def _write_tables(frame: pd.DataFrame, out_dir: Path, policy: str) -> Counter[str]:
    """verdicts.csv, labels.csv and gold.csv; returns the count of items by status."""
    parts = []
    for _, part in frame.groupby("judge", sort=False):
        resolved, status = resolve_verdicts(part["original"], part["swapped"], policy)  # type: ignore[arg-type]
        parts.append(part.assign(resolved=resolved, status=status))
    table = pd.concat(parts).sort_index(kind="stable")
    columns = ["item", "subset", "judge", "gold", "original", "swapped", "resolved", "status"]
    write_frame(table[columns], out_dir / "verdicts.csv", index=False)
    with open_output(out_dir / "labels.csv", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item", "rater", "label"])
        for row in table.itertuples(index=False):
            for rater, label in (
                (f"{row.judge}#original", row.original),
                (f"{row.judge}#swapped", row.swapped),
                (row.judge, row.resolved),
            ):
                if label is not None:
                    writer.writerow([row.item, rater, label])
    gold = table.drop_duplicates("item")
    with open_output(out_dir / "gold.csv", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item", "rater", "label"])
        writer.writerows(
            [i, "gold", g] for i, g in zip(gold["item"], gold["gold"], strict=True) if g
        )
    return Counter(table["status"])


def _write_items(run: PairwiseRun, path: Path) -> None:
    """The run's items, one LLMBar-shaped JSON object a line (``load_pairs`` reads it back)."""
    with open_output(path) as handle:
        for item in run.items:
            row = {"id": item.id, "subset": item.subset, "input": item.instruction,
                   "output_1": item.output_1, "output_2": item.output_2,
                   "label": item.gold}  # fmt: skip
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_report(run: PairwiseRun, records: Iterable[Record], out_dir: Path) -> dict[str, Any]:
    """Write the files of the module doc and return the summary. ``judged + sum(excluded) ==
    planned`` (tasks) when every task has a record."""
    opts = run.options
    frame, usage = run_verdicts(run, records)
    status = _write_tables(frame, out_dir, opts.inconsistent)
    _write_items(run, out_dir / "items.jsonl")
    stats = dict(policy=opts.inconsistent, n_resamples=opts.n_resamples, seed=run.config.seed)
    ours = judge_table(frame, **stats).assign(source="run")  # type: ignore[arg-type]
    published, note = published_verdicts(run)
    tables = [ours]
    if published is not None and len(published):
        tables.append(judge_table(published, **stats).assign(source="published"))  # type: ignore[arg-type]
    table = pd.concat(tables, ignore_index=True)
    table.insert(0, "source", table.pop("source"))
    write_frame(table, out_dir / "pairwise.csv", index=False)
    plot_accuracy_vs_agreement(table, out_dir / FIGURE)
    planned = len(run.items) * len(run.judges) * 2
    excluded = frame.attrs["excluded"]
    if run.identical["items"]:  # not judged: their tasks counted here (judgekit.data.pairwise)
        excluded = {
            **excluded,
            "identical_outputs": len(run.identical["items"]) * len(run.judges) * 2,
        }
    summary = {
        "signature": run.signature().as_dict(),
        "items": {
            "planned": planned,
            "judged": planned - sum(excluded.values()),
            "excluded": excluded,
        },
        "resolution": {"policy": opts.inconsistent, **{k: status[k] for k in sorted(status)}},
        "judges": json_safe(table.to_dict(orient="records")),
        "published": note or None,
        "identical_outputs": run.identical,
        "usage": usage,
        "files": {
            "records": "records.jsonl",
            "items": "items.jsonl",
            "verdicts": "verdicts.csv",
            "labels": "labels.csv",
            "gold": "gold.csv",
            "table": "pairwise.csv",
            "figure": FIGURE,
        },
    }
    write_json(out_dir / "summary.json", summary)
    return summary


def plot_accuracy_vs_agreement(table: pd.DataFrame, path: Path) -> Path:
    """Scatter of accuracy (LLMBar's average accuracy) against positional agreement, one
    point per judge over all its items (its first row in ``table``), the run's judges in
    colour, published ones in grey, named in a legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    overall = table.groupby(["source", "judge"], sort=False).head(1)
    fig, ax = plt.subplots(figsize=(8.0, 4.8))
    markers = "osD^vPX*<>ph"
    for k, row in enumerate(overall.itertuples(index=False)):
        if math.isnan(row.accuracy) or math.isnan(row.positional_agreement):
            continue
        ours = row.source == "run"
        ax.scatter(row.positional_agreement, row.accuracy, s=52 if ours else 34,
                   marker=markers[k % len(markers)], zorder=3 if ours else 2,
                   color=f"C{k % 10}" if ours else str(0.15 + 0.6 * (k % 4) / 3),
                   label=f"{row.judge} ({row.source})")  # fmt: skip
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.axhline(0.5, color="0.8", lw=0.8, ls="--", zorder=1)
    ax.set_xlabel("positional agreement (same verdict in both orders)")
    ax.set_ylabel("accuracy against gold (mean of both orders)")
    ax.set_title("Pairwise judges: the run's (colour) and published (grey)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return path


def _pct(value: Any, low: Any = None, high: Any = None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    text = f"{100 * value:.1f}"
    if low is not None and high is not None and not math.isnan(low):
        text += f" [{100 * low:.1f}, {100 * high:.1f}]"
    return text


def print_summary(summary: dict[str, Any], console: Any, run: Any = None) -> None:
    """Print the per-judge table of ``summary`` (rich): the run's judges, then the published
    ones; percentages, 95% bootstrap CIs in brackets."""
    from rich.table import Table

    table = Table(title=f"pairwise judges (inconsistent -> {summary['resolution']['policy']})")
    for name in ("source", "judge", "subset", "items", "accuracy %", "agreement %",
                 "1st-position wins %", "ties %", "inconsistent", "incomplete",
                 "resolved accuracy %"):  # fmt: skip
        table.add_column(name, justify="left" if name in ("source", "judge", "subset") else "right")
    for row in summary["judges"]:
        table.add_row(
            row["source"], str(row["judge"]), str(row["subset"]), str(row["n_items"]),
            _pct(row["accuracy"], row["accuracy_low"], row["accuracy_high"]),
            _pct(row["positional_agreement"]), _pct(row["first_position_win_rate"]),
            _pct(row["tie_rate"]), str(row["n_inconsistent"]), str(row["n_incomplete"]),
            _pct(row["resolved_accuracy"], row["resolved_accuracy_low"],
                 row["resolved_accuracy_high"]),
        )  # fmt: skip
    console.print(table)
    same = summary.get("identical_outputs") or {}
    if same.get("items"):
        gold = same.get("gold_winner") or []
        said = f"; suspicious gold winner on {', '.join(gold)}" if gold else ""
        console.print(f"{len(same['items'])} items with identical outputs not judged{said}")
    note = summary.get("published")
    if note and note["items_matched"] < note["items_in_run"]:
        console.print(
            f"published verdicts cover {note['items_matched']} of the run's "
            f"{note['items_in_run']} items ({note['file']})"
        )
