"""Preflight's schema probe (issue 32, 7(f)): one short call finds a server that ignores the
JSON schema; an ``auto`` route then runs with the prompt strategy (validated as ever) and says
so, a route set to ``json_schema`` stops before the run with one line. The mid-run warning
names a server only for answers off the JSON schema sent, never for answers valid under it that
fail a check beyond it (five meanings that are not distinct, a blank text pydantic strips).
Against the fault server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from bench_answers import correct_content, message_hash, output_spec
from cli_subprocess import run_cli
from conftest import fault_spec, run_tasks
from fault_server import FaultServer

from judgekit.llm.client import LLMClient
from judgekit.llm.preflight import preflight
from judgekit.llm.task import Task
from judgekit.pipelines.spilling_schemas import MeaningsAnswer
from judgekit.prompts import Prompt
from judgekit.runlog import RunLog

pytestmark = pytest.mark.timeout(180)
_HINT = "matching this JSON schema:\n"


def ignores_response_format(body: dict) -> str:
    """A model that never sees ``response_format`` but follows a schema given in its prompt."""
    text = str(body["messages"][-1]["content"])
    if _HINT not in text:
        return "Hello! The review reads as positive to me."
    schema = json.loads(text.split(_HINT, 1)[1])
    asked = {"response_format": {"type": "json_schema", "json_schema": {"schema": schema}}}
    seed = int(message_hash(body["messages"]), 16)
    return correct_content(asked, seed, output_spec(asked))


def config(tmp: Path, url: str, strategy: str = "auto") -> Path:
    items = tmp / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{i}", "text": f"review {i}"}) + "\n"
                             for i in range(2)), encoding="utf-8")  # fmt: skip
    path = tmp / "run.yaml"
    path.write_text(
        f"pipeline: classify\ncache: {{enabled: false}}\nout: {tmp / 'runs'}\n"
        f"judge: {{model: hosted_vllm/fault-model, api_base: '{url}', max_retries: 1, "
        f"outage_s: 0, structured_output: {strategy}}}\n"
        f"classify: {{items: {items}, labels: [positive, negative, neutral], task: Sentiment.}}\n",
        encoding="utf-8",
    )
    return path


def test_a_server_ignoring_the_schema_is_found_and_the_run_switches_to_prompt(tmp_path) -> None:
    with FaultServer(answer_fn=ignores_response_format, answer_probes=True) as srv:
        proc = run_cli("run", str(config(tmp_path, srv.base_url)))
        probes, tasks = srv.probes, srv.total_requests
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out  # before: exit 1, 0 of 2 items scored
    (line,) = [x for x in out.splitlines() if "ignores the JSON schema" in x]
    assert "prompt strategy" in line and "Hello!" in line
    assert probes == 1 and tasks == 2  # one short call, then each task once
    (found,) = (tmp_path / "runs").rglob("summary.json")
    assert json.loads(found.read_text())["usage"]["status"]["ok"] == 2


def test_a_route_set_to_json_schema_stops_before_the_run(tmp_path) -> None:
    with FaultServer(answer_fn=ignores_response_format, answer_probes=True) as srv:
        proc = run_cli("run", str(config(tmp_path, srv.base_url, "json_schema")))
        probes, tasks = srv.probes, srv.total_requests
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert "ignores the JSON schema" in out and "structured_output: prompt" in out
    assert "Traceback" not in out and probes == 1 and tasks == 0


def test_a_server_that_follows_the_schema_is_left_as_it_is() -> None:
    with FaultServer() as srv:
        spec = fault_spec(srv)
        result = preflight({"judge": spec})
        assert srv.probes == 1 and srv.total_requests == 0
    assert spec.strategy() == "json_schema"
    assert not [n for n in result.notes if "ignores" in n]


def _meanings(meaning: str, examples: int) -> Callable[[dict], str]:
    item = {"meaning": meaning, "examples": ["x", "y", "z"][:examples]}
    return lambda body: json.dumps({"meanings": [item] * 5})


@pytest.mark.parametrize(
    ("answer_fn", "reason", "blamed"),
    [
        (_meanings("a bank", 3), "not distinct", False),  # a validator's check
        (_meanings("   ", 3), "at least 1 character", False),  # stripped by pydantic only
        (_meanings("a bank", 2), "at least 3 items", True),  # minItems: off the JSON schema
    ],
    ids=["repeated", "blank", "two_examples"],
)
def test_only_answers_off_the_json_schema_blame_the_server(
    tmp_path, answer_fn, reason: str, blamed: bool
) -> None:
    warnings: list[str] = []
    with FaultServer(answer_fn=answer_fn) as srv:
        client = LLMClient(RunLog(tmp_path), on_warning=warnings.append)
        spec = fault_spec(srv, max_reasks=0)
        prompt = Prompt(id="gen", text="", path=tmp_path / "gen.txt")
        tasks = [Task(f"k{i}", "generate", "generator", spec,
                      [{"role": "user", "content": f"word {i}"}], MeaningsAnswer, prompt)
                 for i in range(6)]  # fmt: skip
        records = run_tasks(client, *tasks)
        client.end_checks()
    assert {r.status for r in records} == {"unscored"}
    assert all(reason in (r.reason or "") for r in records), records[0].reason
    said = [w for w in warnings + client.warnings if "does not follow the JSON schema" in w]
    assert bool(said) == blamed, said
