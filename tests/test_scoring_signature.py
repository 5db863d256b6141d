"""The signature names the scoring the records actually carry, per judge (issue 32, 6(c)):
``label_probs@topK`` only when every ``ok`` record has ``label_probs``, ``hard`` when none has
(a run resumed from a log whose answers had none included), both with their shares for a mix.
Real classify runs against the fault server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_server import FaultServer
from test_logprobs_runs import answer, logprobs_of, records, write_run

import judgekit
from judgekit.signature import Signature

pytestmark = pytest.mark.timeout(120)


def judge(url: str) -> str:
    spec = f"  model: hosted_vllm/fault-model\n  api_base: {url}\n  logprobs: true\n"
    return spec + "  max_concurrency: 1"


def test_answers_that_lose_their_logprobs_mid_run_are_named_with_their_share(tmp_path) -> None:
    sent: list[int] = []

    def first_two(body: dict, content: str) -> dict | None:
        sent.append(1)
        return logprobs_of(body, content, fragments=False) if len(sent) <= 2 else None

    with FaultServer(answer_fn=answer, logprobs_fn=first_two) as srv:
        result = judgekit.run(write_run(tmp_path, judge(srv.base_url)), out=tmp_path / "out")
    rows = records(tmp_path / "out")
    assert [r["label_probs"] is not None for r in rows] == [True, True, False, False]
    scoring = result.summary_data["signature"]["models"][0]["scoring"]
    assert scoring == "label_probs@top10:2/4+hard:2/4"  # before: "label_probs@top10"
    line = Signature(**result.summary_data["signature"]).format()
    assert "|scoring:label_probs@top10:2/4+hard:2/4|" in line


def test_a_run_resumed_from_hard_records_says_hard(tmp_path: Path) -> None:
    with FaultServer(answer_fn=answer) as srv:  # the server gives no log-probabilities
        config = write_run(tmp_path, judge(srv.base_url))
        first = judgekit.run(config, out=tmp_path / "out")
        again = judgekit.run(config, out=tmp_path / "out")  # every record from the run log
        assert srv.total_requests == 4
    assert first.summary_data["signature"]["models"][0]["scoring"] == "hard"
    assert again.summary_data["signature"]["models"][0]["scoring"] == "hard"  # before: top10
