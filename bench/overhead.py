"""Structured judgments per second through judgekit vs the bare aiohttp loop and other clients.

Every path sends the same judge calls (a ~300-token prompt, a JSON-schema answer validated with
pydantic) at 256 in flight to the same loopback server answering after 20 ms, from a process
pinned to one core (the server has the other). Paths:

* ``floor``: a bare aiohttp loop (one session, json, pydantic): the most a Python client can do.
* ``judgekit``: ``LLMClient.run`` with records written (cache off), the path every pipeline uses.
* ``instructor``: instructor over ``litellm.acompletion`` (the usual stack for structured calls).
* ``litellm``: ``litellm.acompletion`` + pydantic, for reference.
* ``inspect``: inspect_ai's model API, if inspect_ai is installed (or if
  ``JUDGEKIT_BENCH_INSPECT_PYTHON`` names an interpreter that has it: inspect_ai wants a newer
  openai than the project pins, so it may live in a side venv that sees this one).

Each path runs in its own process, in rounds; ratios are taken within a round and the median
over rounds is reported (robust to a machine whose load drifts). Usage::

    python bench/overhead.py [--rounds 3] [--n 6000] [--n-slow 600]

Ends with ``overhead: <judgekit/floor>x (target >= 0.4)``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import IN_FLIGHT, Judgment, LatencyServer, messages, pin, run_child  # noqa: E402

MODEL = "bench-model"


async def _drive(n: int, one, warmup: int = 200) -> float:
    """Run ``one(i)`` for i < n at IN_FLIGHT in flight (after a warm-up); calls per second."""
    sem = asyncio.Semaphore(IN_FLIGHT)

    async def bounded(i: int) -> None:
        async with sem:
            await one(i)

    await asyncio.gather(*(bounded(-1 - i) for i in range(warmup)))
    start = time.perf_counter()
    await asyncio.gather(*(bounded(i) for i in range(n)))
    return n / (time.perf_counter() - start)


async def floor(base: str, n: int) -> float:
    import aiohttp

    schema = Judgment.model_json_schema()
    fmt = {"type": "json_schema", "json_schema": {"name": "Judgment", "schema": schema}}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one(i: int) -> None:
            body = {"model": MODEL, "messages": messages(i), "response_format": fmt}
            async with session.post(base + "/chat/completions", json=body) as response:
                data = json.loads(await response.read())
            Judgment.model_validate_json(data["choices"][0]["message"]["content"])

        return await _drive(n, one)


async def judgekit(base: str, n: int) -> float:
    from judgekit.llm.client import LLMClient, Task
    from judgekit.llm.spec import ModelSpec
    from judgekit.prompts import Prompt
    from judgekit.runlog import RunLog

    spec = ModelSpec(model=f"hosted_vllm/{MODEL}", api_base=base, max_concurrency=IN_FLIGHT)
    prompt = Prompt(id="bench/judge", text="", path=Path("bench"))
    client = LLMClient(RunLog(tempfile.mkdtemp(prefix="judgekit-bench-")))  # records on

    async def one(i: int) -> None:
        task = Task(f"k{i}", "judge", "judge", spec, messages(i), Judgment, prompt)
        record = await client.run(task)
        assert record.status == "ok", record.reason

    rate = await _drive(n, one)
    client.runlog.close()
    return rate


async def instructor(base: str, n: int) -> float:
    import instructor as inst
    import litellm

    import judgekit.llm  # noqa: F401  (litellm's local price map)

    client = inst.from_litellm(litellm.acompletion, mode=inst.Mode.JSON_SCHEMA)

    async def one(i: int) -> None:
        await client.chat.completions.create(
            model=f"hosted_vllm/{MODEL}", api_base=base, api_key="none", messages=messages(i),
            response_model=Judgment, max_retries=0,
        )  # fmt: skip

    return await _drive(n, one, warmup=50)


async def litellm_path(base: str, n: int) -> float:
    import litellm

    import judgekit.llm  # noqa: F401

    schema = Judgment.model_json_schema()
    fmt = {"type": "json_schema", "json_schema": {"name": "Judgment", "schema": schema}}

    async def one(i: int) -> None:
        response = await litellm.acompletion(
            model=f"hosted_vllm/{MODEL}", api_base=base, api_key="none", messages=messages(i),
            response_format=fmt,
        )  # fmt: skip
        Judgment.model_validate_json(response.choices[0].message.content)

    return await _drive(n, one, warmup=50)


async def inspect(base: str, n: int) -> float:
    from inspect_ai.model import GenerateConfig, ResponseSchema, get_model

    model = get_model(f"openai-api/bench/{MODEL}", base_url=base, api_key="none")
    config = GenerateConfig(
        response_schema=ResponseSchema(name="Judgment", json_schema=Judgment.model_json_schema())
    )

    async def one(i: int) -> None:
        output = await model.generate(messages(i)[0]["content"], config=config)
        Judgment.model_validate_json(output.completion)

    return await _drive(n, one, warmup=50)


PATHS = {"floor": floor, "judgekit": judgekit, "instructor": instructor,
         "litellm": litellm_path, "inspect": inspect}  # fmt: skip
SLOW = {"instructor", "litellm", "inspect"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n", type=int, default=6000, help="calls per fast path")
    parser.add_argument("--n-slow", type=int, default=600, help="calls per slow path")
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--child", choices=sorted(PATHS))
    parser.add_argument("--base")
    args = parser.parse_args()
    if args.child:  # one measurement, in its own pinned process
        pin(0)
        print(f"{asyncio.run(PATHS[args.child](args.base, args.n)):.1f}")
        return
    inspect_python = os.environ.get("JUDGEKIT_BENCH_INSPECT_PYTHON")
    has_inspect = bool(inspect_python) or importlib.util.find_spec("inspect_ai") is not None
    paths = [p for p in PATHS if p != "inspect" or has_inspect]
    if not has_inspect:
        print("inspect: not measured (inspect_ai is not installed)")
    rates: dict[str, list[float]] = {p: [] for p in paths}
    with LatencyServer(args.latency) as server:
        for round_ in range(args.rounds):
            for path in paths:
                n = args.n_slow if path in SLOW else args.n
                python = inspect_python if path == "inspect" else None
                rate = float(run_child("overhead", "--child", path, "--base", server.base_url,
                                       "--n", str(n), python=python))  # fmt: skip
                rates[path].append(rate)
                print(f"round {round_ + 1} {path}: {rate:,.0f} judgments/s", flush=True)
    med = {p: statistics.median(r) for p, r in rates.items()}
    for path, rate in med.items():
        print(f"{path:>10}: {rate:8,.0f} judgments/s (median of {args.rounds})")

    def ratio(a: str, b: str) -> float:  # per round (paths measured minutes apart), then median
        return statistics.median(x / y for x, y in zip(rates[a], rates[b], strict=True))

    print(f"judgekit vs instructor over litellm: {ratio('judgekit', 'instructor'):.1f}x "
          "(target >= 10)")  # fmt: skip
    print(f"overhead: {ratio('judgekit', 'floor'):.2f}x (target >= 0.4)")


if __name__ == "__main__":
    main()
