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
        if all(
            isinstance(c, (int, float, np.number)) and not isinstance(c, bool)
            for c in self.categories
        ):
            return np.asarray(self.categories, dtype=float)
        return None


def encode(
    data: LabelData, categories: Sequence[Hashable] | None = None
) -> tuple[CodedLabels, int]:
    """Code a table's labels; items without any rating are dropped first.

    Args:
        data: items x raters labels (see :func:`judgekit.labels.table.as_label_table`).
        categories: the category order (default: the table's sorted distinct labels).

    Returns:
        (coded labels, number of raters in the table).

    Raises:
        JudgekitError: a label that is not among ``categories``.
    """
    table = as_label_table(data).dropna_items(1)
    cats = list(categories) if categories is not None else table.categories
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
