"""Start-up cost of the command line: ``judgekit --help``, ``judgekit calibrate agreement`` on
a small label file (30 items x 3 raters, no bootstrap) and a 10-item classify run against a
loopback server (``bench/latency_server.py``, 10 ms), each as a fresh process.

Each command runs ``--repeat`` times (median kept). ``--repo DIR`` measures another checkout
(its ``python -m judgekit``, with this interpreter), e.g. an older commit for a before/after.
Usage::

    python bench/startup.py [--repeat 5] [--repo DIR]

Ends with ``startup: help <s> s (target <= 0.5), agreement <s> s (target <= 1.5), classify
10 items <s> s (target <= 2)``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import LatencyServer  # noqa: E402


def timed(repo: Path, args: list[str], repeat: int) -> float:
    """Median wall seconds of ``python -m judgekit ARGS`` run in ``repo``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "judgekit", *args], cwd=repo,
                              capture_output=True, text=True)  # fmt: skip
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"judgekit {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="judgekit-bench-startup-"))
    labels = work / "labels.csv"
    rows = [f"i{i},{r},{['a', 'b', 'c'][(i * 7 + k) % 3]}" for i in range(30)
            for k, r in enumerate(("r1", "r2", "r3"))]  # fmt: skip
    labels.write_text("item,rater,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    items = work / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"r{i}", "text": f"Review {i}: fine."}) + "\n"
                             for i in range(10)), encoding="utf-8")  # fmt: skip
    help_s = timed(args.repo, ["--help"], args.repeat)
    print(f"judgekit --help: {help_s:.2f} s", flush=True)
    agree = ["calibrate", "agreement", str(labels), "--n-resamples", "0"]
    agree_s = timed(args.repo, agree, args.repeat)
    print(f"judgekit calibrate agreement (30 items x 3 raters): {agree_s:.2f} s", flush=True)
    with LatencyServer(0.01) as server:
        runs = []
        for k in range(args.repeat):
            run = ["run", "configs/classify.yaml", "--out", str(work / f"run{k}"), "--no-cache",
                   "--set", "judge.model=hosted_vllm/bench-model",
                   "--set", f"judge.api_base={server.base_url}",
                   "--set", f"classify.items={items}"]  # fmt: skip
            runs.append(timed(args.repo, run, 1))
        run_s = statistics.median(runs)
    print(f"judgekit run (classify, 10 items, loopback server): {run_s:.2f} s", flush=True)
    print(f"startup: help {help_s:.2f} s (target <= 0.5), agreement {agree_s:.2f} s (target "
          f"<= 1.5), classify 10 items {run_s:.2f} s (target <= 2)")  # fmt: skip


if __name__ == "__main__":
    main()
