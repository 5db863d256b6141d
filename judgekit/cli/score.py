"""`judgekit score`: corpus and segment BLEU, spBLEU and chrF, with a paired test vs a baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.data.jsonfile import print_json
from judgekit.metrics import mt
from judgekit.metrics.scoring import metric_names, score_files
from judgekit.metrics.spm import FLORES200_ENV


def _fmt_ci(mean: float | None, ci: float | None) -> str:
    return "" if mean is None or ci is None else f"{mean:.2f} ± {ci:.2f}"


@app.command("score")
def score(
    hyp: Annotated[Path, typer.Option("--hyp", "-i", help="Hypothesis file, one segment a line.")],
    ref: Annotated[
        list[Path],
        typer.Option("--ref", "-r", help="Reference file; repeat for several references."),
    ],
    metric: Annotated[
        str, typer.Option("--metric", "-m", help="Comma-separated: spbleu, bleu, chrf.")
    ] = "bleu,chrf",
    tokenize: Annotated[
        str | None,
        typer.Option(
            help="BLEU tokenizer for every BLEU-type metric (13a, zh, ja-mecab, char, intl, "
            "flores200, spm:PATH). Default: flores200 for spbleu; for bleu the target "
            "language's (--target-lang), else 13a."
        ),
    ] = None,
    target_lang: Annotated[
        str | None,
        typer.Option(
            help="Target language: FLORES code (cmn_Hans, jpn_Jpan), locale "
            "(cmn_Hans_Singapore) or ISO 639 code (zh, ja, ko); picks BLEU's tokenizer "
            "(zh, ja-mecab, ko-mecab or char, else 13a)."
        ),
    ] = None,
    spm_model: Annotated[
        Path | None,
        typer.Option(
            help=f"SentencePiece model for spBLEU (else ${FLORES200_ENV}, else "
            "sacrebleu's cache). Never downloaded."
        ),
    ] = None,
    segments: Annotated[bool, typer.Option(help="Also print one score per segment.")] = False,
    baseline: Annotated[
        Path | None, typer.Option(help="A second hypothesis file: paired test of --hyp vs it.")
    ] = None,
    paired: Annotated[
        str, typer.Option(help="Paired test: bs (bootstrap) or ar (approx. randomisation).")
    ] = "bs",
    n_samples: Annotated[
        int, typer.Option(help="Resamples (bs) or trials (ar); 0 = sacrebleu's default.")
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Score a hypothesis file against one or more references with sacrebleu."""
    report = score_files(
        hyp, ref, metric_names(metric), tokenize=tokenize, target_lang=target_lang,
        spm_model=spm_model, segments=segments, baseline=baseline, paired=paired,
        n_samples=n_samples,
    )  # fmt: skip
    for note in report.warnings:
        typer.echo(f"warning: {note}", err=True)
    if as_json:
        print_json(report.as_dict(), indent=2)
        return
    _print_tables(hyp, baseline, report.corpus, report.segments, report.paired)


def _print_tables(
    hyp: Path,
    baseline: Path | None,
    corpus: list[mt.CorpusScore],
    seg: list[mt.SegmentScores],
    tests: list[mt.PairedResult],
) -> None:
    console = plain_console()
    table = Table(title=f"{hyp}")
    for column in ("metric", "score", "signature"):
        table.add_column(column, justify="right" if column == "score" else "left")
    for c in corpus:
        table.add_row(c.metric, f"{c.score:.2f}", c.signature)
    console.print(table)
    if tests:
        table = Table(title=f"paired test ({tests[0].test}) vs baseline {baseline}")
        for column in ("metric", "baseline", "system", "delta", "p-value", "95% CI system"):
            table.add_column(column, justify="left" if column == "metric" else "right")
        for t in tests:
            table.add_row(
                t.metric,
                f"{t.baseline_score:.2f}",
                f"{t.system_score:.2f}",
                f"{t.system_score - t.baseline_score:+.2f}",
                f"{t.p_value:.4f}",
                _fmt_ci(t.system_mean, t.system_ci),
            )
        console.print(table)
        for t in tests:
            console.print(f"{t.metric}: {t.signature}", highlight=False, soft_wrap=True)
    if seg:
        table = Table(title="segment scores")
        table.add_column("line", justify="right")
        for s in seg:
            table.add_column(s.metric, justify="right")
        for i in range(len(seg[0].scores)):
            table.add_row(str(i + 1), *(f"{s.scores[i]:.2f}" for s in seg))
        console.print(table)
        for s in seg:
            console.print(f"{s.metric} (segments): {s.signature}", highlight=False, soft_wrap=True)
