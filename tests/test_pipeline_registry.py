"""A pipeline is one registry entry: runner, report writer, console printer, viewer profile and
options model together, every part there and of its kind."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest
from pydantic import BaseModel

from judgekit.pipelines import (
    PIPELINES,
    Pipeline,
    _load,
    get_few_shot,
    get_options,
    get_pipeline,
    get_printer,
    get_profile,
)
from judgekit.pipelines.base import Runner
from judgekit.view.headline import items_rows
from judgekit.view.profiles import GENERIC, Profile, profile

PARTS = {f.name for f in fields(Pipeline)} - {"few_shot"}  # few_shot: optional


def test_every_part_is_named() -> None:
    assert {"runner", "report", "printer", "profile", "options"} == PARTS
    assert {f.name for f in fields(Pipeline)} == PARTS | {"few_shot"}
    assert set(PIPELINES) == {"classify", "spilling", "cultural", "localise", "pairwise", "errors"}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_every_entry_has_every_part(name: str) -> None:
    entry = PIPELINES[name]
    assert set(entry.parts()) - {"few_shot"} == PARTS and all(entry.parts().values())
    loaded = {part: _load(path) for part, path in entry.parts().items()}
    if "few_shot" in loaded:  # a declared capability: its option exists in the options model
        section, option = loaded["few_shot"].key.split(".")
        assert section == name and option in loaded["options"].model_fields
        assert get_few_shot(name) is loaded["few_shot"]
    else:
        assert get_few_shot(name) is None
    runner = loaded["runner"]
    assert inspect.isclass(runner)
    for method in ("plan", "tasks", "run"):  # the Runner protocol, tasks() included
        assert callable(getattr(runner, method, None)), (name, method)
    assert {"plan", "tasks", "run"} <= set(dir(Runner))
    assert inspect.iscoroutinefunction(runner.run)
    assert list(inspect.signature(loaded["report"]).parameters)[:3] == ["run", "records", "out_dir"]
    assert len(inspect.signature(loaded["printer"]).parameters) >= 3
    assert isinstance(loaded["profile"], Profile) and loaded["profile"] is not GENERIC
    assert get_pipeline(name) == (runner, loaded["report"])
    assert get_printer(name) is loaded["printer"] and get_profile(name) is loaded["profile"]
    assert profile(name) is loaded["profile"]
    assert issubclass(loaded["options"], BaseModel) and get_options(name) is loaded["options"]
    # the profile is the pipeline's whole view: its own headline and detail-pane context
    assert loaded["profile"].headline is not items_rows, name
    assert loaded["profile"].extras is not GENERIC.extras, name
    assert callable(loaded["profile"].headline) and callable(loaded["profile"].extras)


def test_the_viewer_has_no_pipeline_branches() -> None:
    from pathlib import Path

    import judgekit.view

    for path in Path(judgekit.view.__file__).parent.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for name in PIPELINES:
            assert f'pipeline == "{name}"' not in text, (path.name, name)


def test_an_unknown_pipeline_has_the_generic_profile() -> None:
    assert get_printer("nope") is None and get_profile("nope") is None
    assert get_options("nope") is None
    assert profile("nope") is GENERIC
