"""The run engine as a library: ``judgekit.run`` and ``judgekit.load_run`` against a real HTTP
server on 127.0.0.1, resume, revision changes, and inputs checked before the run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_inproc import run_main

import judgekit
from judgekit.config import load_config
from judgekit.errors import InputError
from judgekit.pipelines import get_pipeline
from judgekit.pipelines.base import Runner
from judgekit.summary import ClassifySummary, SpillingSummary

REPO = Path(__file__).resolve().parents[1]
LABELS = ["positive", "negative", "neutral"]


def classify_config(tmp_path: Path, base_url: str, items: Path) -> Path:
    path = tmp_path / "classify.yaml"
    path.write_text(
        f"""pipeline: classify
cache: {{enabled: false}}
judge:
  model: hosted_vllm/fault-model
  name: stub
  api_base: {base_url}
  timeout: 2.0
  max_retries: 2
  retry_max_wait: 0.1
classify:
  items: {items}
  labels: {json.dumps(LABELS)}
""",
        encoding="utf-8",
    )
    return path


def write_items(path: Path, n: int = 10) -> Path:
    lines = [json.dumps({"id": f"r{i}", "text": f"Review {i}: fine rooms."}) for i in range(n)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_run_returns_summary_records_labels_and_files_and_prints_nothing(
    server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = classify_config(tmp_path, server.base_url, write_items(tmp_path / "items.jsonl"))
    events: list[str] = []
    result = judgekit.run(
        config, out=tmp_path / "out", on_progress=lambda p: events.append(p.event)
    )
    assert capsys.readouterr().out == ""  # the engine prints nothing
    assert events[0] == "planned" and events.count("item") == 10 and events[-1] == "tick"
    summary = result.summary
    assert isinstance(summary, ClassifySummary)
    assert (summary.items.planned, summary.items.judged) == (10, 10)
    assert summary.signature.models[0].route == "hosted_vllm/fault-model"
    assert summary.signature.format().startswith("judgekit:0.1.0|pipeline:classify|judge:stub=")
    assert sum(summary.labels["stub"].values()) == 10
    records = result.records
    assert len(records) == 10 and set(records["status"]) == {"ok"}
    assert records["key"].is_unique and {"parsed", "meta", "route"} <= set(records.columns)
    labels = result.labels
    assert labels is not None and list(labels.columns) == ["item", "rater", "label"]
    assert list(labels["item"]) == [f"r{i}" for i in range(10)]
    assert set(labels["label"]) <= set(LABELS)
    assert {"records.jsonl", "summary.json", "labels.csv"} <= set(result.files)
    assert ".lock" not in result.files
    assert result.requests >= 10

    loaded = judgekit.load_run(tmp_path / "out")
    assert loaded.summary_data == result.summary_data and loaded.pipeline == "classify"
    assert loaded.records.equals(records)
    again = judgekit.run(config, out=tmp_path / "out")
    assert again.requests == 0 and again.summary_data["items"] == result.summary_data["items"]


def test_changed_revision_calls_again_instead_of_resuming(server, tmp_path: Path) -> None:
    config = classify_config(tmp_path, server.base_url, write_items(tmp_path / "items.jsonl", 4))
    out = tmp_path / "out"
    judgekit.run(config, ["judge.revision=snapshot-a"], out=out)
    resumed = judgekit.run(config, ["judge.revision=snapshot-a"], out=out)
    assert resumed.requests == 0
    changed = judgekit.run(config, ["judge.revision=snapshot-b"], out=out)
    assert changed.requests >= 4  # new tasks: the old records are not reused
    assert len(changed.records) == 8
    assert changed.summary.signature.models[0].revision == "snapshot-b"


def _keys(config: Path, overrides: list[str]) -> set[str]:
    cfg = load_config(config, overrides)
    runner_cls, _ = get_pipeline(cfg.pipeline)
    runner = runner_cls(cfg, None)
    assert isinstance(runner, Runner)  # the contract of judgekit.pipelines.base
    return {task.key for task in runner.tasks()}


def _pipeline_configs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """A config of every pipeline whose first calls are known in advance, and its role."""
    items = write_items(tmp_path / "items.jsonl", 2)
    mmlu = tmp_path / "mmlu.jsonl"
    mmlu.write_text(
        json.dumps(
            {
                "id": "q1",
                "question": "Capital of France?",
                "choices": ["Paris", "Rome"],
                "answer": "A",
                "language": "en",
            }
        )
        + "\n",  # fmt: skip
        encoding="utf-8",
    )
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "p1", "source": "Hallo.", "english": "Hello."}) + "\n")
    segments = tmp_path / "segments.jsonl"
    segments.write_text(json.dumps({"id": "s1", "source": "你好", "translation": "Hello"}) + "\n")
    model = "{model: hosted_vllm/m, api_base: 'http://127.0.0.1:9/v1'}"
    texts = {
        "classify": f"pipeline: classify\njudge: {model}\nclassify: {{items: {items}, "
        f"labels: [a, b]}}\n",
        "cultural": f"pipeline: cultural\njudge: {model}\ncultural: {{items: [{mmlu}]}}\n",
        "localise": f"pipeline: localise\ngenerator: {model}\nlocalise: {{input: {pairs}, "
        "locales: [deu_Latn_Germany]}\n",
        "errors": f"pipeline: errors\njudge: {model}\nerrors: {{items: {segments}}}\n",
        "spilling": f"pipeline: spilling\ngenerator: {model}\njudge: {model}\n"
        "spilling: {words: [head], languages: [fr]}\n",
    }
    roles = {"localise": "generator", "spilling": "generator"}
    out = {}
    for name, text in texts.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        out[name] = (path, roles.get(name, "judge"))
    return out


def test_a_revision_change_makes_new_task_keys_in_every_pipeline(tmp_path: Path) -> None:
    configs = _pipeline_configs(tmp_path)
    assert set(configs) == {"classify", "cultural", "localise", "errors", "spilling"}
    for name, (path, role) in configs.items():
        old = _keys(path, [f"{role}.revision=r1"])
        new = _keys(path, [f"{role}.revision=r2"])
        assert old and new and not old & new, name
        assert _keys(path, [f"{role}.revision=r1"]) == old, name  # stable otherwise


def test_spilling_judge_revision_renews_the_judge_tasks_only(tmp_path: Path) -> None:
    from fault_server import FaultServer

    with FaultServer() as srv:
        base = [
            "generator.model=hosted_vllm/stub", f"generator.api_base={srv.base_url}",
            "judge.model=hosted_vllm/stub", f"judge.api_base={srv.base_url}",
            "spilling.words=[head]", "spilling.languages=[fr]", "spilling.backcheck=false",
        ]  # fmt: skip
        out = tmp_path / "run"
        spilling = REPO / "configs" / "spilling.yaml"
        first = judgekit.run(spilling, base, out=out, no_cache=True)
        stages = first.records.groupby("stage").size().to_dict()  # read before the rerun
        second = judgekit.run(spilling, [*base, "judge.revision=v2"], out=out, no_cache=True)
    assert stages == {"generate": 1, "judge": 1}
    summary = second.summary
    assert isinstance(summary, SpillingSummary) and summary.items.planned == 1
    assert summary.spilling_rate is not None and 0 <= summary.spilling_rate <= 1
    assert [m.role for m in summary.signature.models] == ["generator", "judge"]
    assert summary.signature.models[1].revision == "v2"
    after = second.records.groupby("stage").size().to_dict()
    assert after == {"generate": 1, "judge": 2}  # the generation resumed, the judgment did not
    assert second.requests == 1


def test_a_bad_items_file_fails_before_the_run_directory_exists(server, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "text": "ok"}\n{"id": "b"}\n', encoding="utf-8")
    config = classify_config(tmp_path, server.base_url, items)
    out = tmp_path / "out"
    with pytest.raises(InputError, match="missing field") as caught:
        judgekit.run(config, out=out)
    assert caught.value.line == 2 and caught.value.field == "text"
    assert not out.exists()  # no .lock, no empty records.jsonl


def test_spilling_without_a_generator_is_one_located_line_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "never"
    proc = run_main("run", "configs/spilling.yaml", "--set", "generator=null", "--out", str(out))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0] == (
        "error: <command line>: field 'generator': --set generator=null: the spilling "
        "pipeline needs a 'generator' model (or a list)"
    )
    assert not out.exists()


def test_load_run_of_a_directory_without_a_summary_is_located(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no summary.json"):
        judgekit.load_run(tmp_path)


@pytest.mark.parametrize(
    ("summary", "message"),
    [(b"[1]", "expected a JSON object"), (b"NaN", "expected a JSON object"),
     (b'{"a": "\xff"}', "not UTF-8"), (b'{"signature": "x"}', "'signature' must be an object")],
)  # fmt: skip
def test_load_run_of_a_malformed_summary_is_located(
    tmp_path: Path, summary: bytes, message: str
) -> None:
    (tmp_path / "summary.json").write_bytes(summary)
    with pytest.raises(InputError, match=message) as err:
        judgekit.load_run(tmp_path)
    assert err.value.path == str(tmp_path / "summary.json")


def test_a_summary_or_labels_of_the_wrong_shape_is_located(tmp_path: Path) -> None:
    sig = {"pipeline": "classify"}
    (tmp_path / "summary.json").write_text(json.dumps({"signature": sig, "items": 5}), "utf-8")
    (tmp_path / "labels.csv").write_text("", encoding="utf-8")
    result = judgekit.load_run(tmp_path)
    with pytest.raises(InputError, match="items") as err:
        result.summary  # noqa: B018 (the property reads and checks the file)
    assert err.value.path == str(tmp_path / "summary.json")
    with pytest.raises(InputError) as err:
        result.labels  # noqa: B018
    assert err.value.path == str(tmp_path / "labels.csv")


def test_a_negative_limit_is_refused_not_read_as_a_slice(tmp_path: Path) -> None:
    # limit=-1 used to run every item but the last (items[:-1]), silently
    with pytest.raises(InputError, match="--limit") as err:
        judgekit.run(REPO / "configs" / "classify.yaml", limit=-1, out=tmp_path, dry_run=True)
    assert err.value.field == "--limit"


def test_one_override_given_as_a_string_is_one_override(tmp_path: Path) -> None:
    config = REPO / "configs" / "classify.yaml"
    one = judgekit.run(config, "classify.task=Tone.", out=tmp_path, dry_run=True)
    listed = judgekit.run(config, ["classify.task=Tone."], out=tmp_path, dry_run=True)
    assert one.estimate is not None and one.estimate.calls == listed.estimate.calls == 12


def test_transient_failures_are_counted_by_kind_and_printed(server, tmp_path: Path) -> None:
    """A run whose requests outnumber its records says why: each attempt that failed
    transiently is counted by kind, in the result and on the console's last line."""
    items = tmp_path / "items.jsonl"
    lines = [json.dumps({"id": f"r{i}", "text": f"[[fault:{'500x1' if i < 3 else 'ok'}]] ok {i}"})
             for i in range(5)]  # fmt: skip
    items.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = classify_config(tmp_path, server.base_url, items)
    result = judgekit.run(config, out=tmp_path / "out")
    assert set(result.records["status"]) == {"ok"} and len(result.records) == 5
    assert result.transient == {"server": 3} and result.requests == 8
    server.reset()  # the server fails each task's first attempt again
    proc = run_main("run", str(config), "--out", str(tmp_path / "again"), "--no-preflight")
    assert proc.returncode == 0, proc.stderr
    assert "requests sent this run 8 (failed: server 3)" in " ".join(proc.stdout.split())
