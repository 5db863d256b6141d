"""The data files that ship inside judgekit: ``prompts/``, ``rubrics/``, ``dictionaries/`` and
the example ``configs/``.

In the repository they stay at the top (``prompts/`` beside ``judgekit/``); this package holds
a link to each, so the wheel carries them as package data and an editable install reads the
repository's own. Code reads them only through :func:`bundled_dir` (``importlib.resources``),
never by a path relative to the source tree. Where judgekit is imported from a zip file they
cannot be read as folders, and :func:`bundled_dir` says so.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from judgekit.errors import JudgekitError

KINDS = ("prompts", "rubrics", "dictionaries", "configs")


def bundled_dir(kind: str) -> Path:
    """The folder of shipped ``kind`` files (one of :data:`KINDS`).

    Raises:
        JudgekitError: ``kind`` is unknown, or judgekit is installed in a way that keeps its
            data files out of the file system (a zip import).
    """
    if kind not in KINDS:
        raise JudgekitError(f"no bundled folder '{kind}' (known: {', '.join(KINDS)})")
    folder = resources.files(__name__) / kind
    if not isinstance(folder, Path) or not folder.is_dir():
        raise JudgekitError(f"judgekit's {kind}/ is not readable as a folder ({folder}); "
                            "install judgekit as files (pip install), not as a zip")  # fmt: skip
    return folder
