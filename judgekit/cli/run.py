"""``judgekit run CONFIG``: run a pipeline with its models, resumable, with live progress."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.text import Text

from judgekit.cli import app
from judgekit.cli.output import plain_console
from judgekit.cli.progress import run_progress
from judgekit.config import load_config
from judgekit.pipelines import get_pipeline

if TYPE_CHECKING:
    from judgekit.llm.client import LLMClient

console = plain_console()
_REFRESH_S = 0.2  # progress text refresh, seconds


@app.command("run")
def run_command(
    config: Path = typer.Argument(..., help="YAML run config (see configs/)."),
    set_: list[str] = typer.Option(
        [], "--set", help="Override any config field: --set judge.model=openai/gpt-4o-mini"
    ),
    limit: int | None = typer.Option(None, help="Items to run (spilling: words); 0 = all."),
    out: Path | None = typer.Option(None, help="Output directory (default: config 'out')."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the cache."),
    retry_errors: bool = typer.Option(
        False,
        "--retry-errors",
        help="Call again the tasks recorded as error (no answer: server down, timeout).",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the calls, tokens and cost a run would need; send nothing."
    ),
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
    log_dir = out_dir
    if dry_run and not out_dir.exists():  # a dry run writes nothing
        log_dir = Path(tempfile.mkdtemp(prefix="judgekit-dry-run-"))
    _lock_run_dir(log_dir)
    runlog = RunLog(log_dir)
    cache = None
    if cfg.cache.enabled and not no_cache:
        cache = ResponseCache(cfg.cache.dir)
    status: Counter[str] = Counter()
    progress = run_progress(console)
    shown = [0.0]

    def on_record(record: Record) -> None:
        status[record.status] += 1
        status["cached"] += int(record.cache_hit)
        now = time.monotonic()
        if now - shown[0] >= _REFRESH_S:
            shown[0] = now
            progress.update(bar, stats=_stats(status, client))

    async def tick() -> None:  # progress also moves while every call is slow
        while True:
            await asyncio.sleep(1.0)
            progress.update(bar, stats=_stats(status, client))

    async def run_all() -> None:
        ticker = asyncio.create_task(tick())
        try:
            await runner.run(on_item=lambda _item: progress.advance(bar))
        finally:
            ticker.cancel()
            await client.aclose()

    client = LLMClient(runlog, cache, on_record=on_record, retry_errors=retry_errors)
    started = time.monotonic()
    try:
        runner = runner_cls(cfg, client)
        planned = runner.plan()
        console.print(
            Text(cfg.run_name(), style="bold"),
            Text(
                f": pipeline {cfg.pipeline}, {len(planned)} items, out {out_dir} "
                f"({runlog.resumed} records already there)"
            ),  # fmt: skip
            sep="",
        )
        if dry_run:
            _print_dry_run(runner, runlog, cache)
            return
        with progress:
            bar = progress.add_task(cfg.pipeline, total=len(planned), stats="")
            try:
                asyncio.run(run_all())
            except KeyboardInterrupt:  # Ctrl-C or SIGTERM: what is recorded stays
                console.print(
                    f"interrupted: {len(runlog.records)} records kept in {log_dir}; "
                    "run the same command again to resume"
                )
                raise
            finally:
                progress.update(bar, stats=_stats(status, client))
        summary = report(runner, client.records(), out_dir)
    finally:
        client.close()
        runlog.close()
        if cache is not None:
            cache.close()
        if log_dir != out_dir:
            shutil.rmtree(log_dir, ignore_errors=True)
    elapsed = time.monotonic() - started
    if hasattr(runner, "print_summary"):
        runner.print_summary(summary, console)
    if cache is not None and cache.write_errors:
        console.print(
            f"{cache.write_errors} answers could not be written to the cache "
            f"({cache.write_error}); their records are in records.jsonl"
        )
    if client.cache_rejected:
        console.print(
            f"{client.cache_rejected} cache entries were not valid answers of their task's "
            "schema (corrupt, or written by something else): those tasks were called again"
        )
    _print_summary(summary, client.calls_made, elapsed, out_dir)
    console.print(f"look at the run: judgekit view {out_dir}")


def _stats(status: Counter[str], client: LLMClient) -> str:
    usage = client.usage
    tokens = int(usage.total("tokens_in") + usage.total("tokens_out"))
    return (  # this process's requests and records (a resume's earlier ones are not counted)
        f"requests {client.calls_made}; ok {status['ok']} "
        f"unscored {status['unscored']} error {status['error']} cached {status['cached']}; "
        f"tokens {tokens:,} ${usage.total('cost_usd'):.4f}"
    )


def _print_dry_run(runner: object, runlog: object, cache: object) -> None:
    from judgekit.llm.estimate import dry_run

    if not hasattr(runner, "tasks"):
        console.print(
            "dry run: this pipeline builds its later calls from earlier answers, so only its "
            "planned items are known in advance (above). Nothing was sent."
        )
        return
    estimate = dry_run(runner.tasks(), runlog, cache)  # type: ignore[attr-defined, arg-type]
    console.print(
        f"dry run: {estimate.tasks} tasks: {estimate.recorded} already recorded, "
        f"{estimate.cached} cached, {estimate.calls} calls to send; "
        f"~{estimate.tokens_in:,} input tokens, <= {estimate.tokens_out_max:,} output tokens, "
        f"<= ${estimate.cost_max_usd:.4f}. Nothing was sent."
    )
    if estimate.unpriced:
        console.print(f"no price known for {sorted(estimate.unpriced)} (counted as $0)")
    note = getattr(runner, "dry_run_note", None)
    if note:
        console.print(note)
    console.print_json(json.dumps(estimate.as_dict()["by_model"]))


def _print_summary(summary: dict, calls: int, elapsed: float, out_dir: Path) -> None:
    items = summary.get("items", {})
    usage = summary["usage"]
    totals = usage.get("totals", {})
    console.print(
        f"items {items.get('planned')}: judged {items.get('judged')}, "
        f"excluded {items.get('excluded')}; records {usage['calls']} {usage['status']}, "
        f"tokens in {totals.get('tokens_in', 0):,.0f} out {totals.get('tokens_out', 0):,.0f}, "
        f"cost ${totals.get('cost_usd', 0):.4f}; "
        f"requests sent this run {calls} (retries and re-asks included); "
        f"{elapsed:.0f}s; results in {out_dir}"
    )
    errors = usage["status"].get("error", 0)
    if errors:
        console.print(
            f"{errors} tasks got no answer (status error, reasons in records.jsonl); once the "
            "endpoint is fixed, rerun with --retry-errors to call them again"
        )
    if usage["calls"] and errors == usage["calls"]:
        raise typer.Exit(1)  # nothing answered at all: fail loudly


def _lock_run_dir(directory: Path) -> None:
    """Hold an exclusive lock on ``DIR/.lock`` for the life of this process, so two runs never
    append to one records.jsonl.

    Raises:
        JudgekitError: another judgekit process holds the lock.
    """
    import fcntl

    from judgekit.errors import JudgekitError

    directory.mkdir(parents=True, exist_ok=True)
    handle = open(directory / ".lock", "w")  # noqa: SIM115 (kept open: the lock lives with it)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise JudgekitError(f"another judgekit run is writing to {directory}") from None
    _LOCKS.append(handle)


_LOCKS: list = []
