"""10,000 warm judgments from judgekit's cache vs from litellm's own disk cache.

The cold run sends 10,000 judge calls through ``LLMClient`` (256 in flight, records and cache
on) to a loopback server answering after 50 ms; the warm run runs the same tasks into a new
run directory with the same cache: every answer comes from the cache and no call is made
(each task still gets its validated record written). The baseline is what a user would
otherwise pick: litellm's own disk cache (``litellm.Cache(type="disk")``), filled by the same
10,000 calls through ``litellm.acompletion`` and then answering them again (each answer
validated against the same pydantic schema, 256 in flight). For reference, the cold run and a
rerun into the cold run's own directory (a resume: every task already recorded) are timed too.
Everything runs in one process pinned to one core (the server has the other); judgekit's runs
in rounds (median kept), litellm's once (it is the slow side). Usage::

    python bench/cache.py [--n 10000] [--rounds 3] [--latency 0.05]

Ends with ``cache: <litellm warm / judgekit warm>x (target >= 20), <us> us per warm task``.
litellm's cache hit imports parts of its proxy, which need ``orjson`` and ``soundfile``
(litellm's proxy extras; ``pip install -e '.[bench]'``); without them the baseline is reported
as not measured.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import IN_FLIGHT, Judgment, LatencyServer, messages, pin  # noqa: E402
from judgekit.llm.cache import ResponseCache  # noqa: E402
from judgekit.llm.client import LLMClient, Task  # noqa: E402
from judgekit.llm.spec import ModelSpec  # noqa: E402
from judgekit.prompts import Prompt  # noqa: E402
from judgekit.runlog import Record, RunLog  # noqa: E402

PROMPT = Prompt(id="bench/judge", text="", path=Path("bench"))


def run(tasks: list[Task], out: Path, cache: ResponseCache) -> tuple[float, int, int]:
    """(seconds, calls made, ok records) of one run of ``tasks`` into ``out``."""
    runlog = RunLog(out)
    client = LLMClient(runlog, cache)

    async def go() -> int:
        ok = 0

        def done(task: Task, record: Record) -> None:
            nonlocal ok
            ok += record.status == "ok"

        await client.run_many(tasks, 2 * IN_FLIGHT, done)  # the pipelines' way to run tasks
        await client.aclose()
        return ok

    start = time.perf_counter()
    ok = asyncio.run(go())
    elapsed = time.perf_counter() - start
    client.close()
    runlog.close()
    return elapsed, client.calls_made, ok


def litellm_warm(tasks: list[Task], base_url: str, directory: Path) -> tuple[str, float, float]:
    """(cache type, seconds to fill litellm's cache with ``tasks``, seconds to answer them from
    it), through ``litellm.acompletion(..., caching=True)``, 256 in flight, every answer
    validated. The disk cache where litellm has one; litellm 1.8x and later removed it, and
    then its in-memory cache (``type="local"``) is measured: a faster path than a disk, so the
    ratio is a lower bound of the disk one (and an in-memory cache does not survive a rerun)."""
    import litellm

    kind = "disk"
    try:
        litellm.cache = litellm.Cache(type="disk", disk_cache_dir=str(directory))
    except ValueError:  # "Unsupported cache type 'disk'": the backend was removed
        kind = "local"
        litellm.cache = litellm.Cache(type="local")
    schema = {"type": "json_schema", "json_schema": {"name": "Judgment", "strict": True,
              "schema": Judgment.model_json_schema()}}  # fmt: skip

    async def answer_all() -> float:
        gate = asyncio.Semaphore(IN_FLIGHT)

        async def one(task: Task) -> None:
            async with gate:
                response = await litellm.acompletion(
                    model="hosted_vllm/bench-model", api_base=base_url, api_key="none",
                    messages=task.messages, response_format=schema, caching=True,
                )  # fmt: skip
            Judgment.model_validate_json(response.choices[0].message.content)

        start = time.perf_counter()
        await asyncio.gather(*(one(t) for t in tasks))
        return time.perf_counter() - start

    fill = asyncio.run(answer_all())
    warm = asyncio.run(answer_all())
    litellm.cache = None
    return kind, fill, warm


def baseline(tasks: list[Task], base_url: str, directory: Path, n: int) -> tuple[str, float]:
    """(litellm cache type, its warm seconds; NaN where litellm's cache path cannot run)."""
    try:
        kind, fill, warm = litellm_warm(tasks, base_url, directory)
    except ImportError as exc:  # litellm's cache hit imports extras of its proxy
        print(f"litellm cache baseline not measured: {exc} (litellm imports it on a cache "
              "hit; pip install -e '.[bench]')", flush=True)  # fmt: skip
        return "unavailable", float("nan")
    print(f"litellm {kind} cache: filled in {fill:.1f} s, warm {warm:.2f} s ({n / warm:,.0f}/s, "
          f"{warm / n * 1e6:,.0f} us per task)", flush=True)  # fmt: skip
    return kind, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    pin(0)
    ratios, colds, warms, resumes = [], [], [], []
    with LatencyServer(args.latency) as server:
        spec = ModelSpec(model="hosted_vllm/bench-model", api_base=server.base_url,
                         max_concurrency=IN_FLIGHT)  # fmt: skip
        for round_ in range(args.rounds):
            base = Path(tempfile.mkdtemp(prefix="judgekit-bench-cache-"))
            salt = f"r{round_}-{time.time_ns()}"  # a new cache and new keys every round
            tasks = [Task(f"k{i}", "judge", "judge", spec,
                          [{"role": "user", "content": salt + m["content"]} for m in messages(i)],
                          Judgment, PROMPT) for i in range(args.n)]  # fmt: skip
            cache = ResponseCache(base / "cache")
            cold, cold_calls, cold_ok = run(tasks, base / "cold", cache)
            cache.flush()
            warm, warm_calls, warm_ok = run(tasks, base / "warm", cache)
            resumed, resumed_calls, resumed_ok = run(tasks, base / "cold", cache)
            cache.close()
            assert cold_ok == warm_ok == resumed_ok == args.n and cold_calls == args.n
            assert warm_calls == resumed_calls == 0, (warm_calls, resumed_calls)
            if round_ == 0:
                kind, lite = baseline(tasks, server.base_url, base / "litellm-cache", args.n)
            ratios.append(cold / warm)
            colds.append(cold)
            warms.append(warm)
            resumes.append(cold / resumed)
            print(f"round {round_ + 1}: cold {cold:.2f} s ({args.n / cold:,.0f}/s, "
                  f"{cold_calls} calls), warm {warm:.3f} s ({args.n / warm:,.0f}/s, "
                  f"{warm_calls} calls): {cold / warm:.0f}x; rerun in the same run directory "
                  f"(resume) {resumed:.3f} s: {cold / resumed:.0f}x", flush=True)  # fmt: skip
    print(f"cold {statistics.median(colds):.2f} s, warm {statistics.median(warms):.3f} s "
          f"(medians of {args.rounds}), zero calls when warm; resume of the cold run's "
          f"directory: {statistics.median(resumes):.0f}x")  # fmt: skip
    warm = statistics.median(warms)
    print(f"cold / warm (judgekit): {statistics.median(ratios):.0f}x")
    print(f"cache: {lite / warm:.0f}x (target >= 20; litellm {kind} cache), "
          f"{warm / args.n * 1e6:.0f} us per warm task (target <= 25)")  # fmt: skip


if __name__ == "__main__":
    main()
