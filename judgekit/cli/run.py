"""``judgekit run CONFIG``: run a pipeline with its models, resumable, with live progress."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from judgekit.cli import app
from judgekit.config import load_config
from judgekit.pipelines import get_pipeline

console = Console()


@app.command("run")
def run_command(
    config: Path = typer.Argument(..., help="YAML run config (see configs/)."),
    set_: list[str] = typer.Option(
        [], "--set", help="Override any config field: --set judge.model=openai/gpt-4o-mini"
    ),
    limit: int | None = typer.Option(None, help="Items to run (spilling: words); 0 = all."),
    out: Path | None = typer.Option(None, help="Output directory (default: config 'out')."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the cache."),
) -> None:
    """Run CONFIG's pipeline; writes records.jsonl, tables, figures and summary.json to OUT.

    Running the same command again resumes: tasks already recorded are never called again.
    """
    from judgekit.llm.cache import ResponseCache
    from judgekit.llm.client import LLMClient
    from judgekit.runlog import Record, RunLog

    cfg = load_config(config, set_)
    if limit is not None:
        cfg.limit = limit
    if out is not None:
        cfg.out = out
    out_dir = cfg.out_dir()
    runner_cls, report = get_pipeline(cfg.pipeline)
    runlog = RunLog(out_dir)
    cache = None
    if cfg.cache.enabled and not no_cache:
        cache = ResponseCache(cfg.cache.dir)
    status: Counter[str] = Counter()
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[stats]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )

    def on_record(record: Record) -> None:
        status[record.status] += 1
        status["cached"] += int(record.cache_hit)
        progress.update(bar, stats=_stats(status, client.calls_made))

    client = LLMClient(runlog, cache, on_record=on_record)
    started = time.monotonic()
    try:
        runner = runner_cls(cfg, client)
        planned = runner.plan()
        console.print(
            f"[bold]{cfg.run_name()}[/]: pipeline {cfg.pipeline}, {len(planned)} items, "
            f"out {out_dir} ({runlog.resumed} records already there)"
        )
        with progress:
            bar = progress.add_task(cfg.pipeline, total=len(planned), stats="")
            asyncio.run(runner.run(on_item=lambda _item: progress.advance(bar)))
        summary = report(runner, list(client.seen.values()), out_dir)
    finally:
        client.close()
        runlog.close()
        if cache is not None:
            cache.close()
    elapsed = time.monotonic() - started
    if hasattr(runner, "print_summary"):
        runner.print_summary(summary, console)
    _print_summary(summary, client.calls_made, elapsed, out_dir)


def _stats(status: Counter[str], calls: int) -> str:
    return (
        f"calls {calls} ok {status['ok']} unscored {status['unscored']} "
        f"error {status['error']} cached {status['cached']}"
    )


def _print_summary(summary: dict, calls: int, elapsed: float, out_dir: Path) -> None:
    items = summary.get("items", {})
    usage = summary["usage"]
    console.print(
        f"items {items.get('planned')}: judged {items.get('judged')}, "
        f"excluded {items.get('excluded')}; records {usage['calls']} {usage['status']}; "
        f"model calls this run {calls}; {elapsed:.0f}s; results in {out_dir}"
    )
