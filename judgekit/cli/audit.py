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

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import typer
from typer.core import TyperGroup

from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.data.atomic import open_output, write_frame, write_text
from judgekit.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

console = plain_console()
DEFAULT_CONFIG = Path("configs/audit.yaml")  # else the shipped one (judgekit init writes it)
PREFIX = "audit_"
COLUMNS = ("cs_label", "required_knowledge", "time_sensitive", "subject_category", "evidence",
           "rationale", "status")  # fmt: skip


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
    from judgekit.pipelines.cultural import CulturalOptions

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
    cfg.options("cultural", CulturalOptions)
    execute(cfg, (), limit=limit, out=out, no_cache=no_cache, retry_errors=retry_errors,
            dry_run=dry_run)  # fmt: skip


@audit_app.command("validate")
def audit_validate(
    run_dir: Path = typer.Argument(..., help="A finished audit run directory."),
    human: Path | None = typer.Option(None, help="Human labels (default: from the item files)."),
    tie_policy: str | None = typer.Option(
        None, help="exclude, error or own_class (default: run's)."
    ),
    n_resamples: int | None = typer.Option(None, help="Bootstrap resamples (default: run's)."),
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


def _plain(value: Any) -> Any:
    """A cell as JSON-ready Python: NaN -> None."""
    if isinstance(value, float) and value != value:
        return None
    return value


def _annotation_index(path: Path) -> pd.DataFrame:
    if path.is_dir():
        path = path / "annotations.jsonl"
    if not path.is_file():
        raise InputError(path, "no annotations (a run directory or its annotations.jsonl)")
    from judgekit.calibration.cultural import read_annotations

    frame = read_annotations(path)
    missing = {"benchmark", "id", "language", *COLUMNS} - set(frame.columns)
    if missing:
        raise InputError(path, f"not an audit annotations file: missing {sorted(missing)}")
    return frame


def _match(items: Any, annotations: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The annotation row of each item, indexed by id: the rows of the item file's benchmark,
    else (a renamed file) the rows matched by id alone, or by (id, language)."""
    same = annotations[annotations["benchmark"] == items.benchmark]
    if same.empty and not annotations["id"].duplicated().any():
        same = annotations
    if same.empty:
        languages = {it.language for it in items.items}
        same = annotations[annotations["language"].isin(languages)]
        if same["id"].duplicated().any():
            raise InputError(path, "ambiguous annotations: several benchmarks share these ids")
    return same.drop_duplicates("id").set_index("id")


@audit_app.command("split")
def audit_split(
    items: Path = typer.Argument(..., help="The item file that was audited."),
    annotations: Path = typer.Argument(..., help="The audit run directory or annotations.jsonl."),
    out: Path | None = typer.Option(None, help="Output folder (default: next to ANNOTATIONS)."),
    language: str | None = typer.Option(None, help="Language of items without a language field."),
    prefix: str = typer.Option(PREFIX, help="Prefix of the added columns."),
) -> None:
    """Write ITEMS with the audit's columns added, and its CS and CA subsets:
    <name>.annotated.<ext>, <name>.CS.<ext>, <name>.CA.<ext> (and .unlabelled. for the rest)."""
    from judgekit.data.items import load_items

    loaded = load_items(items, language=language or "und")
    table = _match(loaded, _annotation_index(annotations), annotations)
    target = out or (annotations if annotations.is_dir() else annotations.parent)
    target.mkdir(parents=True, exist_ok=True)
    added = [f"{prefix}{c}" for c in COLUMNS]
    columns = [*loaded.columns, *[c for c in added if c not in loaded.columns]]
    parts: dict[str, list[dict[str, Any]]] = {"annotated": [], "CS": [], "CA": []}
    for item, row in zip(loaded.items, loaded.rows, strict=True):
        found = table.loc[item.id] if item.id in table.index else None
        values = {f"{prefix}{c}": None if found is None else _plain(found[c]) for c in COLUMNS}
        full = {**row, **values}
        parts["annotated"].append(full)
        label = values[f"{prefix}cs_label"]
        parts.setdefault(label if label in ("CS", "CA") else "unlabelled", []).append(full)
    stem = loaded.path.name.split(".")[0]
    for name, rows in parts.items():
        path = target / f"{stem}.{name}.{loaded.format}"
        write_rows(path, rows, columns, loaded.format)
        console.print(f"{path}: {len(rows)} items")


def write_rows(path: Path, rows: list[dict[str, Any]], columns: list[str], fmt: str) -> None:
    """Write rows as JSONL (one object a line, UTF-8) or CSV/TSV (``columns`` in order; lists
    and dicts as JSON text)."""
    if fmt == "jsonl":
        with open_output(path) as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    with open_output(path, newline="") as fh:
        writer = csv.writer(fh, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            cells = [row.get(c) for c in columns]
            writer.writerow(
                [
                    json.dumps(v, ensure_ascii=False) if isinstance(v, list | dict) else v
                    for v in cells
                ]
            )
