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

Numbers, null, lists and mappings are read as ``safe_load`` reads them.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

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
    return yaml.load(text, Loader=TextLoader)  # noqa: S506 (a SafeLoader subclass)
