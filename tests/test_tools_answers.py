"""Routes with ``structured_output: tools`` (instructor over litellm; issue 32, 7(e)): an invalid
answer is recorded with the reason judgekit's one reader gives (never instructor's
``<failed_attempts>``), and instructor's retry text never reaches stderr. Against the fault
server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import fault_spec, judge_task, run_tasks
from fault_server import FaultServer

from judgekit.llm.client import LLMClient
from judgekit.runlog import RunLog

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize(
    "fault,reason,raw",
    [("wrong_shape", "schema: valid: Field required", '{"answer": "yes"}'),
     ("malformed", "malformed_json: EOF while parsing", '{"valid": [true, fal')],
)  # fmt: skip
def test_an_invalid_tool_answer_is_recorded_with_its_reason_and_nothing_on_stderr(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], fault: str, reason: str, raw: str
) -> None:
    with FaultServer() as srv:
        spec = fault_spec(srv, structured_output="tools", transport="litellm", max_reasks=1)
        (rec,) = run_tasks(
            LLMClient(RunLog(tmp_path)), judge_task(fault, f"[[fault:{fault}]]", spec)
        )
        assert srv.total_requests == 2  # the answer and one re-ask, nothing retried inside
    assert rec.status == "unscored" and rec.reason.startswith(reason), rec.reason
    assert rec.raw == raw
    err = capfd.readouterr().err
    assert "Max retries exceeded" not in err and "failed_attempts" not in err, err


def test_a_valid_tool_answer_is_ok(tmp_path: Path) -> None:
    with FaultServer() as srv:
        spec = fault_spec(srv, structured_output="tools", transport="litellm")
        (rec,) = run_tasks(LLMClient(RunLog(tmp_path)), judge_task("ok", "", spec))
    assert rec.status == "ok" and len(rec.parsed["valid"]) == 5
