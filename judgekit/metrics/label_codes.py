"""Labels as category codes: the numeric form the agreement coefficients compute on.

:func:`encode` turns an items x raters table of labels into float category indices (NaN where
a rating is missing) over a fixed, sorted category list, and :class:`CodedLabels` gives the
per-item category counts n_ik that Fleiss (1971), Gwet (2014) and Krippendorff (2011) start
from. A table is encoded once: :func:`encode` given a :class:`CodedLabels` returns it (or the
same codes over other declared categories) without reading the labels again, so every
coefficient of ``calibrate agreement`` computes on one encoding (as sacrebleu extracts a
corpus's statistics once and scores every metric from them).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.errors import JudgekitError
from judgekit.labels.table import LabelData, as_label_table


@dataclass(frozen=True)
class CodedLabels:
    """Labels as category indices.

    Attributes:
        codes: float array, shape (n_items, n_raters); the index of each label in
            ``categories``, NaN where the rating is missing.
        categories: the q categories, in code order.
    """

    codes: np.ndarray
    categories: list[Hashable]
    raters: tuple[Hashable, ...] = ()
    ordered: bool = False

    @property
    def n_raters(self) -> int:
        """Number of raters (columns of ``codes``)."""
        return int(self.codes.shape[1]) if self.codes.ndim == 2 else 0

    def select(self, raters: Sequence[Hashable]) -> CodedLabels:
        """The columns of ``raters`` (names as in ``raters``), items rated by all of them.

        Raises:
            JudgekitError: a rater not in the table.
        """
        names = [str(r) for r in self.raters]
        missing = [r for r in raters if str(r) not in names]
        if missing:
            raise JudgekitError(f"no rater {missing[0]!r} (raters: {', '.join(names)})")
        columns = [names.index(str(r)) for r in raters]
        codes = self.codes[:, columns]
        codes = codes[~np.isnan(codes).any(axis=1)]
        picked = tuple(self.raters[c] for c in columns)
        return CodedLabels(codes, self.categories, picked, self.ordered)

    @property
    def q(self) -> int:
        """Number of categories."""
        return len(self.categories)

    def counts(self) -> np.ndarray:
        """Int array, shape (n_items, q): number of ratings of each category per item."""
        if not self.q:
            return np.zeros((len(self.codes), 0), dtype=int)
        return np.stack([(self.codes == k).sum(axis=1) for k in range(self.q)], axis=1)

    def numeric_categories(self) -> np.ndarray | None:
        """Categories as floats, shape (q,), when all are real numbers (not bools), else None."""
        return np.asarray(self.categories, dtype=float) if _all_numbers(self.categories) else None


Ratings = LabelData | CodedLabels  # labels, or a table encoded once (:func:`encode`)


def _all_numbers(values: Sequence[Hashable]) -> bool:
    return all(isinstance(c, (int, float, np.number)) and not isinstance(c, bool) for c in values)


def encode(
    data: Ratings,
    categories: Sequence[Hashable] | None = None,
    *,
    order_for: str | None = None,
) -> tuple[CodedLabels, int]:
    """Code a table's labels; items without any rating are dropped first.

    The one place a statistic learns the category order. Numbers are ordered as numbers; text
    labels have no order of their own (sorting "high", "low", "medium" alphabetically is not
    the scale), so a statistic that needs an order (``order_for``: ordinal alpha, weighted
    kappa, weighted AC2) refuses text labels unless ``categories`` declares it.

    Args:
        data: items x raters labels (see :func:`judgekit.labels.table.as_label_table`).
        categories: the category set and order (default: the order the table's source
            declares, ``LabelTable.order``, else the table's distinct labels, sorted; numbers
            by value).
        order_for: the name of the statistic when it needs the categories' order, else None.

    Returns:
        (coded labels, number of raters in the table).

    ``data`` may be a :class:`CodedLabels` already (the table encoded once): it is returned
    as is, or recoded onto ``categories`` where these differ, never read from labels again.

    Raises:
        JudgekitError: a label that is not among ``categories``; ``order_for`` given with text
            labels and no ``categories`` (the message names the labels seen).
    """
    if isinstance(data, CodedLabels):
        return _recode(data, categories, order_for), data.n_raters
    table = as_label_table(data).dropna_items(1)
    if categories is None and table.order is not None:
        categories = table.order  # the order the table's source declared (a run's config)
    cats = list(categories) if categories is not None else table.categories
    ordered = categories is not None or _all_numbers(cats)
    if order_for is not None and not ordered:
        _refuse_unordered(order_for, cats)
    values = table.values
    flat = values.ravel().tolist()
    code: dict[Any, float] = {c: float(k) for k, c in enumerate(cats)}  # once a distinct label
    for label in dict.fromkeys(flat):
        if label is not None and label not in code:
            raise JudgekitError(f"label '{label}' is not among the categories {cats}")
    code[None] = np.nan
    codes = np.fromiter(map(code.__getitem__, flat), dtype=float, count=len(flat))
    return CodedLabels(
        codes.reshape(values.shape), cats, tuple(table.raters), ordered
    ), table.n_raters


def _refuse_unordered(order_for: str, cats: Sequence[Hashable]) -> None:
    seen = ", ".join(str(c) for c in cats[:12]) + (", ..." if len(cats) > 12 else "")
    raise JudgekitError(
        f"{order_for} needs the order of the categories, and these labels are text with "
        f"no order declared (seen: {seen}): give them in the scale's order "
        "(--categories A,B,C; categories=[...] in Python; or the rubric's or config's "
        "labels list)"
    )


def _recode(
    coded: CodedLabels, categories: Sequence[Hashable] | None, order_for: str | None
) -> CodedLabels:
    """``coded`` over ``categories`` (the same codes where they are its own categories)."""
    if categories is None or list(categories) == coded.categories:
        if order_for is not None and not (coded.ordered or categories is not None):
            _refuse_unordered(order_for, coded.categories)
        ordered = coded.ordered or categories is not None
        return (
            coded
            if ordered == coded.ordered
            else CodedLabels(coded.codes, coded.categories, coded.raters, ordered)
        )
    cats = list(categories)
    index = {c: k for k, c in enumerate(cats)}
    for label in coded.categories:
        if label not in index and (coded.codes == coded.categories.index(label)).any():
            raise JudgekitError(f"label '{label}' is not among the categories {cats}")
    mapping = np.array([index.get(c, -1) for c in coded.categories] + [-1], dtype=float)
    flat = np.nan_to_num(coded.codes, nan=len(coded.categories)).astype(int)
    codes = np.where(np.isnan(coded.codes), np.nan, mapping[flat])
    return CodedLabels(codes, cats, coded.raters, True)


def two_raters(data: Ratings, raters: Sequence[Hashable] | None, statistic: str) -> CodedLabels:
    """Two raters of ``data`` coded, items rated by both (a table's own categories when
    ``data`` is labels, its encoding when it is :class:`CodedLabels`).

    Raises:
        JudgekitError: not exactly two raters (naming ``statistic`` and the raters seen); an
            unknown rater.
    """
    if isinstance(data, CodedLabels):
        names = list(raters) if raters is not None else list(data.raters)
        if len(names) == 2:
            return data.select(names)
        n, seen = len(names), list(data.raters)
    else:
        table = as_label_table(data)
        if raters is not None:
            table = table.select(list(raters))
        if table.n_raters == 2:
            return encode(table.dropna_items(2))[0]
        n, seen = table.n_raters, table.raters
    raise JudgekitError(
        f"{statistic} needs exactly two raters, got {n}: {seen} (choose two with raters=(a, b))"
    )
