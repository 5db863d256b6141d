"""The run engine: ``judgekit.run`` and ``judgekit.load_run``, the one way a run is made.

Every caller goes through :func:`run`: the ``judgekit run``, ``audit`` and ``localise`` commands,
the judge x prompt grid (:mod:`judgekit.calibration.grid`) and Python users. It prints nothing;
progress is reported through an ``on_progress`` callback, and the outcome is a
:class:`~judgekit.results.RunResult`. The steps of a run: load the config (overrides applied),
build the pipeline's runner (which reads and validates every input, so a bad items file fails
before the run directory exists), lock the run directory, open its ``records.jsonl`` (resume) and
the response cache, run the tasks, and write the report (tables, figures, ``summary.json``).

The module is not called ``judgekit/run.py`` because ``judgekit.run`` is the function.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from judgekit.config import RunConfig, load_config
from judgekit.data.atomic import open_regular
from judgekit.errors import InputError, JudgekitError, OutputError
from judgekit.interrupt import run_stoppable
from judgekit.llm.logprob_watch import note_scoring
from judgekit.pipelines import get_pipeline
from judgekit.results import RunResult, load_run
from judgekit.run_progress import RunProgress

if TYPE_CHECKING:
    from judgekit.llm.cache import ResponseCache
    from judgekit.llm.client import LLMClient
    from judgekit.runlog import Record, RunLog

__all__ = ["Executor", "RunProgress", "RunResult", "load_run", "run"]

_REFRESH_S = 0.2  # least seconds between two "record" events
_TICK_S = 1.0  # a "tick" event this often, so progress moves while every call is slow


class Executor(Protocol):
    """How a run's tasks get their records other than by online calls (``judgekit.batch``:
    answers imported from batch result files, batches submitted to a provider, or an export
    that records nothing). ``execute`` returns True when every task of the run has a record:
    the engine then runs the pipeline's own loop, which finds them all and calls nothing, and
    writes the report; False leaves the report unwritten (answers still to come)."""

    def execute(self, runner: Any, session: _Session, emit: Callable[[str], None]) -> bool: ...


def _config(
    config: RunConfig | Path | str,
    overrides: Sequence[str] | str,
    limit: int | None,
    out: Path | str | None,
) -> RunConfig:
    """The run's config with ``overrides``, ``limit`` and ``out`` applied (see :func:`run`)."""
    if isinstance(overrides, str):  # one KEY=VALUE, not its characters
        overrides = [overrides]
    if limit is not None and limit < 0:  # not a slice: -1 would drop the last item
        raise InputError(None, f"must be >= 0 (0 = all), got {limit}", field="--limit")
    if not isinstance(config, RunConfig):
        cfg = load_config(config, list(overrides))
    elif not overrides:
        cfg = config
    elif config._path is None:
        raise JudgekitError("overrides need a config loaded from a file (load_config)")
    else:
        cfg = load_config(config._path, [*config._overrides, *overrides])
    if limit is not None:
        cfg.limit = limit
    if out is not None:
        cfg.out = Path(out)
    return cfg


def run(
    config: RunConfig | Path | str,
    overrides: Sequence[str] = (),
    *,
    limit: int | None = None,
    out: Path | str | None = None,
    no_cache: bool = False,
    retry_errors: bool = False,
    dry_run: bool = False,
    preflight: bool = True,
    on_progress: Callable[[RunProgress], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    executor: Executor | None = None,
) -> RunResult:
    """Run a config's pipeline to its records, tables and ``summary.json``; resumable.

    Args:
        config: a YAML run config (path) or a loaded :class:`~judgekit.config.RunConfig`.
        overrides: ``KEY=VALUE`` assignments, as ``--set`` (``judge.model=openai/gpt-4o``);
            one string is one assignment.
        limit: items to run (spilling: words), >= 0; 0 = all; None = the config's.
        out: output directory (None = the config's ``out``).
        no_cache: neither read nor write the response cache.
        retry_errors: call again the tasks recorded as ``error`` (no answer), once.
        dry_run: count the calls, tokens and cost; send nothing and write nothing
            (``RunResult.estimate``; None for pipelines whose later calls depend on answers).
        preflight: check every role's keys, servers and served model names before anything is
            sent (:mod:`judgekit.llm.preflight`); False skips the checks.
        on_progress: called with a :class:`RunProgress` as the run goes (see its events).
        on_warning: called with one line for each warning as it arises (a server waited for
            during preflight, an endpoint that ignores the JSON schema).
        executor: how the tasks get their records instead of online calls (an
            :class:`Executor` of :mod:`judgekit.batch`); None = online calls.

    Returns:
        The :class:`~judgekit.results.RunResult` (``summary`` None for a dry run, and for an
        executor that left tasks without a record).

    Raises:
        InputError: a bad config, override or input file (before the run directory is made).
        JudgekitError: another process is writing to the run directory; a model cannot be
            used at all (an API key variable unset, a server unreachable or not serving the
            model: preflight), or an endpoint refuses every task (401, 404...).
        OutputError: a file of the run cannot be written (a full disk): ``records.jsonl``
            (no call is sent after its first failed write; the run stops once the write still
            fails after ``RunLog.retry_s`` seconds) or a report file (the old one is kept).
        KeyboardInterrupt: Ctrl-C or SIGTERM (see :mod:`judgekit.interrupt`); what was
            recorded stays, a rerun resumes.
    """
    cfg = _config(config, overrides, limit, out)
    out_dir = cfg.out_dir()
    runner_cls, report = get_pipeline(cfg.pipeline)
    runner = runner_cls(cfg, None)  # reads and checks every input; calls nothing
    checked = _preflight(cfg, on_warning) if preflight else ""
    log_dir = out_dir
    if dry_run and not out_dir.exists():  # a dry run writes nothing
        log_dir = Path(tempfile.mkdtemp(prefix="judgekit-dry-run-"))
    session = _Session(
        cfg, log_dir, no_cache=no_cache, retry_errors=retry_errors, on_warning=on_warning
    )
    started = time.monotonic()
    failed = True  # an error on the way: closing must not hide it behind its own
    try:
        runner.client = session.client
        _announce(session, out_dir, len(runner.plan()), checked, on_progress)
        result, ran = _drive(runner, report, session, out_dir, dry_run, executor, on_progress)
        failed = False
    finally:
        session.close(quiet=failed)
        if log_dir != out_dir:
            _unlock(log_dir)
            shutil.rmtree(log_dir, ignore_errors=True)
    if not ran:  # a dry run: an estimate, no records
        return result
    result.elapsed_s = time.monotonic() - started
    session.fill(result)
    return result


def _announce(
    session: _Session,
    out_dir: Path,
    planned: int,
    checked: str,
    on_progress: Callable[[RunProgress], None] | None,
) -> None:
    """Fill the progress's plan (name, pipeline, folder, planned and resumed items, preflight)
    and emit ``planned``."""
    progress, cfg = session.progress, session.config
    progress.run_name, progress.pipeline, progress.out_dir = cfg.run_name(), cfg.pipeline, out_dir
    progress.planned, progress.resumed = planned, session.runlog.resumed
    progress.preflight = checked
    session.emit(on_progress, "planned")


def _drive(
    runner: Any,
    report: Callable[..., dict[str, Any]],
    session: _Session,
    out_dir: Path,
    dry_run: bool,
    executor: Executor | None,
    on_progress: Callable[[RunProgress], None] | None,
) -> tuple[RunResult, bool]:
    """Estimate the planned tasks (dry run), or run them and write the report when every task
    has its record; the result and whether the tasks were run (False for a dry run)."""
    result = RunResult(out_dir, pipeline=session.config.pipeline, runner=runner)
    if dry_run:
        _estimate(result, runner, session)
        return result, False
    try:
        complete = _execute(runner, session, executor, on_progress)
    finally:
        session.emit(on_progress, "tick")
    if complete:
        records = session.client.records()
        note_scoring(_specs(session.config), records)  # the signature's scoring, from records
        result.summary_data = report(runner, records, out_dir)
    return result, True


def _specs(cfg: RunConfig) -> list[Any]:
    """Every model spec of the run's roles (a role holds a spec, a list of them, or None)."""
    out: list[Any] = []
    for value in cfg.model_roles().values():
        out += value if isinstance(value, list) else [value] if value is not None else []
    return out


def _execute(
    runner: Any,
    session: _Session,
    executor: Executor | None,
    on_progress: Callable[[RunProgress], None] | None,
) -> bool:
    """Give every task its record: online calls, or the ``executor`` and then the pipeline's
    own loop over the records it wrote (no call: the engine checks). True when complete."""
    if executor is not None:
        if not executor.execute(runner, session, lambda event: session.emit(on_progress, event)):
            return False
        session.client.retry_errors = False  # the executor settled every task: none is retried
    run_stoppable(session.run_all(runner, on_progress))
    if executor is not None and session.client.calls_made:
        raise JudgekitError(  # a pipeline whose run loop asks for tasks it did not list
            f"{session.client.calls_made} calls were made after the batch answers were "
            "recorded: this pipeline cannot run from batches"
        )
    return True


def _preflight(cfg: RunConfig, on_warning: Callable[[str], None] | None) -> str:
    """Check every role's keys, servers and model names before anything is sent; one line
    saying what was checked.

    Raises:
        JudgekitError: one line per problem (see :mod:`judgekit.llm.preflight`).
    """
    from judgekit.llm.preflight import preflight

    result = preflight(cfg.model_roles(), on_wait=on_warning)
    for note in result.notes:  # parameters a route does not take: not sent (one line each)
        if on_warning is not None:
            on_warning(note)
    routes, servers = len(result.routes), len(result.servers)
    checked = f"{routes} model route{'s' * (routes != 1)}"
    if servers:
        checked += f", {servers} server{'s' * (servers != 1)}"
    return f"{checked} ok ({result.seconds:.2f}s)"


def _estimate(result: RunResult, runner: Any, session: _Session) -> None:
    from judgekit.llm.estimate import dry_run

    result.estimate = dry_run(runner.tasks(), session.runlog, session.cache)
    result.dry_run_note = getattr(runner, "dry_run_note", None)


class _Session:
    """The open parts of one run: its lock, run log, cache and client, and its progress."""

    def __init__(
        self,
        cfg: RunConfig,
        log_dir: Path,
        *,
        no_cache: bool,
        retry_errors: bool,
        on_warning: Callable[[str], None] | None,
    ) -> None:
        from judgekit.llm.client import LLMClient
        from judgekit.runlog import RunLog

        _lock_run_dir(log_dir)
        self.config = cfg
        self.runlog: RunLog = RunLog(log_dir)
        self.cache: ResponseCache | None = None
        if cfg.cache.enabled and not no_cache:
            from judgekit.llm.cache import ResponseCache

            self.cache = ResponseCache(cfg.cache.dir)
        self.progress = RunProgress()
        self._shown = 0.0
        self._listener: Callable[[RunProgress], None] | None = None
        self._on_warning = on_warning
        self.warnings: list[str] = []  # endpoint warnings of this run (judgekit.llm.health)
        self.client: LLMClient = LLMClient(
            self.runlog,
            self.cache,
            on_record=self._on_record,
            retry_errors=retry_errors,
            on_warning=self._warn,
        )

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        if self._on_warning is not None:
            self._on_warning(message)

    def emit(self, listener: Callable[[RunProgress], None] | None, event: Any) -> None:
        if listener is None:
            return
        p, usage = self.progress, self.client.usage
        p.event, p.records = event, len(self.runlog.records)
        p.requests = self.client.calls_made
        p.transient = dict(self.client.transient_failures)
        p.tokens = int(usage.total("tokens_in") + usage.total("tokens_out"))
        p.cost_usd = usage.total("cost_usd")
        p.cost_unknown = int(usage.total("cost_unknown"))
        listener(p)

    def _on_record(self, record: Record) -> None:
        status = self.progress.status
        status[record.status] += 1
        status["cached"] += int(record.cache_hit)
        now = time.monotonic()
        if self._listener is not None and now - self._shown >= _REFRESH_S:
            self._shown = now
            self.emit(self._listener, "record")

    async def run_all(self, runner: Any, listener: Callable[[RunProgress], None] | None) -> None:
        self._listener = listener

        def on_item(_item: Any) -> None:
            self.progress.done += 1
            self.emit(listener, "item")

        async def tick() -> None:
            while True:
                await asyncio.sleep(_TICK_S)
                self.emit(listener, "tick")

        ticker = asyncio.create_task(tick())
        try:
            await runner.run(on_item=on_item)
            self.client.end_checks()  # a small run's endpoint that ignores the schema
            await self.runlog.wait_writable(flush=True)  # the last records, before the report
        finally:
            ticker.cancel()
            await self.client.aclose()

    def fill(self, result: RunResult) -> None:
        result.requests = self.client.calls_made
        result.cache_hits = self.progress.status["cached"]
        result.transient = dict(self.client.transient_failures)
        result.cache_rejected = self.client.cache_rejected
        result.warnings = list(self.warnings)
        if self.cache is not None:
            result.cache_rejected += self.cache.unreadable
            result.cache_pickled = self.cache.pickled
            result.cache_write_errors = self.cache.write_errors
            result.cache_write_error = self.cache.write_error

    def close(self, *, quiet: bool = False) -> None:
        """Close everything; ``quiet``: an error of the run is on its way, so a run log that
        cannot be written does not replace it (its records run again on resume)."""
        self.client.close()
        try:
            self.runlog.close()
        except OutputError:
            if not quiet:
                raise
        finally:
            if self.cache is not None:
                self.cache.close()


def _lock_run_dir(directory: Path) -> None:
    """Hold an exclusive lock on ``DIR/.lock`` for the life of this process, so two runs never
    append to one records.jsonl.

    Raises:
        JudgekitError: another judgekit process holds the lock.
    """
    import fcntl

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ".lock"
    if str(path.resolve()) in _LOCKS:
        return  # this process holds it already (a grid cell run twice)
    # never through a link planted at .lock (O_NOFOLLOW), and never truncated
    handle = os.fdopen(open_regular(path, os.O_WRONLY | os.O_CREAT), "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise JudgekitError(f"another judgekit run is writing to {directory}") from None
    _LOCKS[str(path.resolve())] = handle


def _unlock(directory: Path) -> None:
    handle = _LOCKS.pop(str((directory / ".lock").resolve()), None)
    if handle is not None:
        handle.close()


_LOCKS: dict[str, Any] = {}
