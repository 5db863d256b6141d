"""Where data sets live on this machine, and what judgekit knows of each file there.

The data home is ``$JUDGEKIT_DATA`` when set, else the user cache folder that platformdirs
names (``~/.cache/judgekit-data`` on Linux). Each set has a folder ``<home>/<name>/`` holding
its files under their names in the registry, a ``LICENCE.txt`` (the set's licence, source and
citation, written with the first file) and a stamp, ``.judgekit-data.json``, with one entry per
file that was checked: its sha256 and size, where it came from (``origin``: the URL, or the
folder a local copy was placed from), whether it is the official file (its sha256 equals the
pinned one) and when it was checked. A file is used only when its stamp entry is there and its
size still matches (:mod:`judgekit.datasets.fetch`); ``judgekit data verify`` hashes it again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgekit.data.digest import file_sha256
from judgekit.data.jsonfile import write_json
from judgekit.datasets.registry import DataSet
from judgekit.errors import JudgekitError

STAMP = ".judgekit-data.json"
LICENCE_FILE = "LICENCE.txt"


def data_home() -> Path:
    """``$JUDGEKIT_DATA``, else the platform's user cache folder for ``judgekit-data``."""
    env = os.environ.get("JUDGEKIT_DATA")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return platformdirs.user_cache_path("judgekit-data")


def set_folder(name: str, home: Path | None = None) -> Path:
    """``<home>/<name>`` (not created)."""
    return (home or data_home()) / name


@dataclass(frozen=True)
class Entry:
    """What the stamp says of one file: ``sha256``, ``size`` (bytes), ``origin`` (URL or
    folder), ``official`` (equals the pinned file; None when nothing is pinned), ``checked``
    (ISO time, UTC)."""

    sha256: str
    size: int
    origin: str
    official: bool | None
    checked: str


def read_stamp(folder: Path) -> dict[str, Any]:
    """The stamp of a set's folder (``{"files": {}, "licence_shown": False}`` when there is
    none).

    Raises:
        JudgekitError: the stamp is not valid JSON (the message says to delete it).
    """
    path = folder / STAMP
    if not path.is_file():
        return {"files": {}, "licence_shown": False}
    try:
        stamp = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise JudgekitError(f"{path}: damaged (not JSON); delete it and fetch again") from None
    stamp.setdefault("files", {})
    stamp.setdefault("licence_shown", False)
    return stamp


def entry(folder: Path, path: str) -> Entry | None:
    """The stamp entry of file ``path`` in ``folder`` (None when it was never checked)."""
    found = read_stamp(folder)["files"].get(path)
    return Entry(**found) if found else None


def record(folder: Path, path: str, value: Entry | None) -> None:
    """Set (or, with None, drop) the stamp entry of ``path`` (the stamp is rewritten whole)."""
    stamp = read_stamp(folder)
    if value is None:
        stamp["files"].pop(path, None)
    else:
        stamp["files"][path] = value.__dict__
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / STAMP, stamp)


def checked(path: Path, origin: str, pinned: str | None) -> Entry:
    """A fresh stamp entry for the file at ``path`` (hashed now)."""
    sha = file_sha256(path)
    official = None if pinned is None else sha == pinned
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return Entry(sha, path.stat().st_size, origin, official, now)


def licence_text(dataset: DataSet) -> str:
    """The ``LICENCE.txt`` judgekit writes beside a set's files."""
    lines = [
        f"{dataset.name}: {dataset.title}",
        "",
        f"Licence: {dataset.licence} ({dataset.licence_url})",
        f"Source: {dataset.source}",
        f"Cite: {dataset.citation}",
    ]
    if dataset.notes:
        lines.append(f"Notes: {dataset.notes}")
    return "\n".join(lines) + "\n"


def licence_shown(folder: Path) -> bool:
    """Whether the set's licence was already shown (on its first download)."""
    return bool(read_stamp(folder)["licence_shown"])


def write_licence(dataset: DataSet, folder: Path, *, shown: bool) -> Path:
    """Write ``LICENCE.txt`` into ``folder``; ``shown`` marks the licence as printed."""
    from judgekit.data.atomic import write_text

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LICENCE_FILE
    write_text(path, licence_text(dataset))
    if shown:
        stamp = read_stamp(folder)
        stamp["licence_shown"] = True
        write_json(folder / STAMP, stamp)
    return path
