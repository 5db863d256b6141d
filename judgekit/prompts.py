"""Prompt templates from ``prompts/``: rendered strictly, each with a content hash.

A template is a text file with ``$name`` placeholders (Python ``string.Template``; write ``$$``
for a literal dollar). Rendering fails when a placeholder has no value, so a prompt is never sent
half-filled. The id of ``prompts/spilling/judge.default.txt`` is ``spilling/judge.default``.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from judgekit.bundled import bundled_dir
from judgekit.errors import JudgekitError

PROMPTS_DIR = bundled_dir("prompts")  # the shipped prompts (package data)


@dataclass(frozen=True)
class Prompt:
    """A loaded template: ``id`` (path under prompts/ without suffix), ``text``, ``hash``
    (first 12 hex digits of the SHA-256 of the text)."""

    id: str
    text: str
    path: Path

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:12]

    def placeholders(self) -> set[str]:
        return {
            m.group("named") or m.group("braced")
            for m in string.Template.pattern.finditer(self.text)
            if m.group("named") or m.group("braced")
        }

    def render(self, **values: object) -> str:
        """Fill every placeholder; values the template does not use are ignored, so prompt
        variants may use a subset of what a pipeline offers.

        Raises:
            JudgekitError: a placeholder has no value.
        """
        missing = self.placeholders() - values.keys()
        if missing:
            raise JudgekitError(f"prompt {self.path}: no value for {sorted(missing)}")
        return string.Template(self.text).substitute({k: str(v) for k, v in values.items()})


@cache
def load_prompt(prompt_id: str, directory: Path | None = None) -> Prompt:
    """Load ``<directory>/<prompt_id>.txt`` (directory defaults to the
    shipped ``prompts/``).

    Raises:
        JudgekitError: no such file (the message lists the prompts available next to it).
    """
    base = directory or PROMPTS_DIR
    path = base / f"{prompt_id}.txt"
    if not path.is_file():
        siblings = sorted(p.stem for p in path.parent.glob("*.txt")) if path.parent.exists() else []
        raise JudgekitError(f"no prompt '{prompt_id}' ({path}); available here: {siblings}")
    return Prompt(id=prompt_id, text=path.read_text(encoding="utf-8"), path=path)


def prompt_variant(prefix: str) -> Callable[[str], str]:
    """A pydantic after-validator for an options field naming a shipped prompt: the value ``v``
    must name ``prompts/<prefix><v>.txt`` (``prefix`` ``spilling/judge.``: variant ``strict`` is
    ``prompts/spilling/judge.strict.txt``), so a config (or a grid's prompt value) naming no
    prompt is refused when it is read, before any call. The validator raises ValueError naming
    the variants there."""

    def check(value: str) -> str:
        path = PROMPTS_DIR / f"{prefix}{value}.txt"
        if not path.is_file():
            stem = prefix.rsplit("/", 1)[-1]
            known = sorted(
                p.stem[len(stem) :]
                for p in path.parent.glob(f"{stem}*.txt")
                if path.parent.is_dir()
            )
            raise ValueError(
                f"no prompt '{value}' (prompts/{prefix}<name>.txt); known: {', '.join(known)}"
            )
        return value

    return check


def fill_placeholders(template: Prompt, values: dict[str, str]) -> Prompt:
    """``template`` with the placeholders named in ``values`` (``$name`` or ``${name}``)
    replaced now, the others left for :meth:`Prompt.render`; a literal ``$`` in a value is
    escaped for that second rendering. The text, hence the hash, holds the values (a rubric
    changed changes the prompt's hash)."""
    import re

    text = template.text
    for name, value in values.items():
        escaped = value.replace("$", "$$")
        text = re.sub(rf"\$(?:{name}\b|\{{{name}\}})", lambda _m, v=escaped: v, text)
    return Prompt(id=template.id, text=text, path=template.path)
