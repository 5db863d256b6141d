"""An endpoint that starts refusing mid-run (a key revoked: 401; vLLM restarted with another
served name: 404) stops the run at any point, not only before its first answer: one line naming
the endpoint, the status and the provider's message, exit non-zero, nothing more sent; a rerun
once it is fixed completes the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_inproc import run_main
from fault_process import FaultServerProcess
from fault_server import FaultServer

import judgekit
from judgekit.errors import JudgekitError
from judgekit.llm.errors import EndpointError
from judgekit.llm.health import STOP_AFTER, STOP_AFTER_ANSWERED, EndpointHealth

pytestmark = pytest.mark.timeout(180)
CONCURRENCY = 16


def test_the_same_refusal_k_times_in_a_row_stops_an_endpoint_that_had_answered() -> None:
    health = EndpointHealth("hosted_vllm/m@127.0.0.1:8000")
    for _ in range(500):
        health.on_success()
    revoked = EndpointError("HTTP 401: invalid api key", status_code=401)
    for _ in range(STOP_AFTER_ANSWERED - 1):
        assert health.on_error(revoked) is None
    health.on_success()  # an answer between: the streak starts again
    for _ in range(STOP_AFTER_ANSWERED - 1):
        assert health.on_error(revoked) is None
    assert health.on_error(EndpointError("HTTP 404: gone", status_code=404)) is None  # not alike
    for _ in range(STOP_AFTER_ANSWERED - 1):
        assert health.on_error(revoked) is None
    verdict = health.on_error(revoked)
    assert verdict == (
        "endpoint hosted_vllm/m@127.0.0.1:8000: authentication refused (HTTP 401, 10 tasks in a "
        "row, after 501 answers): HTTP 401: invalid api key; check the key (api_key_env or "
        "api_key_file). The run stops here; once fixed, run the same command again for the "
        "tasks not sent (add --retry-errors to call the refused ones again)"
    )
    with pytest.raises(JudgekitError) as err:
        health.check()  # nothing more is sent on it
    assert str(err.value) == verdict
    early = EndpointHealth("e")  # before any answer the rule needs 3, as before
    for _ in range(STOP_AFTER - 1):
        assert early.on_error(revoked) is None
    assert "(HTTP 401, 3 tasks in a row, no answer yet)" in (early.on_error(revoked) or "")


def write_run(tmp: Path, url: str, n: int) -> Path:
    items = tmp / "items.jsonl"
    items.write_text(
        "".join(json.dumps({"id": f"it{i:04d}", "text": f"Item {i}: fine."}) + "\n"
                for i in range(n)), encoding="utf-8",
    )  # fmt: skip
    config = tmp / "run.yaml"
    config.write_text(
        f"pipeline: classify\ncache: {{enabled: false}}\n"
        f"judge: {{model: hosted_vllm/fault-model, api_base: {url}, timeout: 30, "
        f"max_concurrency: {CONCURRENCY}}}\n"
        f"classify: {{items: {items}, labels: [positive, negative, neutral]}}\n",
        encoding="utf-8",
    )
    return config


def current(out: Path) -> dict[str, str]:
    """key -> status of the records that count (the last one per key)."""
    lines = (out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["key"]: r["status"] for r in map(json.loads, lines)}


def test_a_key_revoked_after_500_tasks_stops_the_run_and_a_rerun_completes_it(
    tmp_path: Path,
) -> None:
    with FaultServerProcess() as server:
        server.set_phase(500, "401")  # from the 501st request on: 401, as a revoked key
        config, out = write_run(tmp_path, server.base_url, 2000), tmp_path / "out"
        command, env = ("run", str(config), "--out", str(out)), {"COLUMNS": "200"}
        proc = run_main(*command, env=env)  # the installed command's main()
        text = proc.stdout + proc.stderr
        assert proc.returncode == 2 and "Traceback" not in text, text[-3000:]
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, text[-3000:]  # one line: the route, the status, the message
        assert errors[0].startswith(
            f"error: endpoint hosted_vllm/fault-model@127.0.0.1:{server.port}: authentication "
            "refused (HTTP 401, 10 tasks in a row, after 500 answers): "
        ), errors
        assert "injected fault 401" in errors[0]  # the provider's own words
        assert errors[0].endswith(
            "; check the key (api_key_env or api_key_file). The run stops here; once fixed, "
            "run the same command again for the tasks not sent (add --retry-errors to call the "
            "refused ones again)"
        ), errors
        sent = server.stats()["total_requests"]
        status = list(current(out).values())
        assert status.count("ok") == 500  # every answer before the key was revoked
        refused = status.count("error")
        # no request after the verdict: the refusals in a row, and those in flight with them
        assert STOP_AFTER_ANSWERED <= refused <= sent - 500 < STOP_AFTER_ANSWERED + CONCURRENCY
        assert len(status) == 500 + refused  # the tasks not sent are not recorded
        server.set_phase(None, None)  # the key is fixed
        proc = run_main(*command, "--retry-errors", env=env)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
        again = server.stats()["total_requests"] - sent
    final = current(out)
    assert len(final) == 2000 and set(final.values()) == {"ok"}
    assert again == 1500  # the rest, each task called once


def test_a_vllm_restarted_with_another_served_name_stops_the_run_at_any_point(
    tmp_path: Path,
) -> None:
    answers = []

    def rename_after_500(body: dict) -> None:  # vLLM restarted with another name
        answers.append(1)
        if len(answers) == 500:
            srv.served_models = ["judge-v2"]

    with FaultServer(answer_fn=rename_after_500) as srv:
        config, out = write_run(tmp_path, srv.base_url, 1000), tmp_path / "out"
        with pytest.raises(JudgekitError) as err:
            judgekit.run(config, out=out)
        sent = srv.total_requests
    assert str(err.value).startswith(
        f"endpoint hosted_vllm/fault-model@127.0.0.1:{srv.port}: model not found (HTTP 404, 10 "
        "tasks in a row, after 500 answers): "
    )
    assert "The model `fault-model` does not exist." in str(err.value)
    status = list(current(out).values())
    assert status.count("ok") == 500 and sent - 500 < STOP_AFTER_ANSWERED + CONCURRENCY
