"""Files and ``summary.json`` of a cultural-sensitivity audit (paper 001; Global-MMLU schema).

``write_report`` writes into the run directory:

* ``annotations.jsonl`` / ``annotations.csv``: one aggregated annotation per item;
* ``labels.csv``: ``item,rater,label`` CS/CA labels per judge (``judgekit calibrate judge``);
* ``shares.csv``: CS share and time-sensitive share per benchmark, language, subject category,
  subject and split, with percentile bootstrap CIs over items;
* ``flagged.csv``: the CS items with their evidence; ``counterparts.csv``: the same item in two
  languages with both labels; ``splits.csv``: the calibration/held-out split of every item;
* ``validation.csv`` / ``validation.md`` (when the items carry human votes);
* ``summary.json``: all of the above in short, the signature and the usage.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit.calibration.cultural import markdown_table, validate
from judgekit.data import resolve_path
from judgekit.data.atomic import open_output, write_frame, write_text
from judgekit.data.jsonfile import write_json
from judgekit.metrics.agreement import cohen_kappa
from judgekit.metrics.bootstrap import bootstrap_ci
from judgekit.pipelines.cultural import CulturalRun
from judgekit.pipelines.cultural_schemas import bind_item
from judgekit.run_usage import usage_summary
from judgekit.runlog import Record
from judgekit.signature import ModelSignature, Signature, schema_hash

GROUPS = ("benchmark", "language", "subject_category", "subject", "split")


def _share(flags: np.ndarray, n_resamples: int, seed: int) -> dict[str, Any]:
    """Share of True in ``flags`` (in [0, 1]) with its bootstrap CI over items."""
    if not len(flags):
        return {"share": None, "ci_low": None, "ci_high": None}
    ci = None
    if n_resamples:
        ci = bootstrap_ci(
            len(flags), lambda idx: float(flags[idx].mean()), n_resamples=n_resamples, seed=seed
        )
    return {
        "share": float(flags.mean()),
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
    }


def share_table(frame: pd.DataFrame, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """CS share and time-sensitive share per group (:data:`GROUPS`, and ``all``).

    Shares are over annotated items (jury ties and unjudged items are counted, not shared out):
    ``cs_share`` = CS / annotated, ``ts_share`` = time-sensitive "yes" / annotated, each in
    [0, 1] with a percentile bootstrap CI (items resampled, ``n_resamples``, ``seed``).
    """
    frame = frame.assign(all="all", subject_category=frame["category"])
    rows = []
    for by in ("all", *GROUPS):
        for group, part in frame.groupby(by, sort=True, dropna=False):
            done = part[part["status"] == "annotated"]
            cs = _share((done["cs_label"] == "CS").to_numpy(), n_resamples, seed)
            ts = _share((done["time_sensitive"] == "yes").to_numpy(), n_resamples, seed)
            rows.append(
                {"by": by, "group": "-" if pd.isna(group) else group, "n_items": len(part),
                 "n_annotated": len(done), "n_tie": int((part["status"] == "tie").sum()),
                 "n_unjudged": int((part["status"] == "unjudged").sum()),
                 "n_cs": int((done["cs_label"] == "CS").sum()),
                 "cs_share": cs["share"], "cs_ci_low": cs["ci_low"], "cs_ci_high": cs["ci_high"],
                 "ts_share": ts["share"], "ts_ci_low": ts["ci_low"], "ts_ci_high": ts["ci_high"]}
            )  # fmt: skip
    return pd.DataFrame(rows)


def counterparts(frame: pd.DataFrame) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """CS-label stability across languages: items with the same id in two languages.

    Returns (one summary per language pair: pairs, same-label share in [0, 1], Cohen's kappa,
    flips each way; one row per pair of labels). Only annotated items (CS or CA) count.
    """
    done = frame[frame["status"] == "annotated"]
    summaries, rows = [], []
    languages = sorted(done["language"].unique())
    for a, b in itertools.combinations(languages, 2):
        left = done[done["language"] == a].drop_duplicates("id").set_index("id")["cs_label"]
        right = done[done["language"] == b].drop_duplicates("id").set_index("id")["cs_label"]
        shared = left.index.intersection(right.index)
        if shared.empty:
            continue
        pair = pd.DataFrame({a: left[shared], b: right[shared]})
        same = pair[a] == pair[b]
        kappa = cohen_kappa(pair) if pair.stack().nunique() > 1 else None
        flips = Counter(f"{x}->{y}" for x, y in zip(pair[a], pair[b], strict=True) if x != y)
        summaries.append(
            {"languages": f"{a}-{b}", "pairs": len(pair), "same_label": int(same.sum()),
             "stable_share": float(same.mean()),
             "kappa": None if kappa is None else kappa.value,
             "flips": {f"{a} {k.split('->')[0]} -> {b} {k.split('->')[1]}": n
                       for k, n in sorted(flips.items())}}
        )  # fmt: skip
        rows += [
            {"id": i, "language_a": a, "label_a": pair.at[i, a], "language_b": b,
             "label_b": pair.at[i, b], "stable": bool(same[i])}
            for i in shared
        ]  # fmt: skip
    return summaries, pd.DataFrame(rows)


def _unset_options(opts: Any) -> set[str]:
    """Options left out of the signature: the paths (given apart) and ``few_shot`` where empty,
    so a run without examples keeps the signature it had before the option existed."""
    return {"items", "human"} | (set() if opts.few_shot else {"few_shot"})


def signature(run: CulturalRun) -> Signature:
    """Everything that changes the numbers: judges, prompt and rubric hashes, item files; the
    audit's own keys (``prompt``, ``rubric``, ``items``, ``human``, ``options``) are read back
    by ``judgekit audit validate``."""
    opts = run.options
    extra = {
        "prompt": {"id": run.prompt.id, "hash": run.prompt.hash},
        "rubric": {"id": run.rubric.id, "version": run.rubric.version, "hash": run.rubric.hash},
        "items": [
            {
                "path": str(Path(f.path).resolve()),
                "benchmark": f.benchmark,
                "n": len(f.items),
                "sha256": f.sha256,
            }  # absolute: review make and audit validate open it from anywhere
            for f in run.files
        ],  # fmt: skip
        "human": (
            str(resolve_path(opts.human).resolve())
            if opts.human
            else "item fields"
            if run.humans is not None
            else None
        ),  # fmt: skip
        "options": opts.model_dump(exclude=_unset_options(opts)),
        "limit": run.config.limit,
    }
    return Signature(
        pipeline="cultural",
        models=[ModelSignature.of(j, "judge") for j in run.judges],
        prompts={run.prompt.id: run.prompt.hash},
        schema_hash=schema_hash(bind_item(run.rubric, None, strict=opts.strict)),
        parameters={"strict": opts.strict, "samples": opts.samples, "split": opts.split},
        data={str(f.path): f.sha256 for f in run.files},
        seed=run.config.seed,
        **extra,
    )


def _frame(run: CulturalRun) -> pd.DataFrame:
    rows = [a.row() for a in run.annotations]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame["category"] = frame["item_subject_category"].fillna(frame["subject_category"])
    return frame


def _mean(values: pd.Series) -> float | None:
    """Mean of the non-missing values, or None when there are none."""
    values = values.dropna()
    return float(values.mean()) if len(values) else None


def _matches(judged: pd.Series, given: pd.Series) -> float | None:
    """Share, in [0, 1], of items whose judged subject category equals the item's own."""
    known = given.notna()
    return float((judged[known] == given[known]).mean()) if known.any() else None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _flat(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.drop(columns=["category"], errors="ignore").copy()
    for column in ("evidence", "evidence_found", "cs_votes", "by_judge", "failures"):
        if column in out.columns:
            out[column] = out[column].map(lambda v: _json(v))
    return out


def write_report(run: CulturalRun, records: list[Record], out_dir: Path) -> dict[str, Any]:
    """Write the files listed in the module docstring into ``out_dir``; return the summary."""
    frame = _frame(run)
    with open_output(out_dir / "annotations.jsonl") as fh:
        for a in run.annotations:
            fh.write(_json(a.row()) + "\n")
    splits = [{"id": i, "split": s} for i, s in sorted(run.splits.items())]
    write_frame(pd.DataFrame(splits, columns=["id", "split"]), out_dir / "splits.csv", index=False)
    labels = [
        {"item": a.item.key, "rater": judge, "label": label}
        for a in run.annotations
        for judge, label in a.by_judge.items()
        if label is not None
    ]
    write_frame(
        pd.DataFrame(labels, columns=["item", "rater", "label"]),
        out_dir / "labels.csv",
        index=False,
    )
    summary: dict[str, Any] = {"signature": signature(run).as_dict()}
    status = Counter(a.status for a in run.annotations)
    failures: Counter[str] = Counter()
    for a in run.annotations:
        failures.update(a.failures)
    summary["items"] = {
        "planned": len(run.selected),
        "judged": status.get("annotated", 0) + status.get("tie", 0),
        "excluded": {"unjudged": status.get("unjudged", 0)} if status.get("unjudged") else {},
        "ties": status.get("tie", 0),
        "failed_judgments": dict(failures.most_common()),
    }
    if not frame.empty:
        _frame_report(run, frame, out_dir, summary)
    summary["usage"] = usage_summary(records)
    summary["files"] = sorted(p.name for p in out_dir.iterdir() if p.suffix != ".tmp")
    write_json(out_dir / "summary.json", summary)
    return summary


def _frame_report(
    run: CulturalRun, frame: pd.DataFrame, out_dir: Path, summary: dict[str, Any]
) -> None:
    opts = run.options
    write_frame(_flat(frame), out_dir / "annotations.csv", index=False)
    shares = share_table(frame, opts.n_resamples, run.config.seed)
    write_frame(shares, out_dir / "shares.csv", index=False)
    records = shares.astype(object).where(shares.notna(), None).to_dict(orient="records")
    summary["shares"] = {
        by: [{k: v for k, v in r.items() if k != "by"} for r in records if r["by"] == by]
        for by in ("all", *GROUPS)
        if by != "subject"
    }
    done = frame[frame["status"] == "annotated"]
    quotes = [f for found in done["evidence_found"] for f in found]
    summary["checks"] = {
        "rule_consistent_share": _mean(done["rule_consistent"].astype(float)),
        "quotes": len(quotes),
        "quotes_found_share": float(np.mean(quotes)) if quotes else None,
        "knowledge": dict(Counter(done["required_knowledge"]).most_common()),
        "self_consistency": _mean(done["agreement"]),
        "category_matches_item_share": _matches(
            done["subject_category"], done["item_subject_category"]
        ),
    }
    flagged = done[done["cs_label"] == "CS"]
    cols = ["key", "language", "subject", "required_knowledge", "time_sensitive", "evidence",
            "evidence_found", "rationale"]  # fmt: skip
    write_frame(_flat(flagged[cols]), out_dir / "flagged.csv", index=False)
    summary["flagged"] = {
        "n": len(flagged),
        "items": flagged[cols].head(opts.max_flagged).to_dict(orient="records"),
    }
    pairs, rows = counterparts(frame)
    if pairs:
        write_frame(rows, out_dir / "counterparts.csv", index=False)
        summary["counterparts"] = pairs
    if run.humans is not None:
        table = validate(
            frame, run.humans, run.splits, tie_policy=opts.tie_policy,
            n_resamples=opts.n_resamples, seed=run.config.seed,
            vocabulary=run.rubric.vocabulary(),
        )  # fmt: skip
        write_frame(table, out_dir / "validation.csv", index=False)
        write_text(out_dir / "validation.md", markdown_table(table))
        clean = table.astype(object).where(table.notna(), None)
        summary["validation"] = clean.to_dict(orient="records")


HEADLINE = [
    ("CS/CA vs published label", "accuracy"),
    ("CS/CA vs published label", "macro_f1"),
    ("CS/CA vs published label", "recall CA"),
    ("CS/CA vs published label", "errors CA->CS"),
    ("CS/CA vs published label", "errors CS->CA"),
    ("required knowledge (4-way), ties excluded", "accuracy"),
    ("required knowledge (4-way), ties as errors", "accuracy"),
    ("human agreement, CS/CA votes", "Gwet's AC1"),
]


def print_summary(summary: dict[str, Any], console: Any, run: Any = None) -> None:
    """Print the CS shares (overall, per benchmark and language) and the headline validation
    figures per subset (rich tables)."""
    from rich.table import Table

    table = Table(title="CS share (share of annotated items labelled CS; 95% bootstrap CI)")
    for col in ("by", "group", "items", "annotated", "ties", "CS share", "time-sensitive"):
        table.add_column(col)
    for by in ("all", "benchmark", "language", "split"):
        for row in summary.get("shares", {}).get(by, []):
            cs = "-" if row["cs_share"] is None else f"{row['cs_share']:.3f}"
            if row["cs_ci_low"] is not None:
                cs += f" [{row['cs_ci_low']:.3f}, {row['cs_ci_high']:.3f}]"
            ts = "-" if row["ts_share"] is None else f"{row['ts_share']:.3f}"
            table.add_row(by, str(row["group"]), str(row["n_items"]), str(row["n_annotated"]),
                          str(row["n_tie"]), cs, ts)  # fmt: skip
    console.print(table)
    rows = summary.get("validation")
    if not rows:
        return
    frame = pd.DataFrame(rows)
    subsets = list(dict.fromkeys(frame["subset"]))
    table = Table(title="validation against the human votes (value, n)")
    for col in ("metric", *subsets):
        table.add_column(col)
    for section, metric in HEADLINE:
        cells = []
        for subset in subsets:
            hit = frame[(frame["subset"] == subset) & (frame["section"] == section)
                        & (frame["metric"] == metric)]  # fmt: skip
            cells.append("-" if hit.empty else f"{hit.iloc[0]['value']:.3f} ({hit.iloc[0]['n']})")
        table.add_row(f"{section}: {metric}", *cells)
    console.print(table)
