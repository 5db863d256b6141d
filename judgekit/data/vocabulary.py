"""The one label vocabulary: how judgekit reads an item id, a rater name and a label.

Every label reader (long, wide and JSONL label files and run directories through
:func:`judgekit.labels.table.load_labels`, a run's ``labels.csv`` in ``judgekit view`` and
``judgekit.load_run``, the human votes of an audit, the raters' files of ``review import``)
turns what it reads into these forms, so a label, an id or a name written by another tool
means the same thing in every command. Comparing a judge's label set with the humans' is
:mod:`judgekit.labels.overlap`.

Canonical forms:

* **item ids and rater names**: text in Unicode NFC, surrounding whitespace stripped (``José``
  typed on macOS, NFD, and on Windows, NFC, are one rater). A JSON number is its number text
  (``1`` and ``1.0`` are the id ``"1"``); a JSON list or object its JSON text.
* **missing**: None, NaN, the empty (or blank) text and the markers ``NA``, ``N/A``, ``NaN``
  and ``null`` in any case, in CSV and JSONL alike. The text ``none`` is a label
  (Global-MMLU's "no special knowledge needed"), never a missing value.
* **booleans**: JSON ``true``/``false`` and the text ``true``/``false`` in any case (a
  spreadsheet's ``TRUE``/``FALSE``) are the labels ``"true"`` and ``"false"``.
* **numbers**: ``1``, ``1.0`` and the text ``"1"`` are one label. A table whose labels are all
  numbers holds numbers (int where integral, float otherwise); any other table holds text, a
  number as its number text (``1.0`` -> ``"1"``, ``2.5`` -> ``"2.5"``). A reader that declares
  its labels text (``numeric=False``) keeps numeric text as written (``"1.0"`` stays ``"1.0"``).
  A number too large for a float (``10**400``, ``1e999``) is no usable number: a single label
  keeps its text, and a table of labels (:func:`canonical_labels`) refuses it with
  :class:`NumberOverflow`, as the readers refuse ``inf`` ("not finite").
* **text**: NFC, stripped. Case is kept here: it is folded only when a judge's labels are
  compared with the humans' and differ from them in case alone
  (:func:`judgekit.labels.overlap.check_label_sets`, with a warning that says so).

:func:`label_text` is the text form every comparison uses (``1`` and ``"1"`` are ``"1"``).

One task label scheme lives here too, because two writers must agree on it: an MQM segment's
label (:func:`mqm_segment_label`), written by ``judgekit review import`` (``labels.csv`` of an
MQM campaign) and given to the errors judge's records by ``judgekit view``, so the humans'
segment labels and the judge's meet in ``view --labels`` as CS/CA and meanings do.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
import unicodedata
from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

MISSING_MARKERS = frozenset({"", "na", "n/a", "nan", "null"})
BOOLEANS = ("false", "true")
_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
_EXACT = 2**53  # floats above this are not exact integers
MQM_NO_ERROR = "no-error"  # Google MQM's severity of a clean segment (judgekit.metrics.mqm)
MQM_SEVERITIES = ("minor", "major", "critical")  # least to most severe
MQM_SEGMENT_LABELS = (MQM_NO_ERROR, *MQM_SEVERITIES)
MQM_UNKNOWN_SEVERITY = "error"  # errors whose severities are none of MQM_SEVERITIES


def nfc(text: str) -> str:
    """``text`` in Unicode NFC with surrounding whitespace stripped."""
    return unicodedata.normalize("NFC", text.strip())


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _plain(value: Any) -> Any:
    """A numpy scalar as its Python value; anything else unchanged."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes, list, dict)):
        try:
            return value.item()
        except (TypeError, ValueError):
            return value
    return value


class NumberOverflow(ValueError):
    """A label that writes a number too large for a float (module doc).

    Attributes:
        index: its position in the labels given to :func:`canonical_labels`.
        text: the label as written, shortened for a message.
    """

    def __init__(self, index: int, value: Any) -> None:
        text = str(value).strip()
        self.index = index
        self.text = text if len(text) <= 24 else f"{text[:20]}... ({len(text)} characters)"
        super().__init__(f"label '{self.text}' is a number too large for a float (not finite)")


def _fits(number: int | float) -> bool:
    """True when ``number`` is a finite float or an int within a float's range."""
    if isinstance(number, float):
        return math.isfinite(number)
    return abs(number) <= sys.float_info.max


def overflows(value: Any) -> bool:
    """True when ``value`` (a Python or numpy number, or text in plain decimal notation) writes
    a number that a float cannot hold (``10**400``, ``"1e999"``); infinities and NaN written as
    such (``inf``, ``nan``) are not numbers here and do not count."""
    value = _plain(value)
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return not _fits(value)
    if not isinstance(value, str):
        return False
    text = value.strip()
    if _INTEGER.fullmatch(text):
        try:
            return not _fits(int(text))
        except ValueError:  # more digits than Python converts: far beyond a float
            return True
    return bool(_DECIMAL.fullmatch(text)) and math.isinf(float(text))


def _number(value: Any) -> int | float | None:
    """``value`` as a canonical number (int where integral), or None when it is not a finite
    real number (bools are not numbers here)."""
    value = _plain(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() and abs(value) < _EXACT else value
    return None


def number_from_text(text: str) -> int | float | None:
    """The number a label's text writes (``"1"``, ``" 2.50 "``, ``"1e3"``), or None.

    Only plain decimal notation counts (no ``1_000``, ``inf`` or hexadecimal)."""
    text = text.strip()
    if _INTEGER.fullmatch(text):
        if overflows(text):
            return None
        return int(text)
    if _DECIMAL.fullmatch(text):
        return _number(float(text))
    return None


def number_text(value: int | float) -> str:
    """A canonical number's text: ``1`` -> ``"1"``, ``1.0`` -> ``"1"``, ``2.5`` -> ``"2.5"``."""
    number = _number(value)
    return repr(value) if number is None else str(number)


def is_missing_label(value: Any) -> bool:
    """True for None, NaN (and pandas' NA) and the missing markers (module doc)."""
    if value is None or _is_nan(value):
        return True
    if isinstance(value, str):
        return value.strip().lower() in MISSING_MARKERS
    return type(value).__name__ in ("NAType", "NaTType")  # pandas' missing values


def missing_cells(frame: pd.DataFrame) -> np.ndarray:
    """Boolean array, the shape of ``frame`` (a pandas DataFrame): the cells
    :func:`is_missing_label` calls missing.

    The rule is asked once per distinct value (a table of 100,000 items holds a few labels), not
    once per cell; None, NaN and pandas' missing values are missing without asking."""
    import numpy as np
    import pandas as pd

    values = frame.to_numpy(dtype=object)
    try:
        codes, uniques = pd.factorize(values.ravel(), use_na_sentinel=True)
    except TypeError:  # an unhashable label (a list): the rule cell by cell
        return frame.map(is_missing_label).to_numpy(dtype=bool)
    per_value = np.array([is_missing_label(u) for u in uniques] + [True], dtype=bool)
    return per_value[codes].reshape(values.shape)  # code -1 (NaN, None, NA) is the last entry


_MEMO = 1 << 18  # canonical forms remembered for plain values (ids and labels repeat per rater)
_PLAIN = (str, int, float, bool)


def canonical_id(value: Any) -> str | None:
    """An item id or rater name in its canonical text (module doc); None when missing or blank.

    ``True`` is ``"true"``, numbers their number text, lists and objects their JSON text."""
    if type(value) is str:  # text (the common case): NFC, stripped; quicker than the memo
        return nfc(value) or None
    if type(value) in _PLAIN:  # exact types: 1, 1.0 and True are three keys
        return _memo_id(type(value), value)
    return _canonical_id(value)


@functools.lru_cache(maxsize=_MEMO)
def _memo_id(_kind: type, value: Any) -> str | None:
    return _canonical_id(value)


def _canonical_id(value: Any) -> str | None:
    value = _plain(value)
    if value is None or _is_nan(value):
        return None
    if isinstance(value, bool):
        return BOOLEANS[value]
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False)
    number = _number(value)
    if number is not None:
        return str(number)
    text = nfc(str(value))
    return text or None


def canonical_label(value: Any, *, numeric_text: bool = True) -> Hashable | None:
    """One label in its canonical form (module doc), before the table-wide number rule.

    Args:
        value: the label as read (text from CSV, any JSON value from JSONL, a Python value).
        numeric_text: read numeric text as a number (False: the reader declares text labels).

    Returns:
        None (missing), ``"true"``/``"false"``, an int or float, NFC text, or ``value`` itself
        for a list or object (the reader rejects those with its own located error).
    """
    if isinstance(value, (list, dict, tuple, set)):
        return value  # type: ignore[return-value]
    value = _plain(value)
    if is_missing_label(value):
        return None
    if isinstance(value, bool):
        return BOOLEANS[value]
    number = _number(value)
    if number is not None and _fits(number):
        return number
    if isinstance(value, float | int):  # infinities, huge ints: no usable number, kept as text
        return repr(value)
    text = nfc(str(value))
    if text.lower() in BOOLEANS:
        return text.lower()
    if numeric_text:
        found = number_from_text(text)
        if found is not None:
            return found
    return text


def label_text(value: Any) -> str | None:
    """The text form of a label that every comparison uses: None when missing, numbers as
    their number text (``1`` and ``"1"`` and ``1.0`` are ``"1"``), booleans ``"true"`` /
    ``"false"``, text in NFC."""
    if type(value) in _PLAIN:
        return _memo_text(type(value), value)
    return _label_text(value)


@functools.lru_cache(maxsize=_MEMO)
def _memo_text(_kind: type, value: Any) -> str | None:
    return _label_text(value)


def _label_text(value: Any) -> str | None:
    label = canonical_label(value)
    if label is None:
        return None
    if isinstance(label, (int, float)):
        return number_text(label)
    return label if isinstance(label, str) else str(label)


class AllowedLabels:
    """Membership test for an allowed label set, in the text form of :func:`label_text` (1 for
    '1' and the reverse, TRUE for true): ``AllowedLabels(["yes", 1])("1")`` is True."""

    def __init__(self, allowed: Iterable[Hashable]) -> None:
        self.allowed = list(allowed)
        self.as_text = {label_text(a) for a in self.allowed}

    def __call__(self, label: Hashable) -> bool:
        return label_text(label) in self.as_text

    def describe(self) -> str:
        """``"allowed: a, b, c"``, for an error message."""
        return "allowed: " + ", ".join(str(v) for v in self.allowed)


def is_number(value: Any) -> bool:
    """True for a canonical number label (int or float, never a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def canonical_labels(values: Iterable[Any], numeric: bool | None = None) -> list[Any]:
    """A table's labels in canonical form, with the table-wide number rule (module doc).

    Args:
        values: the labels as read, in order (None for a missing cell).
        numeric: None (default): numbers when every present label is a number, else text;
            True: numbers (see :func:`all_numeric` to check first); False: text, numeric text
            kept as written.

    Returns:
        The labels, same order and length; None where missing.

    Raises:
        NumberOverflow: a label writes a number too large for a float (``numeric`` not False);
            its ``index`` locates it for the reader's error.
    """
    raw = list(values)
    if numeric is not False:
        bad = next((i for i, v in enumerate(raw) if overflows(v)), None)
        if bad is not None:
            raise NumberOverflow(bad, raw[bad])
    labels = [canonical_label(v, numeric_text=numeric is not False) for v in raw]
    if numeric is not False and all_numeric(labels):
        return labels
    out = []
    for original, label in zip(raw, labels, strict=True):
        if is_number(label):
            keep = numeric is False and isinstance(original, str)
            out.append(nfc(original) if keep else number_text(label))
        else:
            out.append(label)
    return out


def all_numeric(labels: Iterable[Any]) -> bool:
    """True when every present (non-None) canonical label is a number (and one is present)."""
    present = [v for v in labels if v is not None]
    return bool(present) and all(is_number(v) for v in present)


def mqm_segment_label(no_errors: bool, severities: Iterable[Any]) -> str:
    """An MQM segment's label: ``"no-error"`` when it has no error, else the worst severity of
    its errors (``"minor"`` < ``"major"`` < ``"critical"``, the MQM severities as Google's MQM
    files write them, lowercase); ``"error"`` when none of its errors has one of them.

    Args:
        no_errors: the annotation says the segment has no error (a judge's ``no_errors``, a
            rater's "no errors" choice).
        severities: the severities of its errors (any case); ignored when ``no_errors``.
    """
    found = {str(s).strip().lower() for s in severities}
    if no_errors or not found:
        return MQM_NO_ERROR
    ranked = [s for s in MQM_SEVERITIES if s in found]
    return ranked[-1] if ranked else MQM_UNKNOWN_SEVERITY
