"""``judgekit init``: the example run configs, written to a folder the user owns.

The shipped ``configs/*.yaml`` are copied to ``DIR/configs/``, with every input file they name
by a relative path inside judgekit's shipped files (``../prompts/classify/examples.jsonl``) copied
to the same place under ``DIR`` (with the ``LICENSE`` and ``SOURCES.md`` beside it), so that the
configs run from ``DIR`` as they do from a clone of the repository. Relative paths in a config
are read from the config's folder (:meth:`judgekit.config.RunConfig.options`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgekit.bundled import bundled_dir
from judgekit.data.atomic import write_bytes
from judgekit.data.yamltext import load_yaml

NOTICES = ("LICENSE", "SOURCES.md")


def example_files() -> dict[str, Path]:
    """Each file ``judgekit init`` writes: its path under the target folder -> the shipped file."""
    configs = bundled_dir("configs")
    root = configs.parent
    files: dict[str, Path] = {}
    for config in sorted(configs.glob("*.yaml")):
        files[f"configs/{config.name}"] = config
        for value in _strings(load_yaml(config.read_text(encoding="utf-8"))):
            if value.startswith("data:") or Path(value).is_absolute():
                continue
            target = Path(os.path.normpath(configs / value))  # lexical: stay inside the bundle
            if not target.is_file() or not target.is_relative_to(root):
                continue
            files[target.relative_to(root).as_posix()] = target
            for notice in NOTICES:
                if (target.parent / notice).is_file():
                    name = (target.parent / notice).relative_to(root).as_posix()
                    files[name] = target.parent / notice
    return files


def write_examples(folder: Path, *, force: bool = False) -> tuple[list[Path], list[Path]]:
    """Copy :func:`example_files` into ``folder`` (created); returns (written, left as they
    were): a file already there is kept unless ``force``."""
    written, kept = [], []
    for name, source in example_files().items():
        target = folder / name
        if target.exists() and not force:
            kept.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(target, Path(source).read_bytes())  # whole or not at all, never via a link
        written.append(target)
    return written, kept


def _strings(value: Any) -> Iterator[str]:
    """Every string in a loaded YAML document."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
