"""judgekit outside its own checkout: shipped files read as package data, a config's relative
paths read from its folder, ``judgekit init``, ``python -m judgekit``, and the methods' public
data read by name (``data:NAME/path``) from a data home laid out from ../shared/data."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgekit.bundled import bundled_dir
from judgekit.bundled.examples import example_files, write_examples
from judgekit.cli import app
from judgekit.config import load_config
from judgekit.data import resolve_path, rubric_path
from judgekit.errors import InputError
from judgekit.lexicon.store import dictionaries_dir
from judgekit.pipelines.classify import ClassifyOptions
from judgekit.pipelines.pairwise import PairwiseOptions
from judgekit.prompts import PROMPTS_DIR, load_prompt

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "judgekit"


def test_no_module_reads_a_path_beside_the_source_tree():
    """Shipped files come through importlib.resources (judgekit.bundled) only."""
    pattern = re.compile(r"__file__\)?\.(resolve\(\)\.)?parents?\b|REPO_ROOT")
    found = [
        f"{p.relative_to(REPO)}:{n}"
        for p in PACKAGE.rglob("*.py")
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []


def test_prompts_rubrics_and_dictionaries_are_package_data():
    assert bundled_dir("prompts") == PROMPTS_DIR
    assert load_prompt("classify/default").path.parent == bundled_dir("prompts") / "classify"
    assert (
        rubric_path("cultural_sensitivity") == bundled_dir("rubrics") / "cultural_sensitivity.yaml"
    )
    assert dictionaries_dir() == bundled_dir("dictionaries")
    assert (dictionaries_dir() / "words.txt").is_file()
    for kind in ("prompts", "rubrics", "dictionaries", "configs"):
        assert bundled_dir(kind).parent == PACKAGE / "bundled"


def test_a_configs_relative_paths_are_read_from_its_folder(tmp_path, monkeypatch):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "items.jsonl").write_text('{"id": "1", "text": "fine"}\n', encoding="utf-8")
    config = folder / "run.yaml"
    config.write_text(
        "pipeline: classify\njudge:\n  model: local/smollm2-135m\nclassify:\n"
        "  items: items.jsonl\n  labels: [a, b]\n  task: t\n",
        encoding="utf-8",
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    options = load_config(config).options("classify", ClassifyOptions)
    assert options.items == folder / "items.jsonl"
    # the working directory is the second place looked in
    (elsewhere / "mine.jsonl").write_text('{"id": "1", "text": "x"}\n', encoding="utf-8")
    cfg = load_config(config, ["classify.items=mine.jsonl"])
    assert cfg.options("classify", ClassifyOptions).items == Path("mine.jsonl")
    # in neither: one error naming the file, the line, the key and both places
    (folder / "items.jsonl").unlink()
    with pytest.raises(InputError) as err:
        load_config(config).options("classify", ClassifyOptions)
    message = str(err.value)
    assert message.startswith(f"{config}:5: field 'classify.items': not found (looked for ")
    assert str(folder / "items.jsonl") in message and str(elsewhere / "items.jsonl") in message


def test_resolve_path_never_falls_back_to_the_install(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="not found"):
        resolve_path("prompts/classify/examples.jsonl")  # in the repository, not here


def test_init_writes_configs_that_run_from_any_folder(tmp_path, monkeypatch):
    written, kept = write_examples(tmp_path / "work")
    names = {p.relative_to(tmp_path / "work").as_posix() for p in written}
    assert kept == [] and names == set(example_files())
    assert {"configs/classify.yaml", "prompts/classify/examples.jsonl",
            "prompts/pairwise/llmbar/LICENSE"} <= names  # fmt: skip
    monkeypatch.chdir(tmp_path)
    classify = load_config(tmp_path / "work/configs/classify.yaml")
    items = classify.options("classify", ClassifyOptions).items
    assert items.resolve() == (tmp_path / "work/prompts/classify/examples.jsonl").resolve()
    pairwise = load_config(tmp_path / "work/configs/pairwise.yaml")
    published = pairwise.options("pairwise", PairwiseOptions).published
    assert published is not None and published.is_file()
    # a second init keeps what is there, unless --force
    result = CliRunner().invoke(app, ["init", str(tmp_path / "work")])
    assert result.exit_code == 0 and f"{len(names)} file(s) already there, kept" in result.stdout
    forced = CliRunner().invoke(app, ["init", str(tmp_path / "work"), "--force"])
    assert forced.stdout.count("wrote ") == len(names)


def test_python_m_judgekit_runs_from_another_folder(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "judgekit", "data", "path", "nope"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: <command line>: unknown data set 'nope' (known: ")
    assert "Traceback" not in proc.stderr


def test_wmt23_gemba_system_pearson_by_name(judgekit_data):
    """The README's reproduction row, from the data set by name (no path to the data)."""
    d = "data:wmt23-mtme"
    gemba = f"{d}/{{lp}}.GEMBA-MQM-src"
    result = CliRunner().invoke(app, [
        "calibrate", "compare", "--lp", "en-de,zh-en", "--level", "system", "--all-systems",
        "--n-resamples", "0", "--permutations", "0", "--json",
        "--human", f"{d}/{{lp}}.mqm.seg.score.tsv,{d}/{{lp}}.mqm.sys.score.tsv",
        "--judge", f"GEMBA={gemba}.seg.score.tsv,{gemba}.sys.score.tsv",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    pearson = {r["facet"]: r["value"] for r in rows if r["statistic"] == "pearson"}
    assert pearson["en-de"] == pytest.approx(0.9885, abs=5e-5)
    assert pearson["zh-en"] == pytest.approx(0.9819, abs=5e-5)


def test_ntrex128_pairs_and_the_ted_sample_by_name(judgekit_data):
    from judgekit.data.testsets import ntrex128_manifest
    from judgekit.pipelines.error_typing import ErrorsOptions, load_items

    manifest = ntrex128_manifest()  # data:ntrex128
    fra_ca = manifest.testsets["fra-CA"]
    assert fra_ca.original == "fra" and fra_ca.reference.parent == judgekit_data / "ntrex128"
    config = load_config(REPO / "configs/errors-ted.yaml")
    items = load_items(config.options("errors", ErrorsOptions))  # data:mqm-ted/mqm_ted_zhen.tsv
    assert len(items) == 24 and {i.system for i in items} == {"refB", "DIDI-NLP", "Online-W", "ref"}
