"""Seeded, stratified tune / select / test splits with a sealed test set and a looks counter.

The test split is sealed: the SHA-256 of its sorted item ids goes into the run signature, and
every command that reads test labels for a tuned judge records a "look" in ``looks.json`` beside
the run, which every later report prints (a single-use test set; awslabs
calibrated-agent-evaluation keeps its held-out set the same way).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from judgekit.data.jsonfile import write_json

DEFAULT_FRACTIONS = (0.4, 0.3, 0.3)
LOOKS_FILE = "looks.json"


@dataclass(frozen=True)
class Splits:
    """Disjoint item-id lists: ``tune`` (few-shot examples, optimisers), ``select`` (choice) and
    ``test`` (sealed, report only); ``test_hash`` is :func:`test_hash` of ``test``."""

    tune: tuple[str, ...]
    select: tuple[str, ...]
    test: tuple[str, ...]
    seed: int

    @property
    def test_hash(self) -> str:
        return test_hash(self.test)


def test_hash(item_ids: Sequence[str]) -> str:
    """SHA-256 hex digest of the sorted, newline-joined item ids (order does not matter)."""
    return hashlib.sha256("\n".join(sorted(item_ids)).encode("utf-8")).hexdigest()


test_hash.__test__ = False  # not a pytest test when imported into a test module


def allocate(n: int, fractions: Sequence[float]) -> list[int]:
    """Largest-remainder allocation of ``n`` items to the fractions (sums to ``n``)."""
    raw = [f * n for f in fractions]
    counts = [int(np.floor(r)) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: raw[i] - counts[i], reverse=True)
    for i in order[: n - sum(counts)]:
        counts[i] += 1
    return counts


def split_items(
    item_ids: Sequence[str],
    strata: Sequence[str],
    seed: int = 0,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
) -> Splits:
    """Split ``item_ids`` into tune / select / test, stratified by ``strata``.

    ``strata[i]`` is item i's stratum, usually ``f"{language}|{label}"`` (language or ``--by``
    and human label). Within each stratum items are shuffled with ``numpy.random.default_rng(seed)``
    and cut by largest-remainder rounding of ``fractions`` (tune, select, test; positive, sum 1),
    so every stratum is represented in proportion and the same seed gives the same split.

    Raises ValueError on duplicate ids, length mismatch or bad fractions.
    """
    if len(item_ids) != len(strata):
        raise ValueError(f"{len(item_ids)} item ids but {len(strata)} strata")
    if len(set(item_ids)) != len(item_ids):
        raise ValueError("duplicate item ids")
    if len(fractions) != 3 or min(fractions) < 0 or abs(sum(fractions) - 1) > 1e-9:
        raise ValueError(f"fractions must be three non-negative numbers summing to 1: {fractions}")
    groups: dict[str, list[str]] = defaultdict(list)
    for item, stratum in zip(item_ids, strata, strict=True):
        groups[stratum].append(item)
    rng = np.random.default_rng(seed)
    parts: list[list[str]] = [[], [], []]
    for stratum in sorted(groups):
        members = sorted(groups[stratum])
        rng.shuffle(members)
        start = 0
        for part, count in zip(parts, allocate(len(members), fractions), strict=True):
            part.extend(members[start : start + count])
            start += count
    return Splits(tuple(parts[0]), tuple(parts[1]), tuple(parts[2]), seed)


def read_looks(run_dir: Path) -> int:
    """Number of looks at the sealed test labels recorded in ``run_dir/looks.json`` (0 if none)."""
    path = Path(run_dir) / LOOKS_FILE
    if not path.exists():
        return 0
    return int(json.loads(path.read_text(encoding="utf-8"))["looks"])


def record_look(run_dir: Path, hash_: str, command: str) -> int:
    """Count one more look at the test split ``hash_`` by ``command``; returns the new count.

    Raises ValueError when ``run_dir`` already records a different test hash (a resplit).
    """
    path = Path(run_dir) / LOOKS_FILE
    data = {"test_hash": hash_, "looks": 0, "by": []}
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["test_hash"] != hash_:
            raise ValueError(f"{path}: recorded test hash {data['test_hash']} is not {hash_}")
    data["looks"] += 1
    data["by"].append(command)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, data)
    return int(data["looks"])


def few_shot_examples(splits: Splits, k: int, seed: int = 0) -> tuple[str, ...]:
    """``k`` few-shot example item ids drawn (seeded) from the tune split only, so that no
    example ever appears in select or test. Raises ValueError if tune has fewer than ``k``."""
    if k > len(splits.tune):
        raise ValueError(f"{k} few-shot examples asked, tune split has {len(splits.tune)} items")
    rng = np.random.default_rng(seed)
    return tuple(sorted(rng.choice(sorted(splits.tune), size=k, replace=False).tolist()))
