"""``judgekit drift``: freeze an anchor set, compare a judge's answers on it with its baseline.

Exit codes of ``drift compare``: 0 no language drifted, 1 drift, 2 bad input (docs/drift.md).
The work is :mod:`judgekit.drift`; the outputs are :mod:`judgekit.report.drift`'s.
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.cli.options import check_level
from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.data.jsonfile import print_json

console = plain_console()
drift_app = typer.Typer(
    help="Judge drift on a frozen anchor set: freeze, rerun the judge, compare, list stale results",
    no_args_is_help=True,
)
app.add_typer(drift_app, name="drift")


@drift_app.command("freeze")
def freeze_command(
    anchors: Path = typer.Argument(..., help="Anchor file: item, human[, language] columns."),
) -> None:
    """Check the anchor file and store its SHA-256 beside it (ANCHORS.sha256)."""
    from judgekit.drift.anchors import freeze_anchors, hash_path

    digest = freeze_anchors(anchors)
    console.print(f"froze {anchors} (sha256 {digest[:12]}) in {hash_path(anchors)}")


@drift_app.command("compare")
def compare_command(
    anchors: Path = typer.Argument(..., help="The frozen anchor file."),
    before: Path = typer.Option(..., help="The baseline run's answers (item, answer)."),
    after: Path = typer.Option(..., help="The new run's answers (item, answer)."),
    kind: str = typer.Option("label", help="label (accuracy, McNemar) or score (Kendall tau)."),
    alpha: float = typer.Option(
        0.05, callback=check_level(), help="Error level, Holm across languages."
    ),
    before_summary: Path | None = typer.Option(None, help="Baseline run's summary.json."),
    after_summary: Path | None = typer.Option(None, help="New run's summary.json."),
    n_boot: int = typer.Option(1000, min=1, help="Paired bootstrap resamples."),
    seed: int = typer.Option(0, help="Bootstrap seed."),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON document."),
    record: Path | None = typer.Option(None, help="Write the document here (drift status)."),
) -> None:
    """Per language, the judge's change in agreement with the humans; exit 1 on drift."""
    from judgekit.drift.run import drift_compare
    from judgekit.report.drift import print_drift

    document = drift_compare(anchors, before, after, kind=kind, alpha=alpha, n_boot=n_boot,
                             seed=seed, before_summary=before_summary,
                             after_summary=after_summary)  # fmt: skip
    if record is not None:
        from judgekit.data.jsonfile import write_json

        write_json(record, document)
    if as_json:
        print_json(document, indent=2)
    else:
        print_drift(document, console)
    raise typer.Exit(1 if document["drifted"] else 0)


@drift_app.command("run")
def run_command(
    anchors: Path = typer.Argument(..., help="The frozen anchor file."),
    judge: Path = typer.Option(..., help="The judge's run config (its items: the anchors)."),
    baseline: Path = typer.Option(..., help="Baseline answers file or run directory."),
    out: Path = typer.Option(..., help="Where the rerun goes (answers.csv inside)."),
    set_: list[str] = typer.Option([], "--set", help="Config override KEY=VALUE."),
    kind: str = typer.Option("label", help="label (accuracy, McNemar) or score (Kendall tau)."),
    alpha: float = typer.Option(
        0.05, callback=check_level(), help="Error level, Holm across languages."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON document."),
) -> None:
    """Rerun the judge on the anchors (cache bypassed) and compare; exit 1 on drift."""
    from judgekit.drift.run import drift_run
    from judgekit.report.drift import print_drift

    document = drift_run(anchors, judge, baseline, out, overrides=tuple(set_), kind=kind,
                         alpha=alpha)  # fmt: skip
    if as_json:
        print_json(document, indent=2)
    else:
        print_drift(document, console)
    raise typer.Exit(1 if document["drifted"] else 0)


@drift_app.command("status")
def status_command(
    drift: Path = typer.Argument(..., help="A drift document (drift.json, compare --record)."),
    folders: list[Path] = typer.Argument(..., help="Folders of results to check."),
    as_json: bool = typer.Option(False, "--json", help="Print the stale results as JSON."),
) -> None:
    """List the results (runs, estimates, gates) that depended on a drifted judge: stale."""
    from judgekit.drift.status import load_drift, stale_results

    rows = stale_results(load_drift(drift), folders)
    if as_json:
        print_json(rows, indent=2)
        return
    for row in rows:
        console.print(f"stale: {row['path']} ({row['pipeline']}): {row['reason']}")
    console.print(f"{len(rows)} stale result(s)")
