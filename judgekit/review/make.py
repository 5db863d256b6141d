"""``judgekit review make``: a campaign from a run or items file, and one rater's page.

The page goes to ``out`` and the campaign (items, hashes, judge and gold answers) to
``campaign.json`` in the same folder, where the pages of the other raters of the same campaign
go too; ``judgekit review import`` checks the raters' files against it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

from judgekit.data.atomic import write_text
from judgekit.errors import InputError
from judgekit.review.campaign import (
    CAMPAIGN_FILE,
    TASKS,
    Campaign,
    load_gold,
    select_items,
    write_campaign,
)
from judgekit.review.page import build_page, default_guidelines
from judgekit.review.sources import load_source


@dataclass(frozen=True)
class MadePage:
    """What :func:`make_page` wrote: the page, the campaign file, the campaign and its size."""

    page: Path
    campaign_file: Path
    campaign: Campaign
    n_gold: int


def build_campaign(
    source: Path,
    task: str,
    *,
    guidelines: Path | None = None,
    sample: int | None = None,
    seed: int = 0,
    items: list[str] | None = None,
    gold: Path | None = None,
) -> Campaign:
    """The campaign of ``task`` over ``source`` (see :mod:`judgekit.review.sources`).

    Args:
        guidelines: a markdown file (default: the task's built-in guidelines).
        sample, seed: a seeded random sample of that many items (``random.Random(seed)``).
        items: these item ids, in this order (instead of a sample).
        gold: JSONL of ``{"item", "expected"}``: those items are always in the campaign and
            their expected answers stay out of the pages.

    Raises:
        InputError: an unknown task, a bad source or gold file, an id not in the source, both
            ``sample`` and ``items``, or a sample size below 1.
    """
    if task not in TASKS:
        raise InputError(None, f"unknown task '{task}' (use {', '.join(TASKS)})", field="--task")
    if sample is not None and items:
        raise InputError(None, "give --sample or --items, not both", field="--sample")
    if sample is not None and sample < 1:
        raise InputError(None, "must be at least 1", field="--sample")
    found, options = load_source(task, source)
    expected = load_gold(gold) if gold is not None else {}
    chosen = select_items(found, sample=sample, seed=seed, ids=items, keep=list(expected))
    if guidelines is not None and not guidelines.is_file():
        raise InputError(guidelines, "guidelines file not found", field="--guidelines")
    try:
        text = (
            guidelines.read_text(encoding="utf-8") if guidelines is not None
            else default_guidelines(task)
        )  # fmt: skip
    except UnicodeDecodeError as exc:
        raise InputError(guidelines, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    return Campaign(
        task=task, items=chosen, source=str(source), gold=expected, guidelines=text,
        options=options,
    )  # fmt: skip


def _is_page(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(15).lower() == b"<!doctype html>"


def make_page(campaign: Campaign, rater: str, out: Path, *, show_judge: bool = False) -> MadePage:
    """Write ``rater``'s page to ``out`` and add the rater to ``campaign.json`` beside it.

    Raises:
        InputError: an empty rater name, ``campaign.json`` there holds another campaign, or
            ``out`` is an existing file that is not a page (an items file) or campaign.json.
    """
    if not rater.strip():
        raise InputError(None, "the rater name is empty", field="--rater")
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in rater):  # as review import
        raise InputError(None, f"rater name with a tab or line break: {rater!r}", field="--rater")
    if out.name == CAMPAIGN_FILE or (out.is_file() and not _is_page(out)):
        raise InputError(out, "not a page (it would be overwritten): give another -o", field="-o")
    campaign.raters = [rater]
    target = out.parent / CAMPAIGN_FILE
    write_campaign(campaign, target)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, build_page(campaign, rater, show_judge=show_judge))
    return MadePage(out, target, campaign, len(campaign.gold))
