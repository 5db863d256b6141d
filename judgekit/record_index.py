"""Read-only views ``key -> Record`` over a run log (``judgekit.runlog.RunLog``): records are read
from disk on access, so a view of 100,000 records holds keys, not records."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgekit.runlog import Record, RunLog


class RecordIndex(Mapping[str, "Record"]):
    """Read-only view ``key -> Record`` over a run log (records are read from disk on access).

    Args:
        log: the run log.
        keys: restrict the view to these keys (None = every key in the log).
    """

    def __init__(self, log: RunLog, keys: set[str] | None = None) -> None:
        self._log = log
        self._keys = keys

    def __getitem__(self, key: str) -> Record:
        if self._keys is not None and key not in self._keys:
            raise KeyError(key)
        record = self._log.get(key)
        if record is None:
            raise KeyError(key)
        return record

    def __contains__(self, key: object) -> bool:
        inside = self._keys is None or key in self._keys
        return inside and key in self._log._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._log._index if self._keys is None else list(self._keys))

    def __len__(self) -> int:
        return len(self._log._index if self._keys is None else self._keys)

    def values(self) -> Any:  # streamed in file order: one sequential read, not one per key
        return _Values(self._log, self._keys)

    def add(self, key: str) -> None:
        """Include ``key`` in a restricted view (no-op for a full view)."""
        if self._keys is not None:
            self._keys.add(key)


class _Values:
    """Re-iterable, sized stream of the records of a view, in file order."""

    def __init__(self, log: RunLog, keys: set[str] | None) -> None:
        self._log, self._keys = log, keys

    def __iter__(self) -> Iterator[Record]:
        return self._log.iter_records(self._keys)

    def __len__(self) -> int:
        return len(self._log._index if self._keys is None else self._keys)
