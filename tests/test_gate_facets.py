"""Gate facets come from the judged items: a classify run keeps its items' fields (``lang``,
``language``) in ``items.jsonl``; each check counts the run's items in its facet value; judged
items without a value are refused (exit 2), never a check no label could decide."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from cli_inproc import Ran, run_main

from judgekit.errors import InputError
from judgekit.gate import run_gate

LANGS = ("de", "fr", "hi")


def classify_run(tmp_path: Path, items: list[dict]) -> Path:
    """A real classify run on the fault server (127.0.0.1) over ``items``."""
    from fault_server import FaultServer

    from judgekit.engine import run

    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    with FaultServer(default_latency=0.0) as srv:
        config = tmp_path / "judge.yaml"
        config.write_text(f"""pipeline: classify
cache: {{dir: {tmp_path / "cache"}}}
judge: {{model: hosted_vllm/fault-model, api_base: {srv.base_url}, timeout: 5, max_retries: 1}}
classify: {{items: {path}, labels: [positive, negative], task: Sentiment.}}
""", encoding="utf-8")  # fmt: skip
        return run(config, out=tmp_path / "run").out_dir


def gate_file(tmp_path: Path, run_dir: Path, human: Path) -> Path:
    rule = {"name": "rate", "judge": str(run_dir), "human": str(human),
            "target": "share:positive", "by": "language", "at_most": 0.9}  # fmt: skip
    path = tmp_path / "gate.yaml"
    path.write_text(yaml.safe_dump({"rules": [rule]}), encoding="utf-8")
    return path


def test_a_classify_runs_items_give_the_facet_and_the_counts(tmp_path: Path):
    items = [{"id": f"t{i:03d}", "text": f"Review {i}: fine.", "lang": LANGS[i % 3],
              "domain": "news"} for i in range(60)]  # fmt: skip
    run_dir = classify_run(tmp_path, items)
    kept = [json.loads(line) for line in (run_dir / "items.jsonl").read_text().splitlines()]
    assert kept[4] == {"id": "t004", "text": "Review 4: fine.", "lang": "fr", "domain": "news"}
    labels = pd.read_csv(run_dir / "labels.csv")
    human = tmp_path / "human.csv"  # labels for the first 30 items, no language column
    labels.head(30).assign(rater="ann").to_csv(human, index=False)
    result = run_gate(gate_file(tmp_path, run_dir, human))
    counts = {c.facet: (c.n_labelled, c.n_items) for c in result.checks}
    assert counts == {"de": (10, 20), "fr": (10, 20), "hi": (10, 20)}


def test_judged_items_without_the_facet_are_refused_naming_the_file(tmp_path: Path):
    items = [{"id": f"t{i:03d}", "text": f"Review {i}: fine.",
              **({"language": " "} if i % 4 == 0 else {"language": LANGS[i % 3]})}
             for i in range(40)]  # fmt: skip
    run_dir = classify_run(tmp_path, items)
    human = tmp_path / "human.csv"
    pd.read_csv(run_dir / "labels.csv").head(20).assign(rater="ann").to_csv(human, index=False)
    gate = gate_file(tmp_path, run_dir, human)
    with pytest.raises(InputError) as err:
        run_gate(gate)
    assert err.value.path == str(run_dir / "items.jsonl") and err.value.field == "language"
    assert "10 of 40 judged items have no 'language'" in err.value.message
    done = run_main("gate", str(gate))
    assert done.returncode == 2 and "items.jsonl: field 'language'" in done.stderr
    assert "<missing>" not in done.stdout + done.stderr and "Traceback" not in done.stderr


def gate_exit(gate: Path) -> Ran:
    """``judgekit gate GATE`` in this process (tests/cli_inproc.py): no new interpreter."""
    return run_main("gate", str(gate))


def labelled_run(tmp_path: Path, items: list[dict], n_human: int = 30) -> Path:
    run_dir = classify_run(tmp_path, items)
    human = tmp_path / "human.csv"
    pd.read_csv(run_dir / "labels.csv").head(n_human).assign(rater="ann").to_csv(human, index=False)
    return gate_file(tmp_path, run_dir, human)


def test_language_codes_are_one_facet_whatever_their_case(tmp_path: Path):
    spellings = {"de": ("de", "DE", " De "), "fr": ("fr", "FR", "fr"), "hi": ("HI", "hi", "hi")}
    items = [{"id": f"t{i:03d}", "text": f"Review {i}: fine.",
              "lang": spellings[LANGS[i % 3]][(i // 3) % 3]} for i in range(60)]  # fmt: skip
    result = run_gate(labelled_run(tmp_path, items))
    counts = {c.facet: (c.n_labelled, c.n_items) for c in result.checks}
    assert counts == {"de": (10, 20), "fr": (10, 20), "hi": (10, 20)}


def test_a_language_that_is_not_text_is_refused_naming_file_line_and_field(tmp_path: Path):
    items = [{"id": f"t{i:03d}", "text": f"Review {i}: fine.",
              "lang": 7 if i == 5 else LANGS[i % 3]} for i in range(30)]  # fmt: skip
    gate = labelled_run(tmp_path, items, 15)
    with pytest.raises(InputError) as err:
        run_gate(gate)
    assert (err.value.field, err.value.line) == ("lang", 6)
    assert err.value.path.endswith("items.jsonl") and "not int 7" in err.value.message
    done = gate_exit(gate)
    assert done.returncode == 2 and "items.jsonl:6: field 'lang'" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_item_whose_language_and_lang_disagree_is_refused_naming_it(tmp_path: Path):
    items = [{"id": f"t{i:03d}", "text": f"Review {i}: fine.", "language": LANGS[i % 3],
              "lang": "fr" if i == 3 else LANGS[i % 3].upper()} for i in range(30)]  # fmt: skip
    gate = labelled_run(tmp_path, items, 15)
    with pytest.raises(InputError) as err:
        run_gate(gate)
    assert (err.value.field, err.value.line) == ("lang", 4)
    assert "item 't003': language is 'de' but lang is 'fr'" in err.value.message
    done = gate_exit(gate)
    assert done.returncode == 2 and "items.jsonl:4: field 'lang'" in done.stderr
