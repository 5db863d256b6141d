"""Run configs: validation errors name the file, line and key; --set overrides any field."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.config import apply_override, load_config
from judgekit.errors import InputError

REPO = Path(__file__).resolve().parents[1]

BASE = """\
pipeline: spilling
name: t
generator:
  model: local/smollm2-135m
judge:
  model: local/smollm2-135m
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_configs_load_and_differ_only_in_model_lines() -> None:
    configs = {name: load_config(REPO / "configs" / f"{name}.yaml") for name in
               ("spilling", "spilling-vllm", "spilling-api")}  # fmt: skip
    assert configs["spilling"].judge.model == "local/smollm2-135m"
    assert configs["spilling-vllm"].judge.model.startswith("hosted_vllm/")
    assert configs["spilling-vllm"].judge.api_base == "http://localhost:8000/v1"
    # the pipeline options are the same in all three
    options = {name: cfg.spilling for name, cfg in configs.items()}
    assert options["spilling"] == options["spilling-vllm"] == options["spilling-api"]


def test_set_swaps_the_judge_in_one_flag(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, BASE), ["judge.model=openai/gpt-4o-mini", "limit=0"])
    assert cfg.judge.model == "openai/gpt-4o-mini"
    assert cfg.judge.strategy() == "json_schema"
    assert cfg.limit == 0
    cfg = load_config(write(tmp_path, BASE), ["judge.temperature=0.7", "spilling.backcheck=false"])
    assert cfg.judge.temperature == 0.7 and cfg.spilling.backcheck is False


def test_unknown_key_names_file_line_and_key(tmp_path: Path) -> None:
    path = write(tmp_path, BASE + "  temprature: 0.5\n")
    with pytest.raises(InputError) as err:
        load_config(path)
    message = str(err.value)
    assert str(path) in message and ":7" in message
    assert "judge.temprature" in message and "unknown key" in message


def test_ill_typed_value_says_what_was_expected(tmp_path: Path) -> None:
    path = write(tmp_path, BASE.replace("name: t", "name: t\nlimit: many"))
    with pytest.raises(InputError) as err:
        load_config(path)
    message = str(err.value)
    assert "limit" in message and "integer" in message and ":3" in message


def test_bad_route_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="litellm route"):
        load_config(write(tmp_path, BASE), ["judge.model=gpt4"])
    with pytest.raises(InputError, match="not found"):
        load_config(tmp_path / "absent.yaml")


def test_set_on_a_list_of_generators_needs_an_index() -> None:
    data = {"generator": [{"model": "local/a"}, {"model": "local/b"}]}
    apply_override(data, "generator.1.model=hosted_vllm/x")
    assert data["generator"][1]["model"] == "hosted_vllm/x"
    with pytest.raises(InputError, match="is a list"):
        apply_override(data, "generator.model=openai/x")
    with pytest.raises(InputError, match="KEY=VALUE"):
        apply_override(data, "judge.model")


def test_strategy_per_backend() -> None:
    from judgekit.llm.spec import ModelSpec

    assert ModelSpec(model="local/smollm2-135m").strategy() == "json_object"
    assert (
        ModelSpec(model="hosted_vllm/Qwen/Qwen3-8B", api_base="http://h:8000/v1").strategy()
        == "json_schema"
    )
    assert ModelSpec(model="anthropic/claude-sonnet-4").strategy() == "tools"
    assert ModelSpec(model="gemini/x", structured_output="prompt").strategy() == "prompt"
    assert ModelSpec(model="local/x").concurrency() == 1
    assert ModelSpec(model="hosted_vllm/x", api_base="http://h:8000/v1").concurrency() == 256


def test_unknown_top_level_key_and_pipeline(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        load_config(write(tmp_path, BASE + "judeg:\n  model: local/x\n"))
    assert "judeg" in str(err.value) and ":7" in str(err.value)
    with pytest.raises(InputError, match="unknown pipeline"):
        load_config(write(tmp_path, BASE.replace("spilling", "nope")))


def test_pipeline_sections_validate_with_file_line_and_key(tmp_path: Path) -> None:
    from pydantic import BaseModel, ConfigDict

    class Opts(BaseModel):
        model_config = ConfigDict(extra="forbid")
        languages: list[str] = ["de"]

    cfg = load_config(write(tmp_path, BASE + "spilling:\n  languages: [de, fr]\n"))
    assert cfg.spilling.languages == ["de", "fr"]
    assert cfg.section("spilling") is cfg.section() is cfg.spilling  # checked once, at load
    assert cfg.options("missing", Opts).languages == ["de"]
    path = write(tmp_path, BASE.replace("spilling", "spilling") + "spilling:\n  langs: [de]\n")
    with pytest.raises(InputError) as err:
        load_config(path)
    assert "spilling.langs" in str(err.value) and ":8" in str(err.value)


def test_repeated_words_or_languages_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="repeated entries"):
        load_config(write(tmp_path, BASE), ["spilling.languages=[de, de]"])
    with pytest.raises(InputError, match="must not be empty"):
        load_config(write(tmp_path, BASE), ["spilling.words=[]"])


def test_set_through_a_list_value_is_an_error_not_a_crash(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a value"):
        load_config(
            write(tmp_path, BASE + "spilling:\n  languages: [de]\n"), ["spilling.languages.0.x=1"]
        )


def test_a_bad_set_value_is_blamed_on_the_command_line(tmp_path: Path) -> None:
    path = write(tmp_path, BASE)
    with pytest.raises(InputError) as err:
        load_config(path, ["judge.temperature=hot"])
    assert err.value.path is None and err.value.field == "judge.temperature"
    assert "--set judge.temperature=hot" in str(err.value) and "more" not in str(err.value)
    with pytest.raises(InputError, match="--set judge.bogus=1: unknown key$"):
        load_config(path, ["judge.bogus=1"])


def test_a_role_that_is_neither_a_spec_nor_a_list(tmp_path: Path) -> None:
    path = write(tmp_path, BASE.replace("judge:\n  model: local/smollm2-135m", "judge: 3"))
    with pytest.raises(InputError) as err:
        load_config(path)
    assert (err.value.path, err.value.line, err.value.field) == (str(path), 5, "judge")
    assert err.value.message == "expected a mapping or a list (got 3)"


def test_set_errors_in_pipeline_sections_and_new_keys_blame_the_command_line(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, BASE)
    with pytest.raises(InputError) as err:
        load_config(path, ["nosuch.x=1"])
    assert err.value.path is None and err.value.field == "nosuch.x"
    with pytest.raises(InputError, match="repeated") as err:
        load_config(path, ["spilling.languages=[de, de]"])
    assert err.value.path is None
    bad = write(
        tmp_path,
        "pipeline: classify\njudge:\n  model: local/smollm2-135m\nclassify:\n  items: i.jsonl\n",
    )
    with pytest.raises(InputError) as err:  # checked when the config loads
        load_config(bad, ["classify.labels=[a, a]"])
    assert err.value.path is None and "--set classify.labels=[a, a]" in str(err.value)


def test_a_set_below_a_bad_file_section_still_blames_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "pipeline: spilling\njudge:\n  model: hosted_vllm/x\n")
    with pytest.raises(InputError) as err:
        load_config(path, ["judge.name=foo"])
    assert (err.value.path, err.value.line, err.value.field) == (str(path), 2, "judge")


def test_models_in_a_list_role_need_distinct_names(tmp_path: Path) -> None:
    two = "generator:\n  - model: local/smollm2-135m\n  - model: local/smollm2-135m\n"
    path = write(tmp_path, BASE.replace("generator:\n  model: local/smollm2-135m\n", two))
    with pytest.raises(InputError, match="distinct names"):
        load_config(path)
    named = two.replace(
        "  - model: local/smollm2-135m\n", "  - model: local/smollm2-135m\n    name: b\n", 1
    )
    load_config(write(tmp_path, BASE.replace("generator:\n  model: local/smollm2-135m\n", named)))
