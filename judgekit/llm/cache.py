"""Response cache on diskcache: a hit returns the validated answer without calling the model.

The key covers what changes an answer: route, model revision (if known), messages, generation
parameters, output schema, structured-output strategy and a sample index (so deliberate repeats
for self-consistency are not collapsed). It never covers ``api_base`` (replicas of one model
share entries) nor anything secret.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import diskcache


def default_cache_dir() -> Path:
    """``$JUDGEKIT_CACHE_DIR``, else ``~/.cache/judgekit``."""
    env = os.environ.get("JUDGEKIT_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "judgekit"


def cache_key(
    *,
    route: str,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    schema: dict[str, Any] | None,
    strategy: str,
    sample_index: int = 0,
    revision: str | None = None,
) -> str:
    """SHA-256 hex digest of the canonical JSON of everything that changes an answer."""
    payload = {
        "route": route,
        "revision": revision,
        "messages": messages,
        "params": params,
        "schema": schema,
        "strategy": strategy,
        "sample_index": sample_index,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """A process-safe disk cache of successful answers (diskcache uses SQLite with locking,
    so concurrent runs may share one directory).

    Each value is a dict ``{"raw": str, "parsed": dict, "usage": {...}}``.
    """

    def __init__(self, directory: Path | str | None = None) -> None:
        self.directory = Path(directory) if directory else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self._cache = diskcache.Cache(str(self.directory), size_limit=2**34)

    def get(self, key: str) -> dict[str, Any] | None:
        return self._cache.get(key)

    def set(self, key: str, value: dict[str, Any]) -> None:
        self._cache.set(key, value)

    def stats(self) -> dict[str, Any]:
        """Entries and bytes on disk."""
        return {
            "directory": str(self.directory),
            "entries": len(self._cache),
            "bytes": self._cache.volume(),
        }

    def clear(self) -> int:
        """Remove every entry; returns how many were removed."""
        return self._cache.clear()

    def close(self) -> None:
        self._cache.close()
