"""Warm rerun of 10,000 cached judgments vs the cold run that filled the cache.

The cold run sends 10,000 judge calls through ``LLMClient`` (256 in flight, records and cache
on) to a loopback server answering after 50 ms; the warm run runs the same tasks into a new
run directory with the same cache: every answer comes from the cache and no call is made
(each task still gets its validated record written). For reference, a rerun into the cold
run's own directory (a resume: every task already recorded) is timed too. Both
run in one process pinned to one core (the server has the other), in rounds (median kept).
Usage::

    python bench/cache.py [--n 10000] [--rounds 3] [--latency 0.05]

Ends with ``cache: <cold/warm>x (target >= 50)``.
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
    print(f"cache: {statistics.median(ratios):.0f}x (target >= 50)")


if __name__ == "__main__":
    main()
