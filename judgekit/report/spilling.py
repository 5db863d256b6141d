"""Tables, figures and ``summary.json`` of a spilling run (paper 002, §4 and §5)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.atomic import write_frame
from judgekit.data.jsonfile import write_json
from judgekit.lexicon.store import dictionaries_dir
from judgekit.metrics.spilling import all_tables, backcheck_table, model_comparison
from judgekit.pipelines.spilling import SpillingRun
from judgekit.pipelines.spilling_schemas import MeaningsAnswer, judge_schema
from judgekit.report.figures import heatmap
from judgekit.run_usage import usage_summary
from judgekit.runlog import Record
from judgekit.signature import ModelSignature, Signature, file_hash, schema_hash


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return frame.astype(object).where(frame.notna(), None).to_dict(orient="records")


def signature(run: SpillingRun) -> Signature:
    """Everything that changes the numbers: models, prompts, data files, judgekit version."""
    cfg = run.config
    prompts = {p.id: p.hash for p in [run.judge_prompt, *run.meaning_prompts.values()]}
    if run.options.backcheck:
        prompts[run.backcheck_prompt.id] = run.backcheck_prompt.hash
    base = dictionaries_dir()
    files = ["words.txt", "translations.tsv", "en.jsonl"]
    files += [f"{lang}.jsonl" for lang in run.options.languages]
    models = [ModelSignature.of(s, "generator") for s in cfg.generators()]
    models.append(ModelSignature.of(run.judge, "judge"))
    if run.options.backcheck or run.options.translations == "model":
        models.append(ModelSignature.of(run.translator, "translator"))
    return Signature(
        pipeline="spilling",
        models=models,
        prompts=prompts,
        schema_hash=schema_hash(MeaningsAnswer, judge_schema(5)),
        parameters={
            **run.options.model_dump(mode="json"),
            "n_words": len(run.words),
            "limit": cfg.limit,
        },
        data={f: file_hash(base / f) for f in files},
        seed=cfg.seed,
    )


def coverage(run: SpillingRun) -> list[dict[str, Any]]:
    """Per language: words in the run, with a translation, with a dictionary entry."""
    rows = []
    for lang in run.options.languages:
        translated = [w for w in run.words if run.translations.get((w, lang))]
        covered = [w for w in translated if run.translations[(w, lang)] in run.dictionaries[lang]]
        rows.append(
            {
                "lang": lang,
                "words": len(run.words),
                "translated": len(translated),
                "with_entry": len(covered),
                "share_covered": round(len(covered) / len(run.words), 4) if run.words else 0.0,
            }
        )
    return rows


def item_status(run: SpillingRun) -> list[dict[str, Any]]:
    """Per (model, language), in config order: items ``planned`` and ``judged``, and the
    ``excluded`` ones by reason, so a language without a rate says why it has none."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for r in run.results:
        row = rows.setdefault(
            (r.model, r.lang),
            {"model": r.model, "lang": r.lang, "planned": 0, "judged": 0, "excluded": Counter()},
        )
        row["planned"] += 1
        if r.excluded:
            row["excluded"][r.excluded] += 1
        else:
            row["judged"] += 1
    order = {lang: i for i, lang in enumerate(run.options.languages)}
    out = sorted(rows.values(), key=lambda row: (row["model"], order.get(row["lang"], 0)))
    return [{**row, "excluded": dict(row["excluded"].most_common())} for row in out]


UP_FRONT = ("no_translation", "no_dictionary_entry")
"""Exclusions that hold for every model (the word, not the model): not counted as unscored."""


def eligible(items: pd.DataFrame) -> pd.DataFrame:
    """The item rows a model could have had judged (not excluded up front for every model)."""
    if items.empty:
        return items
    return items[~items["excluded"].isin(UP_FRONT)]


def _write_labels(run: SpillingRun, out_dir: Path) -> None:
    """labels.csv: one row per judged meaning (item ``model|lang|word|sN|mI``, the judge)."""
    labels = [
        {"item": f"{r.model}|{r.lang}|{r.word}|s{r.sample}|m{i}", "rater": run.judge.label,
         "label": str(v).lower()}
        for r in run.results if r.excluded is None for i, v in enumerate(r.valid)
    ]  # fmt: skip
    write_frame(
        pd.DataFrame(labels, columns=["item", "rater", "label"]),
        out_dir / "labels.csv",
        index=False,
    )


def _write_heatmap(run: SpillingRun, tables: dict[str, pd.DataFrame], out_dir: Path) -> str | None:
    """heatmap.png of the models x languages rates (a language with no rate stays shown);
    its file name, or None without a rate."""
    if not tables or tables["by_model_lang"].empty:
        return None
    grid = tables["by_model_lang"].pivot(index="model", columns="lang", values="spilling_rate")
    grid = grid.reindex(columns=run.options.languages)
    return heatmap(
        grid,
        out_dir / "heatmap.png",
        title=f"Spilling rate (judge: {run.judge.label})",
        colorbar="spilling rate",
        vmin=0.0,
        vmax=1.0,
        missing="no\nrate",
    ).name


def _write_backcheck(run: SpillingRun, judged: pd.DataFrame, out_dir: Path) -> dict[str, Any]:
    """backcheck_by_lang.csv and backcheck_by_model.csv, and the summary's ``backcheck``
    (those tables and the overall accepted share); {} without a back-check."""
    checked = judged[judged["n_rejected"] > 0] if not judged.empty else judged
    back: dict[str, Any] = {}
    if not run.options.backcheck or checked.empty:
        return back
    for name, by in {"by_lang": ["lang"], "by_model": ["model"]}.items():
        table = backcheck_table(checked, by)
        write_frame(table, out_dir / f"backcheck_{name}.csv", index=False)
        back[name] = _records(table)
    total_rej, total_acc = int(checked["n_rejected"].sum()), int(checked["n_accepted_en"].sum())
    back["overall"] = {
        "n_rejected": total_rej,
        "n_accepted_en": total_acc,
        "accepted_share": total_acc / total_rej if total_rej else None,
    }
    return back


def rate_ci(judged: pd.DataFrame, seed: int = 0, n_resamples: int = 1000) -> list[float] | None:
    """95% percentile bootstrap CI ``[low, high]`` (in [0, 1]) of the pooled spilling rate
    (invalid / judged meanings), resampling the judged generations (the item is the unit, its 5
    meanings move together; :func:`judgekit.metrics.bootstrap.bootstrap_ci`); None for fewer
    than 2 items."""
    from judgekit.metrics.bootstrap import bootstrap_ci

    invalid = judged["n_invalid"].to_numpy(dtype=float)
    total = judged["n_judged"].to_numpy(dtype=float)
    ci = bootstrap_ci(len(judged), lambda idx: invalid[idx].sum() / total[idx].sum(),
                      n_resamples=n_resamples, seed=seed)  # fmt: skip
    return None if ci is None else [ci[0], ci[1]]


def write_report(run: SpillingRun, records: list[Record], out_dir: Path) -> dict[str, Any]:
    """Write items.csv, spilling_*.csv, backcheck_*.csv, labels.csv, heatmap.png and
    summary.json into ``out_dir``; return the summary."""
    if run.model_translations:
        rows = [
            {"word": w, "lang": lang, "translation": t, "source": f"model:{run.translator.label}"}
            for (w, lang), t in sorted(run.model_translations.items())
        ]
        write_frame(pd.DataFrame(rows), out_dir / "translations.model.tsv", sep="\t", index=False)
    items = pd.DataFrame([r.row() for r in run.results])
    write_frame(items, out_dir / "items.csv", index=False)
    judged = items[items["excluded"].isna()] if not items.empty else items
    tables = all_tables(judged) if not judged.empty else {}
    compared = model_comparison(eligible(items))
    if tables:  # models side by side on the items judged for every model
        tables["by_model"] = tables["by_model"].merge(compared, on="model", how="outer")
    for name, table in tables.items():
        write_frame(table, out_dir / f"spilling_{name}.csv", index=False)
    _write_labels(run, out_dir)
    figure = _write_heatmap(run, tables, out_dir)
    back = _write_backcheck(run, judged, out_dir)
    excluded = Counter(r.excluded for r in run.results if r.excluded)
    back_excluded = Counter(r.backcheck_excluded for r in run.results if r.backcheck_excluded)
    overall, overall_ci = None, None
    if not judged.empty:
        overall = float(judged["n_invalid"].sum() / judged["n_judged"].sum())
        overall_ci = rate_ci(judged, seed=run.config.seed)
    summary = {
        "signature": signature(run).as_dict(),
        "items": {
            "planned": len(run.results),
            "judged": int(len(judged)),
            "excluded": dict(excluded.most_common()),
            "backcheck_excluded": dict(back_excluded.most_common()),
            "by_model_lang": item_status(run),
        },
        "spilling_rate": overall,
        "spilling_rate_ci": overall_ci,
        "models_compared": {
            "n_common": int(compared["n_common"].iloc[0]) if len(compared) else 0,
            "incomplete": [
                m for m, bad in zip(compared["model"], compared["incomplete"], strict=True) if bad
            ],
            "ranking": _records(compared.sort_values(["rank", "model"])),
        },  # fmt: skip
        "rates": {name: _records(t) for name, t in tables.items() if name != "by_item"},
        "backcheck": back,
        "coverage": coverage(run),
        "usage": usage_summary(records),
        "files": {
            "records": "records.jsonl",
            "items": "items.csv",
            "labels": "labels.csv",
            "tables": [f"spilling_{name}.csv" for name in tables]
            + [f"backcheck_{name}.csv" for name in back if name != "overall"],
            "heatmap": figure,
        },
    }
    write_json(out_dir / "summary.json", summary)
    return summary
