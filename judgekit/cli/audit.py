"""``judgekit audit``: the cultural-sensitivity (CS/CA) audit of benchmark items (paper 001).

* ``judgekit audit ITEMS... --config CONFIG [--set ...]`` (same as ``audit run``): annotate the
  items with the config's judge(s); writes per-item annotations, CS shares with CIs, flagged
  items, translated-counterpart stability and, when the items carry human votes (or with
  ``--human``), the validation table. Resumable like ``judgekit run``, whose machinery it uses.
* ``judgekit audit validate RUN_DIR [--human LABELS]``: the validation table of a finished run.
* ``judgekit audit split ITEMS ANNOTATIONS``: the item file with one column per annotation, and
  its CS and CA subsets, in the item file's own format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click
import typer
from typer.core import TyperGroup

from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.data.atomic import write_frame, write_text
from judgekit.errors import InputError

if TYPE_CHECKING:
    pass

console = plain_console()
DEFAULT_CONFIG = Path("configs/audit.yaml")  # else the shipped one (judgekit init writes it)


class _DefaultRun(TyperGroup):
    """A group whose default command is ``run``: ``audit ITEMS`` means ``audit run ITEMS``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


audit_app = typer.Typer(
    cls=_DefaultRun,
    help="Cultural-sensitivity (CS/CA) audit of benchmark items: annotate, validate, split.",
    no_args_is_help=True,
)
app.add_typer(audit_app, name="audit")


@audit_app.command("run")
def audit_run(
    items: list[Path] = typer.Argument(..., help="Item files (.jsonl, .csv, .tsv)."),
    config: Path = typer.Option(DEFAULT_CONFIG, "--config", "-c", help="Run config (YAML)."),
    set_: list[str] = typer.Option([], "--set", help="Override a config field (KEY=VALUE)."),
    human: Path | None = typer.Option(
        None, help="Per-annotator human labels (default: the votes the items carry, if any)."
    ),
    language: str | None = typer.Option(None, help="Language of items without a language field."),
    split: str | None = typer.Option(None, help="Annotate only: calibration or heldout."),
    limit: int | None = typer.Option(None, help="Items per item file; 0 = all."),
    out: Path | None = typer.Option(None, help="Output directory (default: config 'out')."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the cache."),
    retry_errors: bool = typer.Option(
        False, "--retry-errors", help="Call again the tasks recorded as error (no answer)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Count the calls; send nothing."),
) -> None:
    """Annotate ITEMS for cultural sensitivity; writes annotations.jsonl, shares.csv,
    flagged.csv, validation.md (with human votes) and summary.json. Resumes when run again."""
    from judgekit.cli.run import execute
    from judgekit.config import load_config

    overrides = [*set_, f"cultural.items={json.dumps([str(p) for p in items])}"]
    for key, value in (("human", human), ("language", language), ("split", split)):
        if value is not None:
            overrides.append(f"cultural.{key}={json.dumps(str(value))}")
    if config == DEFAULT_CONFIG and not config.exists():
        from judgekit.bundled import bundled_dir

        config = bundled_dir("configs") / "audit.yaml"
    cfg = load_config(config, overrides)
    if cfg.pipeline != "cultural":
        raise InputError(config, f"expected pipeline: cultural, found {cfg.pipeline}")
    execute(cfg, (), limit=limit, out=out, no_cache=no_cache, retry_errors=retry_errors,
            dry_run=dry_run)  # fmt: skip


@audit_app.command("validate")
def audit_validate(
    run_dir: Path = typer.Argument(..., help="A finished audit run directory."),
    human: Path | None = typer.Option(None, help="Human labels (default: from the item files)."),
    tie_policy: str | None = typer.Option(
        None, help="exclude, error or own_class (default: run's)."
    ),
    n_resamples: int | None = typer.Option(
        None, min=0, help="Bootstrap resamples (default: run's)."
    ),
    out: Path | None = typer.Option(None, help="Where to write validation.* (default: RUN_DIR)."),
) -> None:
    """Recompute the validation table of RUN_DIR against human votes."""
    from judgekit.calibration.cultural import markdown_table, validate_run

    table = validate_run(run_dir, human=human, tie_policy=tie_policy, n_resamples=n_resamples)
    target = out or run_dir
    target.mkdir(parents=True, exist_ok=True)
    write_frame(table, target / "validation.csv", index=False)
    text = markdown_table(table)
    write_text(target / "validation.md", text)
    console.print(text, highlight=False)
    console.print(f"written: {target / 'validation.csv'}, {target / 'validation.md'}")


@audit_app.command("split")
def audit_split(
    items: Path = typer.Argument(..., help="The item file that was audited."),
    annotations: Path = typer.Argument(..., help="The audit run directory or annotations.jsonl."),
    out: Path | None = typer.Option(None, help="Output folder (default: next to ANNOTATIONS)."),
    language: str | None = typer.Option(None, help="Language of items without a language field."),
    prefix: str = typer.Option("audit_", help="Prefix of the added columns."),
) -> None:
    """Write ITEMS with the audit's columns added, and its CS and CA subsets:
    <name>.annotated.<ext>, <name>.CS.<ext>, <name>.CA.<ext> (and .unlabelled. for the rest)."""
    from judgekit.pipelines.cultural_split import split_items

    split = split_items(items, annotations, language=language, prefix=prefix)
    target = out or (annotations if annotations.is_dir() else annotations.parent)
    for path, n in split.write(target):
        console.print(f"{path}: {n} items")
