"""``judgekit contrast``: localised vs original test sets (Cultivar, paper 000); see
docs/localisation.md.

* ``contrast testsets``: list (or write) a manifest's test sets and locale pairs.
* ``contrast delta``: Delta = localised - original per (model, locale), mean pairwise Delta,
  per-locale means, ranking agreement, Figure 6 heatmaps.
* ``contrast recall``: locale-specific word recall (FP, FN).
* ``contrast postedit``: kept / edited / reverted and edit spans of human post-editing.

Inputs: ``--manifest M --hyp-dir D`` (translations in ``D/<model>/<test set id>.txt``; ``M`` may
be ``ntrex128`` for the built-in NTREX-128 pairs), or one pair given file by file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer
import yaml
from rich.table import Table
from rich.text import Text

import judgekit
from judgekit.cli.contrast_inputs import contrast_inputs, manifest_of
from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.data.atomic import write_frame, write_text
from judgekit.data.lines import read_lines
from judgekit.data.testsets import manifest_dict
from judgekit.errors import InputError, JudgekitError
from judgekit.metrics import contrastive, word_recall
from judgekit.metrics.postedit import postedit_stats
from judgekit.metrics.scoring import metric_names

contrast_app = typer.Typer(
    help="Localised vs original test sets: Delta, locale word recall, post-edit statistics.",
    no_args_is_help=True,
)
app.add_typer(contrast_app, name="contrast")
console = plain_console()

Opt = typer.Option
ManifestOpt = Annotated[
    str | None, Opt(help="Test-set manifest (YAML/JSON), or 'ntrex128' for the built-in pairs.")
]
HypDirOpt = Annotated[Path | None, Opt(help="Translations: HYP_DIR/<model>/<test set id>.txt.")]
OrigRefOpt = Annotated[Path | None, Opt(help="Original (unlocalised) reference file.")]
LocRefOpt = Annotated[Path | None, Opt(help="Localised reference file.")]
LocHypOpt = Annotated[Path | None, Opt(help="Translation of the localised source.")]
ModelOpt = Annotated[str, Opt(help="Model name (single-pair form).")]
LocaleOpt = Annotated[str | None, Opt(help="Locale id of the localised set, e.g. fra_Latn_Canada.")]
TgtOpt = Annotated[
    str | None, Opt(help="FLORES code of the references' language (default: the locale's).")
]
OutOpt = Annotated[Path, Opt(help="Output folder.")]


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    from judgekit.data.jsonfile import json_safe

    return json_safe(frame.to_dict(orient="records"))


def _fmt(value: Any, spec: str = ".2f") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return format(value, spec)


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    from judgekit.data.jsonfile import write_json

    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, payload)


def _warn_missing(missing: list[str]) -> None:
    for cell in missing:
        console.print(Text("skipped", style="yellow"), f"{cell}: translation of one side missing")


@contrast_app.command("testsets")
def testsets(
    manifest: ManifestOpt = "ntrex128",
    write: Annotated[Path | None, Opt(help="Write the manifest here as YAML.")] = None,
) -> None:
    """List a manifest's test sets and their locale pairs (default: the built-in NTREX-128)."""
    found = manifest_of(manifest or "ntrex128")
    table = Table(title=f"test sets: {manifest}")
    for column in ("id", "direction", "locale", "original", "reference"):
        table.add_column(column, overflow="fold")
    for t in found.testsets.values():
        ref = (t.reference or t.data).name
        table.add_row(t.id, f"{t.src_lang}->{t.tgt_lang}", t.locale.id, t.original or "", str(ref))
    console.print(table)
    if write is not None:
        write.parent.mkdir(parents=True, exist_ok=True)
        write_text(write, yaml.safe_dump(manifest_dict(found), sort_keys=False, allow_unicode=True))
        console.print(f"wrote {write}")


@contrast_app.command("delta")
def delta(
    manifest: ManifestOpt = None,
    hyp_dir: HypDirOpt = None,
    orig_ref: OrigRefOpt = None,
    loc_ref: LocRefOpt = None,
    orig_hyp: Annotated[Path | None, Opt(help="Translation of the original source.")] = None,
    loc_hyp: LocHypOpt = None,
    model: ModelOpt = "model",
    locale: LocaleOpt = None,
    tgt_lang: TgtOpt = None,
    metric: Annotated[str, Opt("--metric", "-m", help="Comma-separated: spbleu, bleu, chrf.")] = (
        "bleu,chrf"
    ),
    tokenize: Annotated[
        str | None, Opt(help="BLEU tokenizer (default: zh/ja-mecab/char/13a by target script).")
    ] = None,
    spm_model: Annotated[Path | None, Opt(help="FLORES-200 SentencePiece model (spBLEU).")] = None,
    bootstrap: Annotated[int, Opt(help="Bootstrap resamples for ranking CIs (0 = none).")] = 0,
    out: OutOpt = Path("runs/contrast"),
) -> None:
    """Delta = score(localised) - score(original) per model and locale (Cultivar Sec. 3.2)."""
    pair = {"orig_ref": orig_ref, "loc_ref": loc_ref, "orig_hyp": orig_hyp, "loc_hyp": loc_hyp}
    found, hyps, missing = contrast_inputs(manifest, hyp_dir, pair, model, locale, tgt_lang)
    _warn_missing(missing)
    frame = contrastive.delta_frame(
        hyps, found, metric_names(metric), tokenize=tokenize, spm_model=spm_model
    )
    if frame.empty:
        raise JudgekitError("no model translated both sets of any locale pair")
    pairwise = contrastive.mean_pairwise_delta(frame)
    per_locale = contrastive.locale_mean_delta(frame)
    averages = contrastive.average_scores(frame)
    names = list(dict.fromkeys(frame["metric"]))
    ranking = {m: contrastive.ranking_by_locale(frame, m, n_resamples=bootstrap) for m in names}
    out.mkdir(parents=True, exist_ok=True)
    write_frame(frame, out / "delta.csv", index=False)
    from judgekit.report.figures import delta_heatmap

    figures = [str(delta_heatmap(frame, m, out / f"delta_{m}.png")) for m in names]
    overall = pairwise.groupby("metric")["delta"].mean()
    signatures = {
        m: sorted(set(frame.loc[frame.metric == m, "signature_localised"])) for m in names
    }
    _write_json(
        out / "delta.json",
        {
            "judgekit": judgekit.__version__,
            "manifest": manifest,
            "hyp_dir": str(hyp_dir) if hyp_dir else None,
            "signatures": signatures,
            "mean_pairwise_delta": _records(pairwise),
            "average_over_models": overall.to_dict(),
            "locale_mean_delta": _records(per_locale),
            "average_scores": _records(averages),
            "ranking": {m: _records(r) for m, r in ranking.items()},
            "skipped": missing,
            "figures": figures,
            "rows": _records(frame),
        },
    )
    _print_delta(pairwise, averages, per_locale, ranking, names)
    for m, sigs in signatures.items():
        for sig in sigs:
            console.print(f"{m}: {sig}", highlight=False)
    console.print(
        f"wrote delta.csv, delta.json, {', '.join(Path(f).name for f in figures)} to {out}"
    )


def _print_delta(pairwise, averages, per_locale, ranking, names) -> None:
    wide = pairwise.pivot(index="model", columns="metric", values="delta")
    pairs = pairwise.groupby("model")["n_pairs"].max()
    avg = averages.set_index(["model", "metric"])
    table = Table(title="mean pairwise Delta per model (Cultivar Table 3)")
    table.add_column("model", overflow="fold")
    table.add_column("pairs", justify="right")
    for m in names:
        for head in (f"Delta {m}", f"orig {m}", f"loc {m}"):
            table.add_column(head, justify="right")
    for model_name in wide.sort_values(names[0], ascending=False).index:
        cells = []
        for m in names:
            o, lo = avg.loc[(model_name, m), "original"], avg.loc[(model_name, m), "localised"]
            cells += [f"{wide.loc[model_name, m]:+.2f}", _fmt(o), _fmt(lo)]
        table.add_row(model_name, str(pairs[model_name]), *cells)
    console.print(table)
    wide = per_locale.pivot(index="label", columns="metric", values="delta")
    table = Table(title="Delta per locale, averaged across models (Cultivar Table 4)")
    table.add_column("locale", overflow="fold")
    for m in names:
        table.add_column(f"Delta {m}", justify="right")
    for label in wide.sort_values(names[0], ascending=False).index:
        table.add_row(label, *(f"{wide.loc[label, m]:+.2f}" for m in names))
    console.print(table)
    if all(r.empty for r in ranking.values()):
        console.print("ranking agreement: needs >= 3 models per locale")
        return
    table = Table(title="ranking agreement original vs localised (Cultivar Table 2)")
    table.add_column("locale", overflow="fold")
    for m in names:
        table.add_column(f"r_s {m}", justify="right")
        table.add_column(f"tau_b {m}", justify="right")
    indexed = {m: r.set_index("label") for m, r in ranking.items()}
    for label in indexed[names[0]].index:
        cells = []
        for m in names:
            row = indexed[m].loc[label] if label in indexed[m].index else None
            cells += [
                _fmt(None if row is None else row["spearman"]),
                _fmt(None if row is None else row["kendall_tau_b"]),
            ]
        table.add_row(label, *cells)
    console.print(table)


@contrast_app.command("recall")
def recall(
    manifest: ManifestOpt = None,
    hyp_dir: HypDirOpt = None,
    orig_ref: OrigRefOpt = None,
    loc_ref: LocRefOpt = None,
    loc_hyp: LocHypOpt = None,
    model: ModelOpt = "model",
    locale: LocaleOpt = None,
    tgt_lang: TgtOpt = None,
    tokenize: Annotated[
        str | None, Opt(help="Word tokenizer (default: zh/ja-mecab/char/13a by target script).")
    ] = None,
    lowercase: Annotated[bool, Opt(help="Fold case before comparing words.")] = False,
    out: OutOpt = Path("runs/contrast"),
) -> None:
    """Locale-specific word recall: FP and FN rates of translations (Cultivar Sec. 3.2).

    FP: original-only terms kept in the translation of the localised source; FN: localised
    terms it misses."""
    pair = {"orig_ref": orig_ref, "loc_ref": loc_ref, "loc_hyp": loc_hyp}
    found, hyps, _ = contrast_inputs(manifest, hyp_dir, pair, model, locale, tgt_lang)
    summary, segments = word_recall.recall_frames(
        hyps, found, tokenize=tokenize, lowercase=lowercase
    )
    if summary.empty:
        raise JudgekitError("no translation of a localised set found")
    out.mkdir(parents=True, exist_ok=True)
    write_frame(summary, out / "recall.csv", index=False)
    write_frame(segments, out / "recall_segments.csv", index=False)
    means = summary.groupby("model")[["fp_rate", "fn_rate"]].mean()
    _write_json(
        out / "recall.json",
        {
            "judgekit": judgekit.__version__,
            "manifest": manifest,
            "hyp_dir": str(hyp_dir) if hyp_dir else None,
            "rows": _records(summary),
            "mean_over_locales": _records(means.reset_index()),
        },
    )
    table = Table(title="locale-specific word recall (Cultivar Sec. 3.2; rates in [0, 1])")
    for column in ("model", "locale", "FP", "orig terms", "FP rate", "FN", "loc terms", "FN rate"):
        left = column in ("model", "locale")
        table.add_column(column, justify="left" if left else "right", overflow="fold")
    for r in summary.itertuples():
        table.add_row(
            r.model, r.label, str(r.n_fp), str(r.n_original_terms), _fmt(r.fp_rate, ".4f"),
            str(r.n_fn), str(r.n_localised_terms), _fmt(r.fn_rate, ".4f"),
        )  # fmt: skip
    console.print(table)
    for sig in dict.fromkeys(summary["signature"]):
        console.print(f"signature: {sig}", highlight=False)
    console.print(f"wrote recall.csv, recall_segments.csv, recall.json to {out}")


@contrast_app.command("postedit")
def postedit(
    original: Annotated[list[Path], Opt(help="Original text; repeat once per side.")],
    llm: Annotated[list[Path], Opt(help="LLM-localised text, same order as --original.")],
    edited: Annotated[list[Path], Opt(help="Human-edited text, same order as --original.")],
    side: Annotated[
        list[str] | None, Opt(help="Side names (default: text; source, target for two).")
    ] = None,
    tokenize: Annotated[
        list[str] | None, Opt(help="Tokenizer per side (or one for all) (default: 13a).")
    ] = None,
    out: OutOpt = Path("runs/contrast"),
) -> None:
    """Kept / edited / reverted segments and contiguous edit spans (Cultivar Table 1)."""
    n = len(original)
    if not n == len(llm) == len(edited):
        raise InputError(None, "give --original, --llm and --edited once per side, in order")
    names = side or (["text"] if n == 1 else ["source", "target"] if n == 2 else [])
    if len(names) != n or len(set(names)) != n:
        raise InputError(None, f"give {n} distinct --side names", field="--side")
    toks = tokenize or ["13a"]
    if len(toks) not in (1, n):
        raise InputError(None, f"give 1 or {n} --tokenize values", field="--tokenize")
    toks = toks * n if len(toks) == 1 else toks
    files = dict(zip(names, zip(original, llm, edited, strict=True), strict=True))
    sides = {}
    for name, paths in files.items():
        texts = [read_lines(p) for p in paths]
        for p, t in zip(paths[1:], texts[1:], strict=True):
            if len(t) != len(texts[0]):
                raise InputError(p, f"has {len(t)} lines but {paths[0]} has {len(texts[0])}")
        sides[name] = tuple(texts)
    stats = postedit_stats(sides, tokenize=dict(zip(names, toks, strict=True)))
    rows = []
    for d in stats.detail:
        row: dict[str, Any] = {"line": d.index + 1, "status": d.status}
        row["edited_sides"] = "+".join(d.edited_sides)
        for name, e in d.sides.items():
            row |= {f"{name}_{k}": v for k, v in vars(e).items()}
        rows.append(row)
    out.mkdir(parents=True, exist_ok=True)
    write_frame(pd.DataFrame(rows), out / "postedit.csv", index=False)
    inputs = {name: [str(p) for p in paths] for name, paths in files.items()}
    head = {"judgekit": judgekit.__version__, "files": inputs}
    _write_json(out / "postedit.json", head | stats.summary())
    table = Table(title=f"post-editing of {stats.n_segments} segments (Cultivar Table 1)")
    table.add_column("")
    table.add_column("segments", justify="right")
    for status in ("kept", "reverted", "edited"):
        table.add_row(status, str(stats.segments[status]))
    for combo, count in sorted(stats.edited_by_sides.items()):
        table.add_row(f"  edited: {combo}", str(count))
    console.print(table)
    table = Table(title="per side (edits = contiguous changed token spans)")
    for column in ("side", "kept", "edited", "reverted", "orig->final edits", "mean/segment",
                   "editor edits", "mean/revised"):  # fmt: skip
        table.add_column(column, justify="left" if column == "side" else "right", overflow="fold")
    for name, t in stats.sides.items():
        table.add_row(
            name, str(t["kept"]), str(t["edited"]), str(t["reverted"]),
            str(t["localisation_edits"]), _fmt(t["mean_localisation_edits"]),
            str(t["editor_edits"]), _fmt(t["mean_editor_edits_revised"]),
        )  # fmt: skip
    console.print(table)
    console.print(f"signature: {stats.signature}", highlight=False)
    console.print(f"wrote postedit.csv, postedit.json to {out}")
