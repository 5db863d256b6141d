"""A label design's ``selection.csv`` travelling with a review campaign.

``review make --selection selection.csv`` builds the pages for exactly the items of the
selection and keeps the file beside ``campaign.json``; ``review import`` writes it, restricted
to the campaign's items, beside ``labels.csv`` in its output folder, so that every imported label
keeps its inclusion probability for ``calibrate estimate --selection``
(:mod:`judgekit.calibration.design`). The file is read and written by
:mod:`judgekit.calibration.design.selection` alone.
"""

from __future__ import annotations

from pathlib import Path

from judgekit.calibration.design.selection import read_selection, write_selection
from judgekit.review.campaign import Campaign

SELECTION_FILE = "selection.csv"


def selection_items(path: Path) -> list[str]:
    """The item ids of a ``selection.csv``, in its order (InputError on a bad file)."""
    return [r.item for r in read_selection(path)]


def keep_with_campaign(selection: Path, campaign_file: Path) -> Path:
    """Copy (checked) ``selection`` beside ``campaign_file``; returns the copy's path."""
    target = campaign_file.parent / SELECTION_FILE
    rows = read_selection(selection)
    if selection.resolve() != target.resolve():
        write_selection(target, rows)
    return target


def carry_to_labels(campaign_path: Path, campaign: Campaign, out: Path) -> Path | None:
    """Write the campaign's selection (its items only) into ``out`` beside the labels; None
    when the campaign was not made from a selection."""
    folder = campaign_path if campaign_path.is_dir() else campaign_path.parent
    source = folder / SELECTION_FILE
    if not source.is_file():
        return None
    ids = set(campaign.by_id())
    target = out / SELECTION_FILE
    write_selection(target, [r for r in read_selection(source) if r.item in ids])
    return target
