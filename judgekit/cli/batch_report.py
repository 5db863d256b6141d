"""What ``judgekit batch export|import`` and ``judgekit run --batch`` print about their batches
(the run's own summary follows, as for an online run)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from judgekit.llm.usage import cost_text


def print_batch(console: Console, executor: Any, result: Any) -> None:
    """Print what ``executor`` (an exporter, importer or submitter of :mod:`judgekit.batch`)
    did in the run ``result``."""
    from judgekit.batch.exporter import ExportBatch
    from judgekit.batch.importer import ImportResults
    from judgekit.batch.ray_run import RayRun

    if isinstance(executor, ExportBatch):
        _print_export(console, executor)
        return
    if isinstance(executor, RayRun):
        _print_ray(console, executor)
        return
    counts = executor.counts
    if isinstance(executor, ImportResults):
        rate = sum(counts.imported.values()) / counts.seconds if counts.seconds else 0.0
        console.print(
            f"read {counts.lines} results from {counts.files} files; imported "
            f"{_imported(counts)} in {counts.seconds:.2f}s ({rate:,.0f} records/s)"
        )
    else:
        console.print(
            f"batch: {executor.submitted} submitted by this run; imported {_imported(counts)}"
        )
    _print_ignored(console, counts)
    _print_other_models(console, counts)
    if result.summary_data is None:
        console.print(
            f"{counts.missing} tasks of the run have no record yet: import their results, "
            "export them again (judgekit batch export) or run online; the report is written "
            f"once every task has a record ({result.out_dir})"
        )


def _imported(counts: Any) -> str:
    status = counts.imported
    text = (
        f"{sum(status.values())} answers (ok {status['ok']}, unscored {status['unscored']}, "
        f"error {status['error']}), {counts.cached} from the cache; tokens in "
        f"{counts.tokens_in:,} out {counts.tokens_out:,}, cost "
        f"{cost_text(counts.cost_usd, counts.cost_unknown)} at batch prices"
    )
    if counts.online_cost_usd:
        text += f" ({cost_text(counts.online_cost_usd, counts.cost_unknown)} at online prices)"
    return text


def _print_ignored(console: Console, counts: Any) -> None:
    parts = []
    if counts.recorded:
        parts.append(f"{counts.recorded} for tasks already recorded")
    if counts.unknown:
        shown = ", ".join(repr(k) for k in counts.unknown_keys)
        parts.append(
            f"{counts.unknown} for tasks this run does not have (another config's export, or "
            f"ids that are not task keys: {shown})"
        )
    if counts.stale:
        parts.append(f"{counts.stale} stale (the task's request changed since its export)")
    if counts.unlisted:
        parts.append(
            f"{counts.unlisted} whose task no export manifest of the run lists (pass the "
            "export's manifest.json with --manifest)"
        )
    if counts.duplicates:
        parts.append(f"{counts.duplicates} repeated lines of a task")
    if parts:
        console.print(Text("ignored: " + "; ".join(parts)))


def _print_other_models(console: Console, counts: Any) -> None:
    for (answered, configured), n in sorted(counts.other_models.items()):
        console.print(
            Text(
                f"{n} answer{'s' * (n != 1)} by {answered}, not the judge {configured}: "
                f"recorded error, out of the judge's figures (--same-judge {answered} if it is "
                "the same judge; run --retry-errors to ask the judge online)"
            )
        )


def _print_export(console: Console, executor: Any) -> None:
    pending, manifest = executor.pending, executor.manifest
    kept = f"{pending.recorded} already recorded, {pending.cached} answered by the cache"
    if manifest is None:
        console.print(f"nothing to export: of {pending.tasks} tasks, {kept}")
        return
    console.print(
        f"exported {pending.requests} requests of {pending.tasks} tasks ({kept}) to "
        f"{manifest.directory}:"
    )
    for model in dict.fromkeys(s.model for s in manifest.shards):
        shards = [s for s in manifest.shards if s.model == model]
        sizes = ", ".join(str(s.requests) for s in shards)
        folder = shards[0].file.rsplit("/", 1)[0]
        console.print(Text(f"  {model}: {len(shards)} shards in {folder}/ ({sizes} requests)"))
    console.print(
        f"manifest {manifest.directory}/manifest.json (export {manifest.export_id}); once "
        "answered, run: judgekit batch import CONFIG RESULTS..."
    )


def _print_ray(console: Console, executor: Any) -> None:
    """What ``judgekit run --backend ray`` did (:class:`judgekit.batch.ray_run.RayRun`)."""
    c = executor.counts
    status = c.imported
    rate = sum(status.values()) / c.seconds if c.seconds else 0.0
    console.print(
        f"ray: {c.pending} tasks sent ({c.recorded} recorded already, {c.cached} cached); "
        f"recorded {sum(status.values())} (ok {status['ok']}, unscored {status['unscored']}, "
        f"error {status['error']}) in {c.seconds:.1f}s ({rate:,.1f} records/s); "
        f"{c.duplicates} duplicate answers dropped, {c.missing} missing"
    )
