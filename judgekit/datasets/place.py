"""Placing a local copy of a data set's files in the data home (for machines without a
network, and for tests and CI, which lay out the sets from a data folder they hold).

Each file is copied in whole (written to a temporary name, then renamed) and stamped with its
own sha256 and the file it came from; a copy that is not the pinned file (a subset, say, or
any copy of a file without a pinned checksum) is stamped ``official: false`` and shows as
``local copy`` in ``judgekit data list`` and ``verify``, so it is never taken for the official
file.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from judgekit.datasets.home import checked, record, set_folder, write_licence
from judgekit.datasets.registry import DataSet
from judgekit.errors import InputError


def place_copy(dataset: DataSet, sources: Mapping[str, Path], home: Path | None = None) -> Path:
    """Copy ``sources`` (set path -> local file) into the set's folder in ``home`` (default: the
    data home), stamp each file (module doc) and write the set's ``LICENCE.txt``; returns the
    set's folder.

    Raises:
        InputError: a path that is no file of the set (the message lists them), or a source
            that is not a file.
    """
    folder = set_folder(dataset.name, home)
    for path, source in sources.items():
        item = dataset.file(path)
        if not Path(source).is_file():
            raise InputError(source, "file not found (a local copy of data:"
                             f"{dataset.name}/{path})")  # fmt: skip
        target = folder / item.path
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.with_name(f".{target.name}.part")
        shutil.copyfile(source, temp)
        temp.replace(target)
        found = checked(target, str(Path(source).absolute()), item.sha256)
        record(folder, item.path, replace(found, official=found.official is True))
    write_licence(dataset, folder, shown=False)
    return folder
