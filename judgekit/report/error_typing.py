"""Report of an error-typing run (Cultivar §5; DESIGN 3.3).

:func:`write_report` (the ``errors`` pipeline's report) writes ``segments.jsonl`` (every segment,
its status, located errors and MQM), ``segments.csv`` (one 0/1 column per type), ``errors.csv``,
``type_counts.csv`` (segments with >= 1 error of each type, per system and overall: an error type
counts once per segment, as in the paper's Table 5), ``type_counts.png`` and ``summary.json``.
Systems are compared on their common scored segments (:mod:`judgekit.metrics.common_items`):
``mean_mqm_common`` and ``rank`` use only the segments scored for every system, and a system with
an unscored segment is ``incomplete``.
When the config gives ``human_mqm`` it calibrates the run on human MQM
(:func:`judgekit.calibration.error_typing.calibrate_errors`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit.calibration.error_typing import calibrate_errors
from judgekit.data import resolve_path
from judgekit.data.atomic import open_output, save_figure, write_frame
from judgekit.data.jsonfile import write_json
from judgekit.metrics.common_items import common_mean, segment_key, system_coverage, tied_ranks
from judgekit.pipelines.error_typing import ErrorsRun
from judgekit.pipelines.localisation_schemas import Rubric, annotation_schema, sha256_file
from judgekit.run_usage import usage_summary
from judgekit.runlog import Record
from judgekit.signature import ModelSignature, Signature, schema_hash


def type_counts(segments: list[dict[str, Any]], rubric: Rubric) -> pd.DataFrame:
    """Per system and ``all``: segments, scored segments, segments with >= 1 error of each type,
    ``locale_specific``/``general``/``total`` (sums of those counts, as in Table 5),
    ``mean_mqm`` over scored segments (None when none is scored), and the comparison across
    systems: ``n_common`` (segments scored for every system), ``mean_mqm_common`` over them,
    ``rank`` by it (1 = lowest MQM = best; None without common segments; systems with equal
    MQM on the common segments share a rank, ``tied`` True: :func:`judgekit.metrics.
    common_items.tied_ranks`) and ``incomplete`` (the system has an unscored segment; for
    ``all``: some system has)."""
    ids = rubric.ids()
    rows = []
    cov = system_coverage(segments)
    systems = sorted({s["system"] for s in segments})
    for name in [*systems, "all"]:
        segs = [s for s in segments if name == "all" or s["system"] == name]
        scored = [s for s in segs if s["status"] == "scored"]
        row: dict[str, Any] = {"system": name, "n_segments": len(segs), "n_scored": len(scored)}
        for t in ids:
            row[t] = sum(any(e["type"] == t for e in s["errors"]) for s in scored)
        row["locale_specific"] = sum(row[t] for t in rubric.ids("locale-specific"))
        row["general"] = sum(row[t] for t in rubric.ids("general"))
        row["total"] = row["locale_specific"] + row["general"]
        row["mean_mqm"] = float(np.mean([s["mqm"] for s in scored])) if scored else None
        row["n_common"] = cov.n_common
        row["mean_mqm_common"] = common_mean(scored, segment_key, lambda s: s["mqm"], cov)
        row["incomplete"] = bool(cov.incomplete_groups()) if name == "all" else cov.incomplete(name)
        rows.append(row)
    ranks = tied_ranks({r["system"]: r["mean_mqm_common"] for r in rows[:-1]})
    for row in rows:
        row["rank"], row["tied"] = ranks.get(row["system"], (None, False))
    table = pd.DataFrame(rows)
    table["rank"] = table["rank"].astype("Int64")
    return table


def plot_type_counts(table: pd.DataFrame, rubric: Rubric, path: Path, title: str) -> Path:
    """Bar chart of the ``all`` row: segments with >= 1 error per type, coloured by group."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    row = table[table["system"] == "all"].iloc[0]
    ids = rubric.ids()
    colours = ["tab:orange" if rubric.get_type(t).group == "locale-specific" else "tab:blue"
               for t in ids]  # fmt: skip
    from matplotlib.ticker import MaxNLocator

    counts = [int(row[t]) for t in ids]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(ids, counts, color=colours)
    ax.set_ylim(0, max(1, *counts) * 1.2)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(f"segments with >= 1 error (of {int(row['n_scored'])} scored)")
    ax.set_title(title)
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=c) for c in ("tab:orange", "tab:blue")],
              labels=["locale-specific", "general"], loc="upper right")  # fmt: skip
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return path


def write_report(run: ErrorsRun, records: list[Record], out_dir: Path) -> dict[str, Any]:
    """Write the run's tables, figure and ``summary.json`` (module docstring); calibrate when
    the config gives ``human_mqm``. Returns the summary."""
    items = {i.id: i for i in run.items}
    ids = run.rubric.ids()
    segments = []
    for r in run.results:
        item = items[r.id]
        seg = {**asdict(r), "source": item.source, "translation": item.translation}
        segments.append(seg)
    with open_output(out_dir / "segments.jsonl") as fh:
        for seg in segments:
            fh.write(json.dumps(seg, ensure_ascii=False) + "\n")
    flat = [{k: s[k] for k in ("id", "system", "doc", "seg_id", "status", "reason", "mqm")}
            | {"n_errors": len(s["errors"])} | r.flags(ids)
            for s, r in zip(segments, run.results, strict=True)]  # fmt: skip
    write_frame(pd.DataFrame(flat), out_dir / "segments.csv", index=False)
    err_rows = [{"id": s["id"], "system": s["system"], **e} for s in segments for e in s["errors"]]
    columns = ["id", "system", "type", "severity", "quote", "side", "start", "end", "mqm_category"]
    write_frame(pd.DataFrame(err_rows, columns=columns), out_dir / "errors.csv", index=False)
    table = type_counts(segments, run.rubric)
    write_frame(table, out_dir / "type_counts.csv", index=False)
    figure = plot_type_counts(table, run.rubric, out_dir / "type_counts.png",
                              f"Error types (judge: {run.judge.label})").name  # fmt: skip
    status = Counter(s["status"] for s in segments)
    reasons = Counter(s["reason"].split(":", 1)[0] for s in segments if s["reason"])
    opts = run.options
    data_files = [opts.items or opts.mqm_sample.tsv]  # type: ignore[union-attr]
    with open_output(out_dir / "items.jsonl") as fh:
        for item in run.items:
            fh.write(item.model_dump_json(exclude_none=True) + "\n")
    summary: dict[str, Any] = {
        "signature": Signature(
            pipeline="errors",
            models=[ModelSignature.of(run.judge, "judge")],
            prompts={run.prompt.id: run.prompt.hash},
            schema_hash=schema_hash(annotation_schema(run.rubric)),
            parameters={
                "mqm_weights": "minor 1, major 5, critical 25 (judgekit.metrics.mqm)",
                "mqm_sample": opts.mqm_sample.model_dump(mode="json") if opts.mqm_sample else None,
                "use_reference": opts.use_reference,
                "limit": run.config.limit,
            },
            data={str(p): sha256_file(resolve_path(p)) for p in data_files},
            seed=run.config.seed,
            rubric={"id": run.rubric.id, "version": run.rubric.version, "sha256": run.rubric.hash},
        ).as_dict(),
        "items": {
            "planned": len(segments),
            "judged": status.get("scored", 0),
            "excluded": dict(reasons.most_common()),
        },  # fmt: skip
        "status": dict(status),
        "type_counts": table.astype(object).where(table.notna(), None).to_dict(orient="records"),
        "usage": usage_summary(records),
        "files": {
            "records": "records.jsonl",
            "items": "items.jsonl",
            "segments": "segments.jsonl",
            "figure": figure,
        },
    }
    if opts.human_mqm is not None:
        cal = calibrate_errors(out_dir, resolve_path(opts.human_mqm), rubric=run.rubric,
                               gemba_dir=opts.gemba_dir)  # fmt: skip
        summary["calibration"] = cal["headline"]
        summary["files"]["calibration"] = "calibration.md"
    write_json(out_dir / "summary.json", summary)
    return summary
