"""The one YAML reader of judgekit's configs, grids and rubrics: values are what was written.

PyYAML's ``safe_load`` reads YAML 1.1, where ``2024-05-01`` is a date and ``no``, ``off``,
``yes``, ``on`` are booleans. A date is not JSON, so an Azure route's
``extra: {api_version: 2024-05-01}`` ended in a traceback when the config's signature was
written, and ``no`` in a free-form field would reach a provider as ``False``. :func:`load_yaml`
reads YAML 1.2's core schema for these instead:

* a date or time (``2024-05-01``, ``2001-12-14t21:59:43.10-05:00``) is the text written;
* only ``true`` and ``false`` (``True``, ``TRUE``, ...) are booleans; ``yes``, ``no``, ``on``,
  ``off``, ``y`` and ``n`` are text. A boolean field still reads them, as pydantic does
  (``backcheck: no`` is False); a text field keeps them as written.

Numbers, null, lists and mappings are read as ``safe_load`` reads them, except that every
number must be finite: ``.nan``, ``.inf``, ``1e400`` (a float that overflows) and an integer
too large for a float are refused with :class:`NotFinite`, which names the line and the field
(``rules[0].at_least``, ``tune.fractions[0]``); :func:`yaml_input_error` turns it, or any YAML
error, into the :class:`~judgekit.errors.InputError` a reader raises. A NaN bound passed every
gate check, and a NaN split fraction crashed ``calibrate tune`` after all its model calls.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml

from judgekit.errors import InputError

_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_BOOL = "tag:yaml.org,2002:bool"


class TextLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` without implicit dates, and with YAML 1.2's booleans only."""


TextLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_TIMESTAMP, _BOOL)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
TextLoader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_yaml(text: str) -> Any:
    """The YAML document ``text``, dates and yes/no/on/off kept as text (module doc).

    Raises:
        yaml.YAMLError: not valid YAML (the caller locates it by its ``problem_mark``).
    """
    loader = TextLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_finite(loader, node, "")
        return loader.construct_document(node)
    finally:
        loader.dispose()


class NotFinite(yaml.MarkedYAMLError):
    """A number in a YAML document that is not a finite float (NaN, infinite, overflowing).

    Attributes:
        field: where it is, as ``key.sub[index]`` from the top of the document.
        problem_mark: its position (``line`` is 0-based, as PyYAML's marks are).
    """

    def __init__(self, node: yaml.Node, field: str) -> None:
        super().__init__(problem=f"must be a finite number, got {node.value!r}",
                         problem_mark=node.start_mark)  # fmt: skip
        self.field = field


def _check_finite(loader: TextLoader, node: yaml.Node, field: str) -> None:
    """Raise :class:`NotFinite` at the first number under ``node`` that is not finite."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
            _check_finite(loader, value, f"{field}.{name}" if field else name)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _check_finite(loader, item, f"{field}[{i}]")
    elif isinstance(node, yaml.ScalarNode) and node.tag.endswith((":float", ":int")):
        try:
            ok = math.isfinite(float(loader.construct_object(node)))
        except (OverflowError, ValueError):
            ok = False
        if not ok:
            raise NotFinite(node, field or "(document)")


def yaml_input_error(path: str | Path, exc: yaml.YAMLError, what: str = "YAML") -> InputError:
    """The :class:`InputError` for a YAML error in ``path``: line (1-based) and, for
    :class:`NotFinite`, the field and what was written; else ``not valid <what>: ...``."""
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    if isinstance(exc, NotFinite):
        return InputError(path, str(exc.problem), line=line, field=exc.field)
    return InputError(path, f"not valid {what}: {exc}", line=line)
