"""The one file hash: SHA-256 of a file's bytes, read in 1 MiB blocks.

Every module that records or compares a file's identity (run signatures, item files, label
files, data-set checksums, batch manifests, SentencePiece models) calls :func:`file_sha256`;
``tests/test_imports.py`` keeps file hashing out of other folders.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

BLOCK = 1 << 20


def file_sha256(path: str | Path, digits: int = 64) -> str:
    """The SHA-256 of the file's bytes as lowercase hex.

    Args:
        path: a regular file.
        digits: how many leading hex digits to return (1-64); the stored hashes of run
            signatures use 16, data-set checksums and label files 64.

    Raises:
        OSError: the file cannot be read (``FileNotFoundError`` when it is not there).
        ValueError: ``digits`` outside 1-64.
    """
    if not 1 <= digits <= 64:
        raise ValueError(f"digits must be 1-64, got {digits}")
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()[:digits]
