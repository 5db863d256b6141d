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

from pathlib import Path
from typing import Annotated

import typer
import yaml
from rich.table import Table
from rich.text import Text

from judgekit.cli.contrast_inputs import contrast_inputs, manifest_of
from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.data.atomic import write_text
from judgekit.data.lines import read_lines
from judgekit.data.testsets import manifest_dict
from judgekit.errors import InputError
from judgekit.metrics.postedit import postedit_stats
from judgekit.metrics.scoring import metric_names
from judgekit.report.contrast import (
    print_delta,
    print_postedit,
    print_recall,
    write_delta,
    write_postedit,
    write_recall,
)

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
    about = {"manifest": manifest, "hyp_dir": str(hyp_dir) if hyp_dir else None, "skipped": missing}
    report = write_delta(hyps, found, metric_names(metric), out, tokenize=tokenize,
                         spm_model=spm_model, bootstrap=bootstrap, about=about)  # fmt: skip
    print_delta(report, console)
    figures = ", ".join(Path(f).name for f in report.figures)
    console.print(f"wrote delta.csv, delta.json, {figures} to {out}")


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
    about = {"manifest": manifest, "hyp_dir": str(hyp_dir) if hyp_dir else None}
    summary = write_recall(hyps, found, out, tokenize=tokenize, lowercase=lowercase, about=about)
    print_recall(summary, console)
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
    write_postedit(stats, out, {name: [str(p) for p in paths] for name, paths in files.items()})
    print_postedit(stats, console)
