"""What of each data set is on this machine, and whether it is still what was checked.

Each file of a set is in one state: ``absent``; ``unchecked`` (there, but never checked: placed
by hand); ``official`` (checked, the pinned file); ``local copy`` (checked, placed from a local
folder, not the pinned file: a subset, say); ``trusted`` (checked, no pinned checksum: trust on
first download); ``changed`` (its bytes are no longer what was checked: found by
:func:`verify`, which then drops the stamp entry so that the next use deletes and fetches it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from judgekit.data.digest import file_sha256
from judgekit.datasets.home import checked, entry, record, set_folder
from judgekit.datasets.registry import DataSet

STATES = ("official", "local copy", "trusted", "unchecked", "changed", "absent")


@dataclass(frozen=True)
class FileState:
    """``path`` in the set, its ``state`` (:data:`STATES`) and a ``detail`` (where it came
    from, or what differs)."""

    path: str
    state: str
    detail: str = ""


def file_states(dataset: DataSet, home: Path | None = None) -> list[FileState]:
    """Each file's state from the stamp and the file's size, without hashing."""
    folder = set_folder(dataset.name, home)
    out = []
    for item in dataset.files:
        target = folder / item.path
        found = entry(folder, item.path)
        if not target.is_file():
            out.append(FileState(item.path, "absent"))
        elif found is None:
            out.append(FileState(item.path, "unchecked"))
        elif target.stat().st_size != found.size:
            out.append(FileState(item.path, "changed", f"{found.size} bytes when checked"))
        else:
            out.append(FileState(item.path, _state(found.official), found.origin))
    return out


def summary(states: list[FileState]) -> str:
    """``"20/20 official"``, ``"3/35: 3 local copy"``, ``"-"`` when none is here."""
    here = [s for s in states if s.state != "absent"]
    if not here:
        return "-"
    counts = Counter(s.state for s in here)
    if len(here) == len(states) and len(counts) == 1:
        return f"{len(here)}/{len(states)} {next(iter(counts))}"
    parts = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    return f"{len(here)}/{len(states)}: {parts}"


def verify(dataset: DataSet, home: Path | None = None) -> list[FileState]:
    """Hash every file of ``dataset`` that is here and compare it with its stamp entry (and
    the pinned sha256): a changed file loses its entry (module doc); an unchecked one equal
    to the pinned file is stamped official."""
    folder = set_folder(dataset.name, home)
    out = []
    for item in dataset.files:
        target = folder / item.path
        found = entry(folder, item.path)
        if not target.is_file():
            out.append(FileState(item.path, "absent"))
            continue
        sha = file_sha256(target)
        if found is None:
            if item.sha256 and sha == item.sha256:
                record(folder, item.path, checked(target, "placed by hand", item.sha256))
                out.append(FileState(item.path, "official", "placed by hand"))
            else:
                out.append(FileState(item.path, "unchecked", f"sha256 {sha}: not the pinned file"))
        elif sha != found.sha256:
            record(folder, item.path, None)
            was = f"sha256 {sha}, {found.sha256} when checked"
            out.append(FileState(item.path, "changed", was))
        else:
            out.append(FileState(item.path, _state(found.official), found.origin))
    return out


def _state(official: bool | None) -> str:
    return {True: "official", False: "local copy", None: "trusted"}[official]
