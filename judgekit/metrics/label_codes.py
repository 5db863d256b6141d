"""Labels as category codes: the numeric form the agreement coefficients compute on.

:func:`encode` turns an items x raters table of labels into float category indices (NaN where
a rating is missing) over a fixed, sorted category list, and :class:`CodedLabels` gives the
per-item category counts n_ik that Fleiss (1971), Gwet (2014) and Krippendorff (2011) start
from.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

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


def _all_numbers(values: Sequence[Hashable]) -> bool:
    return all(isinstance(c, (int, float, np.number)) and not isinstance(c, bool) for c in values)


def encode(
    data: LabelData,
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
        categories: the category set and order (default: the table's distinct labels, sorted;
            numbers by value).
        order_for: the name of the statistic when it needs the categories' order, else None.

    Returns:
        (coded labels, number of raters in the table).

    Raises:
        JudgekitError: a label that is not among ``categories``; ``order_for`` given with text
            labels and no ``categories`` (the message names the labels seen).
    """
    table = as_label_table(data).dropna_items(1)
    cats = list(categories) if categories is not None else table.categories
    if order_for is not None and categories is None and not _all_numbers(cats):
        seen = ", ".join(str(c) for c in cats[:12]) + (", ..." if len(cats) > 12 else "")
        raise JudgekitError(
            f"{order_for} needs the order of the categories, and these labels are text with "
            f"no order declared (seen: {seen}): give them in the scale's order "
            "(--categories A,B,C; categories=[...] in Python; or the rubric's or config's "
            "labels list)"
        )
    index = {c: k for k, c in enumerate(cats)}
    values = table.values
    codes = np.full(values.shape, np.nan)
    for (i, j), label in np.ndenumerate(values):
        if label is None:
            continue
        if label not in index:
            raise JudgekitError(f"label '{label}' is not among the categories {cats}")
        codes[i, j] = index[label]
    return CodedLabels(codes, cats), table.n_raters
