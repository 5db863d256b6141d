"""Records per second through ``judgekit run --backend ray`` against the online client, on the
same stub server in one run.

A classify run of ``--n`` items against the fault-injecting stub (``tests/fault_server.py``, in
its own process, answering every request after ``--latency`` seconds) is made twice, each
against a fresh server: online (this process, the online client's concurrency) and through Ray
Data (a local cluster started by ``ray.init``, ``--replicas`` tasks judging at once; the time
includes Ray's start). The figure is Ray's rate over online's: on one small machine Ray can only
add overhead (start, serialisation, a second process judging); it pays off across nodes. Usage::

    python bench/ray_backend.py [--n 2000] [--replicas 2]

Ends with ``ray backend: <ratio>x of online (...)``. Needs ``pip install 'judgekit[ray]'``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from fault_process import FaultServerProcess  # noqa: E402

from judgekit.batch.ray_run import RayRun  # noqa: E402
from judgekit.engine import run  # noqa: E402


def one_run(base: Path, name: str, n: int, latency: float, executor: RayRun | None) -> float:
    """Seconds of one run of ``n`` items against a fresh stub."""
    items = base / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"it{i}", "text": f"Item {i}: fine."}) + "\n"
                             for i in range(n)), encoding="utf-8")  # fmt: skip
    with FaultServerProcess(default_latency=latency) as server:
        config = base / f"{name}.yaml"
        config.write_text(
            f"pipeline: classify\ncache: {{enabled: false}}\njudge:\n"
            f"  model: hosted_vllm/fault-model\n  api_base: {server.base_url}\n"
            f"  max_concurrency: 64\nclassify:\n  items: {items}\n"
            f"  labels: [positive, negative, neutral]\n  task: Sentiment.\n",
            encoding="utf-8",
        )
        started = time.monotonic()
        run(config, out=base / name, executor=executor)
        return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        online = one_run(base, "online", args.n, args.latency, None)
        ray_s = one_run(base, "ray", args.n, args.latency, RayRun(args.replicas, batch_size=100))
    ratio = online / ray_s
    print(
        f"ray backend: {ratio:.2f}x of online ({args.n / ray_s:.0f} vs {args.n / online:.0f} "
        f"records/s, {args.n} items, {args.replicas} replicas, Ray's start included; loaded "
        "shared machine) (target: same records as online; the ratio is reported, >1x needs "
        "more than one node)"
    )


if __name__ == "__main__":
    main()
