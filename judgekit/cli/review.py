"""``judgekit review``: offline annotation pages for the human tasks, and their import.

* ``review make SOURCE --task T --rater R -o PAGE.html``: a campaign (``campaign.json`` beside
  the page) and the rater's self-contained page.
* ``review import FILES... --campaign DIR --out DIR``: raters' files (the pages' Download JSON
  or a Label Studio JSON export) checked against the campaign, written as the tables that
  ``calibrate``, the errors calibration and ``contrast postedit`` read.
* ``review export-labelstudio CAMPAIGN --out DIR``: Label Studio tasks and labelling config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judgekit.cli.output import plain_console
from judgekit.cli.root import app

review_app = typer.Typer(
    help="Annotation pages for human labels (post-edit, meanings, CS/CA, MQM) and their import.",
    no_args_is_help=True,
)
app.add_typer(review_app, name="review")
console = plain_console()
Opt = typer.Option


@review_app.command("make")
def make(
    source: Annotated[Path, typer.Argument(help="A run directory or the task's items file.")],
    task: Annotated[str, Opt(help="postedit | meanings | csca | mqm")],
    rater: Annotated[str, Opt(help="The rater's name (one page per rater).")],
    out: Annotated[Path, Opt("-o", "--out", help="The page to write (campaign.json beside it).")],
    guidelines: Annotated[Path | None, Opt(help="Guidelines (markdown).")] = None,
    sample: Annotated[int | None, Opt(help="A random sample of this many items.")] = None,
    seed: Annotated[int, Opt(help="Seed of the sample.")] = 0,
    items: Annotated[
        str | None, Opt(help="Item ids, comma-separated (or @FILE, one a line).")
    ] = None,
    gold: Annotated[Path | None, Opt(help="Gold answers (JSONL of {item, expected}).")] = None,
    show_judge: Annotated[bool, Opt(help="Pre-fill the judge's answers (default: blind).")] = False,
    selection: Annotated[
        Path | None, Opt(help="selection.csv of calibrate plan --design: exactly its items.")
    ] = None,
) -> None:
    """Write RATER's annotation page for TASK over SOURCE, and the campaign file."""
    from judgekit.data import text_lines
    from judgekit.errors import InputError
    from judgekit.review.make import build_campaign, make_page
    from judgekit.review.selection import keep_with_campaign, selection_items

    ids = None
    if selection is not None:
        if items is not None or sample is not None:
            raise InputError(None, "give --selection alone, without --items or --sample",
                             field="--selection")  # fmt: skip
        ids = selection_items(selection)
    if items is not None:
        # @FILE: one id a line (ids may hold commas), lines end at "\n" only, a BOM dropped
        lines = text_lines(Path(items[1:])) if items.startswith("@") else items.split(",")
        ids = [i.strip() for i in lines if i.strip()]
    campaign = build_campaign(source, task, guidelines=guidelines, sample=sample, seed=seed,
                              items=ids, gold=gold)  # fmt: skip
    made = make_page(campaign, rater, out, show_judge=show_judge)
    if selection is not None:
        console.print(f"kept {keep_with_campaign(selection, made.campaign_file)} (probabilities)")
    console.print(
        f"wrote {made.page} ({task}, {len(campaign.items)} items, {made.n_gold} gold, "
        f"{'judge shown' if show_judge else 'blind'}) for rater {rater}; campaign "
        f"{campaign.id} in {made.campaign_file}"
    )


@review_app.command("import")
def import_(
    files: Annotated[list[Path], typer.Argument(help="Raters' JSON files (or Label Studio's).")],
    campaign: Annotated[Path, Opt(help="campaign.json, or the folder that holds it.")],
    out: Annotated[Path, Opt(help="Output folder.")],
) -> None:
    """Check FILES against the campaign and write labels.csv, the task's tables and qc.csv."""
    from rich.table import Table

    from judgekit.review.campaign import read_campaign
    from judgekit.review.importer import read_files
    from judgekit.review.outputs import write_outputs

    found = read_campaign(campaign)
    summary = write_outputs(found, read_files(list(files), found), out)
    from judgekit.review.selection import carry_to_labels

    kept = carry_to_labels(campaign, found, out)
    if kept is not None:
        summary["files"] = [*summary["files"], kept.name]
    table = Table(title=f"review import: campaign {found.id} ({found.task})")
    csca = found.task == "csca"
    columns = ["rater", "done", "not done", "median s/item", "gold", "gold accuracy", "judge"]
    for column in columns + (["CS/CA against the rule"] if csca else []):
        table.add_column(column, justify="left" if column == "rater" else "right")
    for r in summary["qc"]:
        median, acc = r["median_seconds"], r["gold_accuracy"]
        table.add_row(
            r["rater"], str(r["done"]), str(r["not_done"]),
            "-" if median is None else f"{median:.1f}", f"{r['gold_done']}/{r['gold_items']}",
            "-" if acc is None else f"{acc:.3f}", "shown" if r["show_judge"] else "blind",
            *([str(r["rule_contradictions"])] if csca else []),
        )  # fmt: skip
    console.print(table)
    rows = f"{summary['labels']:,} label row" + ("" if summary["labels"] == 1 else "s")
    console.print(f"{rows}; wrote {', '.join(summary['files'])} to {out}")


@review_app.command("export-labelstudio")
def export_labelstudio(
    campaign: Annotated[Path, typer.Argument(help="campaign.json, or the folder that holds it.")],
    out: Annotated[Path, Opt(help="Output folder for tasks.json and config.xml.")],
) -> None:
    """Write the campaign's items as Label Studio tasks with a labelling config."""
    from judgekit.review.campaign import read_campaign
    from judgekit.review.labelstudio import export_labelstudio as export

    found = read_campaign(campaign)
    tasks, config = export(found, out)
    console.print(f"wrote {len(found.items)} tasks to {tasks} and the labelling config {config}")
