"""``data:NAME/relative/path``: a file of a registered data set, wherever judgekit takes a file.

``data:NAME/PATH`` is file ``PATH`` of set ``NAME`` (:mod:`judgekit.datasets.registry`),
``data:NAME`` the set's folder with every file, ``data:NAME/FOLDER`` a folder of the set with
the files under it. The files are fetched on first use, checked against their pinned sha256
(:mod:`judgekit.datasets.fetch`) and kept in the data home (``$JUDGEKIT_DATA``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from judgekit.datasets.fetch import Echo, ensure_file, ensure_set
from judgekit.datasets.registry import DataSet, get_set
from judgekit.errors import InputError

SCHEME = "data:"


def is_data_ref(value: str | Path) -> bool:
    """Whether ``value`` is a ``data:`` reference."""
    return str(value).startswith(SCHEME)


def split_ref(ref: str | Path) -> tuple[str, str]:
    """``(NAME, PATH)`` of ``data:NAME/PATH`` (PATH ``""`` for ``data:NAME``).

    Raises:
        InputError: no set name after ``data:``, or a path with ``..``.
    """
    text = str(ref)[len(SCHEME) :].strip("/")
    name, _, path = text.partition("/")
    if not name:
        raise InputError(None, f"{ref}: expected data:NAME/path (`judgekit data list` names them)")
    if ".." in path.split("/"):
        raise InputError(None, f"{ref}: a data set path cannot leave the set's folder ('..')")
    return name, path


def resolve_ref(
    ref: str | Path,
    *,
    registry: Mapping[str, DataSet] | None = None,
    home: Path | None = None,
    echo: Echo | None = None,
) -> Path:
    """The local path of ``data:NAME/PATH`` (a file, or a folder of the set), fetched first
    where needed (module doc).

    Raises:
        InputError: an unknown set (the message lists the known ones), or a path that is no
            file or folder of the set (the message lists the set's files).
        JudgekitError: a download failed or was not the pinned file (see
            :func:`judgekit.datasets.fetch.ensure_file`).
    """
    name, path = split_ref(ref)
    dataset = get_set(name, registry)
    if not path:
        return ensure_set(dataset, home=home, echo=echo)
    if any(f.path == path for f in dataset.files):
        return ensure_file(dataset, path, home=home, echo=echo)
    return ensure_set(dataset, path, home=home, echo=echo)  # a folder, or raises
