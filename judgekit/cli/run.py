"""``judgekit run CONFIG``: run a pipeline with its models, resumable, with live progress.

The command parses its options, calls :func:`judgekit.run` and prints; ``audit`` and
``localise`` print through :func:`execute` too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.text import Text

from judgekit.cli.output import plain_console
from judgekit.cli.root import app

if TYPE_CHECKING:
    from judgekit.results import RunResult
    from judgekit.run_progress import RunProgress

console = plain_console()


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
    no_preflight: bool = typer.Option(
        False,
        "--no-preflight",
        help="Skip the checks of keys, servers and served model names before the first call.",
    ),
    batch: bool = typer.Option(
        False,
        "--batch",
        help="Send the tasks through the provider's Batch API (about half the price, answers "
        "within 24 h); rerun the same command to pick up batches already submitted.",
    ),
    batch_poll: float = typer.Option(
        30.0, "--batch-poll", help="Seconds between two looks at the batches (with --batch)."
    ),
    backend: str = typer.Option(
        "online", "--backend", help="online (this process calls the models) or ray (Ray Data)."
    ),
    replicas: int = typer.Option(1, "--replicas", help="Ray tasks judging at once (ray)."),
    ray_engine: str = typer.Option(
        "http", "--ray-engine", help="How Ray judges (ray): http (call the served judge) or vllm."
    ),
    ray_model: str | None = typer.Option(
        None, "--ray-model", help="Weights the vllm engine loads (default: the route's model id)."
    ),
    vllm_arg: list[str] = typer.Option(
        [], "--vllm-arg", help="A vLLM engine argument for --ray-engine vllm: max_model_len=2048"
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="Ray cluster address (default: RAY_ADDRESS, else local)."
    ),
) -> None:
    """Run CONFIG's pipeline; writes records.jsonl, tables, figures and summary.json to OUT.

    Running the same command again resumes: tasks already recorded are never called again.
    """
    executor = None
    if batch and not dry_run:
        from judgekit.batch.submit import SubmitBatch

        executor = SubmitBatch(poll_s=batch_poll, retry_errors=retry_errors)
    elif backend == "ray" and not dry_run:
        from judgekit.batch.ray_run import RayRun
        from judgekit.batch.ray_vllm import engine_args

        executor = RayRun(replicas, engine=ray_engine, address=ray_address,
                          retry_errors=retry_errors, model=ray_model,
                          engine_kwargs=engine_args(vllm_arg))  # fmt: skip
        no_preflight = no_preflight or ray_engine == "vllm"  # no server to check
    elif backend not in ("online", "ray"):
        from judgekit.errors import InputError

        raise InputError(None, f"must be online or ray, got {backend!r}", field="--backend")
    execute(config, set_, limit=limit, out=out, no_cache=no_cache, retry_errors=retry_errors,
            dry_run=dry_run, preflight=not no_preflight, executor=executor)  # fmt: skip


def execute(config: Path | Any, overrides: list[str], **options: Any) -> RunResult:
    """Run through :func:`judgekit.run` with a live progress display, then print the
    pipeline's summary, the signature and the totals (with an executor of
    :mod:`judgekit.batch`: what it did first, :func:`judgekit.cli.batch_report.print_batch`).

    Raises:
        typer.Exit: code 1 when every task got no answer, or when nothing was scored.
    """
    from judgekit.engine import run

    live = _Live()
    try:
        result = run(config, overrides, on_progress=live.update, on_warning=_warn, **options)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: what is recorded stays
        live.stop()
        p = live.last
        if p is not None:
            console.print(
                f"interrupted: {p.records} records kept in {p.out_dir}; "
                "run the same command again to resume"
                + ("; submitted batches go on at the provider" if p.batch else "")
            )
        raise
    finally:
        live.stop()
    if options.get("dry_run"):
        _print_dry_run(result)
        return result
    if options.get("executor") is not None:
        from judgekit.cli.batch_report import print_batch

        print_batch(console, options["executor"], result)
        if result.summary_data is None:
            return result
    _print_result(result)
    console.print(f"look at the run: judgekit view {result.out_dir}")
    return result


class _Live:
    """The progress bar of a run, fed by ``judgekit.run``'s ``on_progress`` events."""

    def __init__(self) -> None:
        self.last: RunProgress | None = None
        self._progress: Any = None
        self._bar: Any = None

    def update(self, p: RunProgress) -> None:
        self.last = p
        if p.event == "planned":
            if p.preflight:
                console.print(Text(f"preflight: {p.preflight}"))
            console.print(
                Text(p.run_name, style="bold"),
                Text(
                    f": pipeline {p.pipeline}, {p.planned} items, out {p.out_dir} "
                    f"({p.resumed} records already there)"
                ),  # fmt: skip
                sep="",
            )
            return
        if self._progress is None:
            from judgekit.cli.progress import run_progress

            self._progress = run_progress(console)
            self._progress.__enter__()
            self._bar = self._progress.add_task(p.pipeline, total=p.planned, stats="")
        if p.event == "item":
            self._progress.advance(self._bar)
        self._progress.update(self._bar, stats=_stats(p))

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)
            self._progress = None


def _warn(message: str) -> None:
    console.print(Text(f"warning: {message}", style="bold yellow"), soft_wrap=True)


def _stats(p: RunProgress) -> str:
    from judgekit.llm.usage import cost_text

    status = p.status
    line = (  # this process's requests and records (a resume's earlier ones are not counted)
        f"requests {p.requests}{_failed(p.transient)}; ok {status['ok']} "
        f"unscored {status['unscored']} error {status['error']} cached {status['cached']}; "
        f"tokens {p.tokens:,} {cost_text(p.cost_usd, p.cost_unknown)}"
    )
    return f"{p.batch}; {line}" if p.batch else line


def _failed(transient: dict[str, int]) -> str:
    """`` (failed: timeout 2, server 1)``: the attempts that failed and were retried or ended
    their task; empty when none did."""
    if not transient:
        return ""
    return f" (failed: {', '.join(f'{k} {n}' for k, n in sorted(transient.items()))})"


def _print_dry_run(result: RunResult) -> None:
    estimate = result.estimate
    if estimate is None:
        console.print(
            "dry run: this pipeline builds its later calls from earlier answers, so only its "
            "planned items are known in advance (above). Nothing was sent."
        )
        return
    console.print(
        f"dry run: {estimate.tasks} tasks: {estimate.recorded} already recorded, "
        f"{estimate.cached} cached, {estimate.calls} calls to send; "
        f"~{estimate.tokens_in:,} input tokens, <= {estimate.tokens_out_max:,} output tokens, "
        f"<= ${estimate.cost_max_usd:.4f}. Nothing was sent."
    )
    if estimate.unpriced:
        console.print(f"no price known for {sorted(estimate.unpriced)} (counted as $0)")
    if result.dry_run_note:
        console.print(result.dry_run_note)
    by_model = estimate.as_dict()["by_model"]
    if by_model:  # nothing to send (a finished run) has no per-model counts
        console.print_json(json.dumps(by_model))


def _print_result(result: RunResult) -> None:
    from judgekit.pipelines import get_printer
    from judgekit.signature import Signature

    summary = result.summary_data or {}
    printer = get_printer(result.pipeline)
    if printer is not None:
        printer(summary, console, result.runner)
    elif hasattr(result.runner, "print_summary"):  # a pipeline written to the older contract
        result.runner.print_summary(summary, console)
    if result.cache_write_errors:
        console.print(
            f"{result.cache_write_errors} answers could not be written to the cache "
            f"({result.cache_write_error}); their records are in records.jsonl"
        )
    if result.cache_pickled:
        console.print(
            f"{result.cache_pickled} cache entries were in the pickle format of earlier judgekit "
            "versions: never unpickled (a pickle can run code), their tasks were called again "
            "and the answers stored as JSON"
        )
    if result.cache_rejected:
        console.print(
            f"{result.cache_rejected} cache entries were not valid answers of their task's "
            "schema (corrupt, or written by something else): those tasks were called again"
        )
    if "signature" in summary:
        console.print(Text("signature: " + Signature.model_validate(summary["signature"]).format()))
    _print_totals(result)


def _print_totals(result: RunResult) -> None:
    from judgekit.llm.usage import cost_text

    summary = result.summary_data or {}
    items = summary.get("items", {})
    usage = summary["usage"]
    totals = usage.get("totals", {})
    console.print(
        f"items {items.get('planned')}: judged {items.get('judged')}, "
        f"excluded {items.get('excluded')}; records {usage['calls']} {usage['status']}, "
        f"tokens in {totals.get('tokens_in', 0):,.0f} out {totals.get('tokens_out', 0):,.0f}, "
        f"cost {cost_text(totals.get('cost_usd', 0), totals.get('cost_unknown', 0))}; "
        f"requests sent this run {result.requests}{_failed(result.transient)} (retries and "
        f"re-asks included), tasks answered from the cache {result.cache_hits}; "
        f"{result.elapsed_s:.0f}s; results in {result.out_dir}"
    )
    batch = usage.get("batch") or {}
    if batch.get("records"):
        console.print(
            f"{batch['records']} of the records were answered by batches, their cost "
            f"${batch['cost_usd']:.4f} at batch prices"
        )
    if usage.get("normalised"):
        console.print(
            f'{usage["normalised"]} answers spelled a boolean as a string (" true"): read after '
            "strict normalisation, counted in summary.json (usage.normalised)"
        )
    errors = usage["status"].get("error", 0)
    if errors:
        console.print(
            f"{errors} tasks got no answer (status error, reasons in records.jsonl); once the "
            "endpoint is fixed, rerun with --retry-errors to call them again"
        )
    if result.all_failed:
        raise typer.Exit(1)  # nothing answered at all: fail loudly
    if result.nothing_scored:
        console.print(
            "nothing was scored: every answer failed validation (reasons in records.jsonl)"
        )
        raise typer.Exit(1)  # nothing scored, whatever the number of items: fail loudly
