"""Peak memory (RSS) of a 100,000-task run: records are streamed to disk, not held in memory.

Runs the ``classify`` pipeline in a fresh process on a generated 100,000-item file against the
loopback server (cache off, records on), then writes its report (labels.csv, summary.json) from
the records streamed back from disk, and reports the process's peak RSS. Usage::

    python bench/memory.py [--n 100000] [--latency 0]

Ends with ``memory: <MB> MB (target < 400)``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import LatencyServer, pin, run_child  # noqa: E402


def child(base: str, n: int) -> None:
    """The measured run (in its own process, pinned to one core)."""
    from judgekit.config import load_config
    from judgekit.llm.client import LLMClient
    from judgekit.pipelines.classify import ClassifyRun, write_report
    from judgekit.runlog import RunLog

    pin(0)
    work = Path(tempfile.mkdtemp(prefix="judgekit-bench-mem-"))
    items = work / "items.jsonl"
    with items.open("w", encoding="utf-8") as fh:
        for i in range(n):
            text = f"Review {i}: the room was clean, the staff friendly, breakfast cold. " * 3
            fh.write(json.dumps({"id": f"r{i:06d}", "text": text}) + "\n")
    config = work / "run.yaml"
    config.write_text(
        f"pipeline: classify\nout: {work / 'out'}\ncache: {{enabled: false}}\n"
        f"judge: {{model: hosted_vllm/bench-model, api_base: '{base}'}}\n"
        f"classify: {{items: {items}, labels: [positive, negative, neutral]}}\n",
        encoding="utf-8",
    )
    cfg = load_config(config)
    runlog = RunLog(cfg.out_dir())
    client = LLMClient(runlog)
    runner = ClassifyRun(cfg, client)
    start = time.perf_counter()

    async def go() -> None:
        await runner.run()
        await client.aclose()

    asyncio.run(go())
    summary = write_report(runner, client.records(), cfg.out_dir())
    elapsed = time.perf_counter() - start
    client.close()
    runlog.close()
    assert summary["usage"]["calls"] == n and summary["items"]["judged"] == n, summary["items"]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    size = (cfg.out_dir() / "records.jsonl").stat().st_size / 1e6
    print(f"{n} tasks in {elapsed:.1f} s ({n / elapsed:,.0f}/s); records.jsonl {size:.0f} MB",
          file=sys.stderr)  # fmt: skip
    print(f"{peak_mb:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.n)
        return
    with LatencyServer(args.latency) as server:
        peak = float(run_child("memory", "--child", server.base_url, "--n", str(args.n)))
    print(f"peak RSS of a {args.n:,}-task classify run (records on, cache off): {peak:.0f} MB")
    print(f"memory: {peak:.0f} MB (target < 400)")


if __name__ == "__main__":
    main()
