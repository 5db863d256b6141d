"""``judgekit view RUN [RUN ...]``: one self-contained HTML report of runs (and humans)."""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.cli.output import plain_console
from judgekit.cli.root import app

console = plain_console()


@app.command("view")
def view_command(
    runs: list[Path] = typer.Argument(
        ..., metavar="RUN", help="Run directories (two or more: compare mode)."
    ),
    labels: Path | None = typer.Option(
        None, "--labels", help="Human labels, long item,rater,label table: judge vs humans."
    ),
    out: Path | None = typer.Option(
        None, "-o", "--out", help="HTML file to write (default: RUN/report.html)."
    ),
    tie_policy: str = typer.Option("exclude", help="Human ties: exclude|error|own_class."),
    n_resamples: int = typer.Option(
        1000, min=0, help="Bootstrap resamples for the CIs (0 = no CI)."
    ),
    seed: int = typer.Option(0, help="Bootstrap seed."),
    drift: Path | None = typer.Option(
        None, "--drift", help="A drift.json (judgekit drift run): mark runs of a drifted judge."
    ),
) -> None:
    """Write one HTML file (opens from file://, no network): summary and figures, every record
    with filters, search and details, judges compared, and judges against --labels."""
    from judgekit.errors import InputError
    from judgekit.labels.majority import TIE_POLICIES
    from judgekit.view import build_report
    from judgekit.view.overview import plural

    if tie_policy not in TIE_POLICIES:
        raise InputError(None, f"--tie-policy must be one of {', '.join(TIE_POLICIES)}")
    target = out if out is not None else runs[0] / "report.html"
    info = build_report(runs, target, labels=labels, tie_policy=tie_policy,
                        n_resamples=n_resamples, seed=seed, drift=drift)  # fmt: skip
    extra = f", {plural(info.pairs, 'judge pair')} compared" if info.pairs else ""
    if labels is not None:
        extra += f", {plural(info.humans, 'judge')} against the humans"
        if info.confidence:
            extra += f" ({info.confidence} with label probabilities: ECE, Brier)"
    console.print(
        f"wrote {info.path} ({info.bytes / 1e6:.1f} MB): {plural(info.runs, 'run')}, "
        f"{plural(info.records, 'record')}{extra}; built in {info.seconds:.1f} s"
    )
    console.print(f"open it: file://{info.path.resolve()}")
