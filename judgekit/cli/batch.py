"""``judgekit batch export|import``: a run's tasks as batch JSONL, and their answers back.

* ``batch export CONFIG [--shards N] -o DIR``: the tasks without a final record as OpenAI batch
  request files (one directory per model, N shards each) and a manifest;
* ``batch import CONFIG RESULTS...``: OpenAI batch output/error files or ``vllm run-batch``
  output to records, cache entries and, once every task has a record, the run's report.

``judgekit run CONFIG --batch`` (``judgekit.cli.run``) does both through a provider's Batch API.
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.cli.root import app
from judgekit.cli.run import execute

batch_app = typer.Typer(
    help="Batch requests of a run (OpenAI batch JSONL, vllm run-batch) and their answers back.",
    no_args_is_help=True,
)
app.add_typer(batch_app, name="batch")

_SET = "Override any config field (as for judgekit run)."


@batch_app.command("export")
def export_command(
    config: Path = typer.Argument(..., help="YAML run config (see configs/)."),
    output: Path = typer.Option(..., "-o", "--output", help="Directory for the shards."),
    shards: int = typer.Option(1, "--shards", help="Shards per model (one per node), >= 1."),
    set_: list[str] = typer.Option([], "--set", help=_SET),
    limit: int | None = typer.Option(None, help="Items to run; 0 = all."),
    out: Path | None = typer.Option(None, help="Run directory (default: config 'out')."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Export cached tasks too."),
    retry_errors: bool = typer.Option(
        False, "--retry-errors", help="Export the tasks recorded as error (no answer) too."
    ),
) -> None:
    """Write the run's tasks without a final record as OpenAI batch JSONL shards.

    Each line's custom_id is the task key and its body the exact request an online run sends
    (structured output included); DIR/manifest.json (also kept in the run directory) ties
    each key to its request. vllm run-batch and OpenAI's Batch API read these files.
    """
    from judgekit.batch.exporter import ExportBatch

    executor = ExportBatch(output, shards, retry_errors=retry_errors)
    execute(config, set_, limit=limit, out=out, no_cache=no_cache, preflight=False,
            executor=executor)  # fmt: skip


@batch_app.command("import")
def import_command(
    config: Path = typer.Argument(..., help="YAML run config (the one exported)."),
    results: list[Path] = typer.Argument(
        ..., help="Result files: OpenAI batch output or error files, vllm run-batch output."
    ),
    manifest: list[Path] = typer.Option(
        [], "--manifest", help="An export's manifest.json besides the run directory's own."
    ),
    set_: list[str] = typer.Option([], "--set", help=_SET),
    limit: int | None = typer.Option(None, help="Items to run; 0 = all."),
    out: Path | None = typer.Option(None, help="Run directory (default: config 'out')."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the cache."),
    same_judge: list[str] = typer.Option(
        [], "--same-judge", help="A model whose answers are the configured judge's (repeatable)."
    ),
) -> None:
    """Record batch answers as the run's records, then write the run's report.

    Answers are validated as online answers are (an invalid one is recorded unscored: a
    batch cannot re-ask; --retry-errors on a later online run redoes it). Importing a file
    twice changes nothing; answers for keys the run does not have, or whose request changed
    since the export, are counted and ignored. Answers of another model than the judge (not
    its id nor a dated snapshot of it) are recorded error and named, unless --same-judge names
    that model.
    """
    from judgekit.batch.importer import ImportResults

    executor = ImportResults(results, manifest, same_judge)
    execute(config, set_, limit=limit, out=out, no_cache=no_cache, preflight=False,
            executor=executor)  # fmt: skip
