"""``judgekit run CONFIG --backend ray``: the run's tasks judged on a Ray cluster, each recorded
once.

The driver (the ``judgekit run`` process) selects the tasks with no final record, as ``judgekit
batch export`` does (:func:`judgekit.batch.exporter.select_pending`: recorded and cached tasks
are left out), and hands their keys to Ray Data (https://docs.ray.io/en/latest/data/): a dataset
of keys, ``map_batches`` over it, streamed back to the driver as each block ends. Ray does the
placement, the retries of a task whose worker died and the streaming; judgekit has no scheduler
of its own. A worker judges its keys through :mod:`judgekit.batch.ray_worker`, which calls
:func:`judgekit.llm.call.call_task`, the very function an online run calls: retries, re-asks,
validation and label probabilities are the online ones, so the records are an online run's.
With ``--ray-engine vllm`` no worker calls a server: Ray Data LLM's vLLM engine loads the
judge's weights and answers the tasks' request lines, and the driver reads each answer as a
batch answer (:mod:`judgekit.batch.ray_vllm`).

Exactly once: only the driver writes records, through the run log
(:meth:`~judgekit.llm.client.LLMClient.record`), and it writes a key only if the run log has no
final record for it. A block judged twice (its worker killed after some answers, then retried
by Ray) gives its keys twice: the second copy is counted ``duplicates`` and dropped. A driver
killed mid-run leaves the records it wrote; the same command again selects only the tasks
without one.

Multi-node: ``ray start --head`` on one node, ``ray start --address HEAD:6379`` on the others,
then the same ``judgekit run`` on the head (``RAY_ADDRESS`` or ``--ray-address``); see
docs/providers.md.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from judgekit.batch.exporter import select_pending
from judgekit.batch.requests import batch_tasks
from judgekit.errors import InputError, JudgekitError
from judgekit.runlog import Record

ENGINES = ("http", "vllm")


@dataclass
class RayCounts:
    """What a Ray run did.

    Attributes:
        pending: tasks sent to Ray (no final record, no cached answer).
        recorded, cached: tasks left out as recorded already or answered by the cache.
        imported: records written from Ray's output, by status.
        duplicates: answers for a key recorded already (a block Ray ran twice), dropped.
        missing: tasks sent to Ray that came back without a record.
        seconds: wall time of the Ray part (seconds).
    """

    pending: int = 0
    recorded: int = 0
    cached: int = 0
    imported: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    missing: int = 0
    seconds: float = 0.0


class RayRun:
    """The executor of ``judgekit run --backend ray`` (see the module doc).

    Args:
        replicas: Ray tasks judging at once, >= 1 (each runs the online client's concurrency).
        engine: ``http``: each worker calls the run's endpoints over HTTP, as online;
            ``vllm``: Ray Data LLM's vLLM engine loads the judge's weights
            (:mod:`judgekit.batch.ray_vllm`).
        address: the Ray cluster (``ray start``); None: ``RAY_ADDRESS``, else a local cluster.
        batch_size: keys per Ray block (a retried block re-judges at most this many tasks).
        retry_errors: send the tasks recorded ``error`` (no answer) again.
        model: ``vllm``: the weights to load (a folder or Hugging Face id; None: the route's
            model id).
        engine_kwargs: ``vllm``: vLLM engine arguments (``max_model_len``...).

    Attributes:
        counts: what the run did, once executed.
    """

    def __init__(
        self,
        replicas: int = 1,
        *,
        engine: str = "http",
        address: str | None = None,
        batch_size: int = 64,
        retry_errors: bool = False,
        model: str | None = None,
        engine_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if replicas < 1:
            raise InputError(None, f"must be >= 1, got {replicas}", field="--replicas")
        if engine not in ENGINES:
            raise InputError(
                None,
                f"{engine!r} is not an engine: use {' or '.join(ENGINES)}",
                field="--ray-engine",
            )
        self.replicas = replicas
        self.engine = engine
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.batch_size = max(1, batch_size)
        self.retry_errors = retry_errors
        self.model = model
        self.engine_kwargs = dict(engine_kwargs or {})
        self.counts = RayCounts()

    def execute(self, runner: Any, session: Any, emit: Callable[[str], None]) -> bool:
        """Judge the run's pending tasks on Ray and record each once; True when every task of
        the run has its record (the engine then writes the report).

        Raises:
            JudgekitError: ``ray`` is not installed (``pip install 'judgekit[ray]'``), the
                cluster cannot be reached, or a Ray task failed for good.
        """
        started = time.monotonic()
        pending = select_pending(batch_tasks(runner), session, retry_errors=self.retry_errors)
        self.counts.pending, self.counts.cached = pending.requests, pending.cached
        self.counts.recorded = pending.recorded
        keys = {key for group in pending.keys.values() for key in group}
        if keys:
            tasks = {t.key: t for t in batch_tasks(runner) if t.key in keys}
            if self.engine == "vllm":
                self._engine(session, tasks, emit)
            else:
                self._judge(session, tasks, emit)
        self.counts.seconds = time.monotonic() - started
        return self.counts.missing == 0

    def _judge(self, session: Any, tasks: dict[str, Any], emit: Callable[[str], None]) -> None:
        """Stream the ``tasks`` through Ray and record each answer once."""
        from judgekit.batch.ray_worker import judge_batch

        ray = self._connect()
        keys = list(tasks)
        blocks = max(self.replicas, -(-len(keys) // self.batch_size))
        ds = ray.data.from_items([{"key": key} for key in keys], override_num_blocks=blocks)
        ds = ds.map_batches(
            judge_batch,
            batch_size=self.batch_size,
            fn_kwargs={"config": session.config},
            compute=ray.data.TaskPoolStrategy(size=self.replicas),
            num_cpus=1,
            runtime_env={"env_vars": worker_env(session.config)},
        )  # fmt: skip
        written: set[str] = set()
        try:
            for row in ds.iter_rows():
                record = Record.model_validate_json(str(row["record"]))
                self._take(session, tasks, str(row["key"]), record, written)
                emit("record")
        except ray.exceptions.RayError as exc:
            raise JudgekitError(f"the Ray run failed: {exc}") from None
        self.counts.missing = len(set(keys) - written)

    def _engine(self, session: Any, tasks: dict[str, Any], emit: Callable[[str], None]) -> None:
        """Run the ``tasks`` through the vLLM engine on Ray Data and record each answer once,
        read as a batch answer (:mod:`judgekit.batch.ray_vllm`)."""
        from judgekit.batch import ray_vllm
        from judgekit.batch.answer import engine_completion
        from judgekit.batch.importer import result_record
        from judgekit.batch.requests import Requests
        from judgekit.batch.results import BatchResult

        specs = [task.spec for task in tasks.values()]
        ray_vllm.check_routes(specs, self.model)
        model = self.model or specs[0].model_id
        settings = ray_vllm.EngineSettings(model, self.replicas, self.batch_size,
                                           self.engine_kwargs)  # fmt: skip
        rows = ray_vllm.engine_rows(tasks.values(), Requests(session.client.models))
        ray = self._connect()
        written: set[str] = set()
        try:
            for row in ray_vllm.run_engine(rows, settings, model, ray):
                key, task = str(row["key"]), tasks[str(row["key"])]
                error = ray_vllm.inference_error(row)
                body = None if error else engine_completion(row, task.spec.model_id)
                result = BatchResult(key, body, 500 if error else 200, error, "ray-vllm", 0)
                record = result_record(task, result, session, "ray-vllm")
                self._take(session, tasks, key, record, written)
                emit("record")
        except ray.exceptions.RayError as exc:
            raise JudgekitError(f"the Ray run failed: {exc}") from None
        self.counts.missing = len(set(tasks) - written)

    def _connect(self) -> Any:
        """The ``ray`` module, connected to the cluster."""
        ray = _ray()
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
            except (ConnectionError, RuntimeError) as exc:
                raise JudgekitError(f"cannot reach the Ray cluster {self.address}: {exc}") from None
        ray.data.DataContext.get_current().enable_progress_bars = False
        return ray

    def _take(
        self, session: Any, tasks: dict[str, Any], key: str, record: Record, written: set[str]
    ) -> None:
        """Record one answer of Ray's output unless its key has a record (see the module doc);
        an ``ok`` answer is cached as an online answer is."""
        if key in written or (key in session.runlog and not self._retried(session, key)):
            self.counts.duplicates += 1
            return
        session.client.record(record)
        written.add(key)
        self.counts.imported[record.status] += 1
        cache = session.cache
        task = tasks.get(key)
        if cache is not None and task is not None and record.status == "ok":
            state = session.client.models.get(task.spec)
            cache.set(state.cache_key(task), state.cache_entry(record))

    def _retried(self, session: Any, key: str) -> bool:
        """True when the run log's record of ``key`` is an ``error`` sent again."""
        if not self.retry_errors:
            return False
        done = session.runlog.get(key)
        return done is not None and done.status == "error"


def worker_env(config: Any) -> dict[str, str]:
    """The driver's environment variables a worker needs to call the run's models: those the
    config names (``api_key_env``...), the providers' own (``*_API_KEY``, ``*_API_BASE``) and
    judgekit's (``JUDGEKIT_*``). They travel in the job's runtime environment: the cluster sees
    them, as it sees the requests."""
    named: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str) and value in os.environ:
            named.add(value)

    walk(config.model_dump(mode="json"))
    return {
        name: value
        for name, value in os.environ.items()
        if name in named or name.startswith("JUDGEKIT_") or name.endswith(("_API_KEY", "_API_BASE"))
    }


def _ray() -> Any:
    """The ``ray`` module, with Ray Data.

    Raises:
        JudgekitError: ray is not installed.
    """
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise JudgekitError("--backend ray needs Ray Data: pip install 'judgekit[ray]'") from None
    return ray
