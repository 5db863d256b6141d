"""A judge's labels against the humans': the check every judge-vs-human comparison runs first.

An agreement figure over two label sets that do not meet is wrong and looks right (a
spreadsheet's ``TRUE`` against a judge's ``true`` scores accuracy 0). So ``calibrate judge``,
``calibrate estimate``, ``calibrate grid``, ``view --labels`` and ``audit validate`` (through
:func:`judgekit.calibration.judge.judge_vs_humans` and :func:`align_labels`) check the two label
sets with :func:`check_label_sets` before any figure:

1. both sides' labels are read in their text form (:func:`judgekit.data.vocabulary.
   label_text`: ``TRUE`` is ``true``, ``1.0`` is ``1``, text in NFC); ties (``<tie>``) are left
   out;
2. **case**: a label of one side and a label of the other that differ in case alone
   (``Neutral``, ``neutral``) are one label, the judge's spelling, unless case tells two labels
   of one side apart (a side that has both ``A`` and ``a``: then nothing is folded); a
   :class:`~judgekit.errors.JudgekitWarning` says which labels were folded;
3. **disjoint** sets (no label in common) are one :class:`LabelSetError` naming both sets;
4. **partial** overlap: a warning lists the labels seen on one side only.

A *declared* label set (the task's own: CS/CA, a rubric's values; ``true``/``false`` whenever
every label is a boolean) relaxes 3 and 4: when every label of both sides is in it, a label one
side never gave is a class it did not choose (a judge that answers CA on every item), not a
vocabulary mismatch, so neither the error nor the warning applies.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from judgekit.data.vocabulary import BOOLEANS, label_text
from judgekit.errors import InputError, JudgekitWarning
from judgekit.labels.table import LabelTable

NOT_LABELS = frozenset({"<tie>", "<judge tie>"})  # tie markers: outcomes, not vocabulary


class LabelSetError(InputError):
    """The judge's and the humans' label sets have no label in common (message: both sets)."""


@dataclass(frozen=True)
class LabelOverlap:
    """How a judge's label set meets the humans' (module doc).

    Attributes:
        judge, human: each side's distinct labels (text form, sorted), after case folding.
        common, judge_only, human_only: their intersection and differences.
        folded: human spelling -> the judge's spelling, for labels that differ in case alone.
        declared: every label of both sides is in the declared label set.
        notes: the warnings issued (one line each).
    """

    judge: tuple[str, ...]
    human: tuple[str, ...]
    common: tuple[str, ...]
    judge_only: tuple[str, ...]
    human_only: tuple[str, ...]
    folded: dict[str, str] = field(default_factory=dict)
    declared: bool = False
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": list(self.judge), "human": list(self.human), "common": list(self.common),
            "judge_only": list(self.judge_only), "human_only": list(self.human_only),
            "folded": dict(self.folded), "declared": self.declared, "notes": list(self.notes),
        }  # fmt: skip


def _texts(labels: Iterable[Any]) -> set[str]:
    found = {label_text(v) for v in labels}
    return {t for t in found if t is not None and t not in NOT_LABELS}


def case_folds(reference: Iterable[Any], other: Iterable[Any]) -> dict[str, str]:
    """``other``'s spelling -> ``reference``'s for labels that differ in case alone (rule 2 of
    the module doc); empty when case tells two labels of one side apart."""
    return _case_map(_texts(reference), _texts(other))


def _case_map(judge: set[str], human: set[str]) -> dict[str, str]:
    """human spelling -> judge spelling for labels that differ in case alone; empty when case
    tells two labels of one side apart."""
    folds: list[dict[str, str]] = []
    for side in (judge, human):
        keys: dict[str, str] = {}
        for label in side:
            if keys.setdefault(label.casefold(), label) != label:
                return {}
        folds.append(keys)
    by_key_judge, by_key_human = folds
    return {
        spelling: by_key_judge[key]
        for key, spelling in by_key_human.items()
        if key in by_key_judge and by_key_judge[key] != spelling
    }


def _shown(labels: Iterable[str], limit: int = 12) -> str:
    items = sorted(labels)
    text = ", ".join(repr(x) for x in items[:limit])
    return "{" + text + (f", ... ({len(items)} in all)" if len(items) > limit else "") + "}"


def check_label_sets(
    judge: Iterable[Any],
    human: Iterable[Any],
    *,
    declared: Iterable[Hashable] | None = None,
    judge_name: str = "the judge",
    human_name: str = "the humans",
    source: str | None = None,
    warn: bool = True,
) -> LabelOverlap:
    """Check a judge's labels against the humans' before comparing them (module doc).

    Args:
        judge, human: every label of each side (any form the vocabulary reads; None, NaN and
            tie markers are left out).
        declared: the task's label set, where it has one (CS/CA, a rubric's values).
        judge_name, human_name: how messages name the two sides (``"the judge (run/x)"``).
        source: the file the error is about (the human labels), for :class:`LabelSetError`.
        warn: issue the notes as :class:`~judgekit.errors.JudgekitWarning` (the CLI prints them).

    Returns:
        The overlap, with ``folded`` to apply to the human labels (:func:`align_labels`).

    Raises:
        LabelSetError: the two sets share no label (and are not both inside ``declared``).
    """
    jset, hset = _texts(judge), _texts(human)
    if not jset or not hset:
        return LabelOverlap(tuple(sorted(jset)), tuple(sorted(hset)), (), (), ())
    folded = _case_map(jset, hset)
    hset = {folded.get(h, h) for h in hset}
    known = {t for t in (label_text(d) for d in declared or ()) if t is not None}
    inside = (jset | hset) <= known or (jset | hset) <= set(BOOLEANS)
    common, j_only, h_only = jset & hset, jset - hset, hset - jset
    notes = []
    if folded:
        pairs = "; ".join(
            f"{human_name} {h!r} = {judge_name} {j!r}" for h, j in sorted(folded.items())
        )
        notes.append(f"labels that differ only in case are taken as one label: {pairs}")
    if not common and not inside:
        raise LabelSetError(
            source,
            f"{judge_name} and {human_name} share no label: {judge_name} {_shown(jset)}, "
            f"{human_name} {_shown(hset)}; every figure would compare labels that never match "
            "(labels are compared as judgekit's label vocabulary reads them: true/false for "
            "booleans, 1 = 1.0 = '1', NFC text, case folded where it is the only difference); "
            "relabel one file to the other's labels",
            field="label",
        )
    if (j_only or h_only) and not inside:
        sides = [f"{name} only {_shown(s)}" for name, s in ((judge_name, j_only),
                 (human_name, h_only)) if s]  # fmt: skip
        notes.append(
            f"labels seen on one side only: {'; '.join(sides)} (only {_shown(common)} can "
            "match; a one-sided label counts as a miss in accuracy and kappa, and macro-F1 "
            "averages over every label seen, as scikit-learn does, so a judge-only label is a "
            "class with F1 0; a misspelt label never matches)"
        )
    if warn:
        for note in notes:
            warnings.warn(note, JudgekitWarning, stacklevel=2)
    return LabelOverlap(
        tuple(sorted(jset)), tuple(sorted(hset)), tuple(sorted(common)), tuple(sorted(j_only)),
        tuple(sorted(h_only)), folded, inside, tuple(notes),
    )  # fmt: skip


def fold(value: Any, folded: dict[str, str]) -> Any:
    """``value`` with a human spelling replaced by the judge's (``folded`` of a
    :class:`LabelOverlap`); any other value unchanged."""
    if not folded or value is None:
        return value
    text = label_text(value)
    return folded.get(text, value) if text is not None else value


def align_labels(
    judge: pd.Series,
    humans: LabelTable,
    *,
    declared: Iterable[Hashable] | None = None,
    judge_name: str = "the judge",
    human_name: str | None = None,
    warn: bool = True,
) -> tuple[pd.Series, LabelTable, LabelOverlap]:
    """A judge's labels (item -> label) and the humans' table, checked and case-folded.

    Returns:
        (judge labels, human table with the folded spellings, the overlap); the judge's labels
        are unchanged (its spelling is the one kept).

    Raises:
        LabelSetError: disjoint label sets (:func:`check_label_sets`).
    """
    name = human_name or (f"the humans ({humans.source})" if humans.source else "the humans")
    overlap = check_label_sets(
        judge.to_numpy(), humans.values.ravel(), declared=declared, judge_name=judge_name,
        human_name=name, source=humans.source, warn=warn,
    )  # fmt: skip
    if overlap.folded:
        frame = humans.frame.map(lambda v: fold(v, overlap.folded))
        humans = LabelTable(frame, humans.source)
    return judge, humans, overlap


def without_judge(
    humans: LabelTable, rater: Hashable, *, judge_name: str = "the judge", warn: bool = True
) -> tuple[LabelTable, str | None]:
    """The humans' table without the judge's own rater, and the note saying so.

    A human file that also holds a column named like the judge's rater (the judge's labels
    merged into the humans' file) would score the judge against itself; ``calibrate judge``,
    ``calibrate compare``, the gate and ``view --labels`` leave that rater out of the humans.

    Returns:
        (the table without ``rater``, one line naming the rater left out and why), or
        (``humans`` unchanged, None) when no human rater has that name. With ``warn`` the note is
        also a :class:`~judgekit.errors.JudgekitWarning` (the CLI prints it).
    """
    if rater not in humans.raters:
        return humans, None
    note = (
        f"human rater {str(rater)!r} is left out of the humans for {judge_name}: it is the "
        "judge's own rater name (scored against itself otherwise)"
    )
    if warn:
        warnings.warn(note, JudgekitWarning, stacklevel=2)
    return humans.drop([rater]), note
