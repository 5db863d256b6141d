"""Every benchmark in bench/ still imports: a module the library moved breaks the script at its
first line, long before anyone runs it at scale (``bench/view.py`` once imported
``usage_summary`` from ``judgekit.runlog`` after it moved to ``judgekit.run_usage``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.name != "__init__.py")
# the modules the scripts share (the loopback servers' answer logic too); the others are scripts
HELPERS = {"common.py", "chat_answers.py", "schema_instance.py"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_bench_script_imports(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading the script as a module (its ``main`` guarded by ``__name__``) raises nothing."""
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.syspath_prepend(str(BENCH.parent / "tests"))
    spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    if script.name not in HELPERS:
        assert callable(getattr(module, "main", None)), f"{script.name} has no main()"
