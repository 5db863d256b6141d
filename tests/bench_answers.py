"""The loopback servers' shared answer logic, from ``bench/`` (loaded by path: ``bench/`` is not
on ``sys.path`` in tests).

``bench/schema_instance.py`` (deterministic instances of JSON schemas), ``bench/chat_answers.py``
(request parsing and response building) and ``bench/latency_server.py`` (the aiohttp serving
plumbing) are loaded in that order, each under its own name in ``sys.modules``, so that their
imports of one another find the loaded module. ``tests/fault_server.py`` answers through them.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(name: str, marker: str) -> ModuleType:
    """Import ``bench/<name>.py`` by its path (once; ``marker`` is an attribute it defines)."""
    module = sys.modules.get(name)
    if module is not None and hasattr(module, marker):
        return module
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None, name
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


load_bench("schema_instance", "schema_instance")
answers = load_bench("chat_answers", "correct_content")
serving = load_bench("latency_server", "run_cli_server")

SchemaError = answers.SchemaError
OutputSpec = answers.OutputSpec
schema_instance = answers.schema_instance
output_spec = answers.output_spec
message_hash = answers.message_hash
last_user_text = answers.last_user_text
correct_content = answers.correct_content

__all__ = [
    "OutputSpec",
    "SchemaError",
    "answers",
    "correct_content",
    "last_user_text",
    "message_hash",
    "output_spec",
    "schema_instance",
    "serving",
]
