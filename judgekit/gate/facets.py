"""The facet value of each judged item of a gate rule (``by: language``...): read from the judged
items first (a run's ``items.jsonl``, a judge file's columns), then the humans' files and the
rule's ``facets`` file (:func:`judgekit.calibration.estimate.facets.item_facets`).

A check is one facet value, so every judged item needs one: an item without a value would make a
check no label could ever decide. :func:`rule_groups` refuses that (exit 2), naming the file the
judged items come from and how many lack the value.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgekit.calibration.estimate import MISSING_FACET, facet_groups
from judgekit.calibration.estimate.facets import ITEMS_FILE, item_facets
from judgekit.errors import InputError
from judgekit.gate.spec import Rule


def judged_items_file(judge: str | Path) -> Path:
    """The file the judged items of ``judge`` come from: a run directory's ``items.jsonl`` (or
    ``labels.csv``), else ``judge`` itself."""
    path = Path(judge)
    if path.is_dir():
        for name in (ITEMS_FILE, "labels.csv"):
            if (path / name).is_file():
                return path / name
    return path


def rule_groups(items: pd.Index, rule: Rule, paths: list[str | Path | None]) -> pd.Series:
    """The facet value (text) of each of ``items`` (the judged items of the rule's figure).

    Raises:
        InputError: ``by`` is not a facet of these files (field ``by``), or some judged items have
            no value (empty or whitespace-only): the judged items' file and how many lack it.
    """
    assert rule.by is not None
    table = item_facets(*paths, rule.facets, by=rule.by)
    groups = facet_groups(items, table, rule.by)
    missing = [str(i) for i in groups.index[groups == MISSING_FACET]]
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise InputError(
            judged_items_file(rule.judge),
            f"rule '{rule.name}': {len(missing)} of {len(groups)} judged items have no "
            f"'{rule.by}' ({shown}); give every judged item a {rule.by} (in the judged items, a "
            "human file or the rule's facets file): a check of items without one could never "
            "be decided",
            field=rule.by,
        )
    return groups
