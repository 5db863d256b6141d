"""Inputs of prediction-powered estimates: the quantity, the judge's and the humans' values per
item, and the facets items are grouped by.

:mod:`judgekit.calibration.estimate` turns a judge on every item plus humans on a random subset
into the benchmark figure with a CI. This module maps judgekit's tables onto the two numeric
vectors it needs:

* a :class:`Target` says which per-item number is averaged: ``share:LABEL`` (1 where the label is
  LABEL, else 0: the CS share of the cultural audit, a classify label share), ``rate`` (1 where a
  boolean label is false: the spilling rate, invalid meanings / judged meanings, paper 002) or
  ``mean`` (a numeric label: segment MQM, averaged into a system's mean MQM);
* :func:`load_judge` reads the judge's labels: a long ``item,rater,label`` table, a run directory
  with ``labels.csv`` (spilling, cultural, classify) or an ``errors`` run directory
  (``segments.jsonl``: the MQM of every scored segment);
* :func:`load_human` reads human labels: the same tables, or a Google MQM TSV (segment MQM, the
  mean over raters; :func:`judgekit.metrics.mqm.segment_mqm`);
* :func:`judgekit.calibration.estimate.facets.item_facets` collects the facets of each item
  (language, model, system, ...).

Several raters: the judge's value of an item is the mean over its raters (a jury's vote share,
or the mean MQM over samples). The humans follow the calibration's tie policy
(:mod:`judgekit.labels.majority`): the majority label decides a share or a rate, and an item whose
votes tie is left out (``exclude``) or kept as the label ``"<tie>"`` (``error``, ``own_class``),
which is never LABEL; a ``mean`` averages the raters' numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit.data import jsonl_objects
from judgekit.data.digest import file_sha256
from judgekit.data.vocabulary import canonical_id, label_text, number_from_text
from judgekit.errors import InputError
from judgekit.labels.files import resolve_labels_path
from judgekit.labels.majority import TIE, TiePolicy, apply_ties, majority_vote
from judgekit.labels.overlap import LabelOverlap, align_labels
from judgekit.labels.table import LabelTable, load_labels

FALSE_WORDS = frozenset({"false", "0", "no", "invalid"})
TRUE_WORDS = frozenset({"true", "1", "yes", "valid"})
SEGMENTS_FILE = "segments.jsonl"
MQM_COLUMNS = ("system", "doc", "seg_id", "rater", "source", "target", "category", "severity")


@dataclass(frozen=True)
class Target:
    """The per-item quantity whose mean is estimated.

    Attributes:
        kind: ``share`` (indicator of ``label``), ``rate`` (indicator of a false boolean label:
            the spilling rate) or ``mean`` (numeric label).
        label: the label of a ``share`` (compared as text); None otherwise.
    """

    kind: str
    label: str | None = None

    @classmethod
    def parse(cls, text: str) -> Target:
        """``share:LABEL``, ``rate`` or ``mean``.

        Raises:
            InputError: any other text (field ``--target``).
        """
        if text in ("rate", "mean"):
            return cls(text)
        if text.startswith("share:") and text[len("share:") :].strip():
            return cls("share", text[len("share:") :].strip())
        raise InputError(
            None, f"unknown target '{text}' (use share:LABEL, rate or mean)", field="--target"
        )

    def __str__(self) -> str:
        return f"share:{self.label}" if self.kind == "share" else self.kind

    def value(self, label: Any, where: str, path: str | Path | None = None) -> float:
        """The number an item's label stands for (a share or rate in {0, 1}).

        Raises:
            InputError: a ``rate`` label that is not boolean, or a ``mean`` label that is not a
                number; ``path`` is the file, ``where`` names the item and rater.
        """
        if self.kind == "share":
            return float(label_text(label) == label_text(self.label))
        if self.kind == "rate":
            word = str(label_text(label)).lower()
            if word in FALSE_WORDS:
                return 1.0
            if word in TRUE_WORDS:
                return 0.0
            raise InputError(
                path,
                f"{where}: label '{label}' is not boolean (rate needs true/false)",
                field="label",
            )
        if isinstance(label, bool) or not isinstance(label, (int, float, np.number)):
            try:
                number = float(str(label))
            except ValueError:
                raise InputError(
                    path, f"{where}: label '{label}' is not a number", field="label"
                ) from None
        else:
            number = float(label)
        if not math.isfinite(number):
            raise InputError(path, f"{where}: label '{label}' is not finite", field="label")
        return number


@dataclass(frozen=True)
class Source:
    """Where a table came from: the file read (for the signature) and its sha256; ``labels``:
    the distinct labels read (text form; empty for numbers read as a ``mean``), for the label
    check of :func:`load_human`; ``overlap``: that check's result (humans only);
    ``n_without_probs``: judged items whose predictor stayed the hard label because no chosen
    rater gave label probabilities for them (a probability predictor only)."""

    path: str
    sha256: str
    run_signature: dict[str, Any] | None = None
    labels: tuple[str, ...] = ()
    overlap: LabelOverlap | None = None
    n_without_probs: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "sha256": self.sha256}
        if self.run_signature is not None:
            out["run_signature"] = self.run_signature
        return out


def _run_signature(run_dir: Path) -> dict[str, Any] | None:
    summary = run_dir / "summary.json"
    if not summary.is_file():
        return None
    try:
        return json.loads(summary.read_text(encoding="utf-8")).get("signature")
    except (json.JSONDecodeError, AttributeError):
        return None


def _is_errors_run(path: Path) -> bool:
    return (
        path.is_dir() and (path / SEGMENTS_FILE).is_file() and not (path / "labels.csv").is_file()
    )


def read_segments(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / SEGMENTS_FILE
    out = []
    for number, record in jsonl_objects(path):  # lines end at "\n" only (U+2028 is text)
        for key in ("id", "system", "status"):
            if key not in record:
                raise InputError(path, f"missing key '{key}'", line=number, field=key)
        out.append(record)
    return out


def load_judge(
    path: str | Path, target: Target, raters: list[str] | None = None, probabilities: bool = True
) -> tuple[pd.Series, list[str], Source]:
    """The judge's value of every judged item, the raters used and the source.

    Args:
        path: a labels file, a run directory with ``labels.csv``, or an ``errors`` run directory
            (``segments.jsonl``; only ``scored`` segments count as judged, with their MQM).
        target: the quantity (:class:`Target`).
        raters: the judge raters to use (default: every rater of the table); with several, an
            item's value is their mean (a jury's vote share).
        probabilities: for a ``share:LABEL`` target, a rater's value of an item is its
            probability of LABEL where the judge gave label probabilities (``label_probs`` of
            the run's records, or ``p:LABEL`` columns:
            :mod:`judgekit.calibration.confidence_inputs`), a continuous predictor for PPI++;
            False: the hard label (1 where the label is LABEL), as without probabilities.

    Returns:
        (values, raters, source): values is a float Series indexed by item id (text).

    Raises:
        InputError: a missing file, an unknown rater, a label the target cannot read, or no
            judged item.
    """
    path = Path(path)
    if _is_errors_run(path):
        if target.kind != "mean":
            raise InputError(
                path, f"an errors run gives segment MQM: use --target mean, not {target}"
            )
        segments = read_segments(path)
        scored = {canonical_id(s["id"]): float(s["mqm"]) for s in segments
                  if s["status"] == "scored"}  # fmt: skip
        source = Source(str(path / SEGMENTS_FILE), file_sha256(path / SEGMENTS_FILE),
                        _run_signature(path))  # fmt: skip
        if not scored:
            raise InputError(path / SEGMENTS_FILE, "no scored segment: nothing was judged")
        return pd.Series(scored, dtype=float), ["judge"], source
    table = load_labels(path)
    file = resolve_labels_path(path)
    source = Source(str(file), file_sha256(file), _run_signature(path) if path.is_dir() else None)
    chosen = raters if raters else [str(r) for r in table.raters]
    known = {str(r): r for r in table.raters}
    for rater in chosen:
        if rater not in known:
            raise InputError(
                file, f"no rater '{rater}' (raters: {', '.join(known)})", field="rater"
            )
    table = table.select([known[r] for r in chosen])
    values = _rater_values(table, table.raters, target, file)
    if probabilities and target.kind == "share":
        from judgekit.calibration.estimate.probs import probability_values

        values, n_hard = probability_values(path, chosen, target.label or "", values)
        source = replace(source, n_without_probs=n_hard)
    if values.empty:
        raise InputError(file, "no judged item")
    return values, chosen, replace(source, labels=_label_texts(table))


def _rater_values(table: LabelTable, raters: list[Any], target: Target, file: Path) -> pd.Series:
    """Per item, the mean of the raters' target values (items no rater labelled left out)."""
    columns = {}
    for rater in raters:
        column = table.frame[rater]
        column = column[column.notna()]
        columns[str(rater)] = pd.Series(
            [target.value(v, f"item '{i}', rater '{rater}'", file) for i, v in column.items()],
            index=[canonical_id(i) for i in column.index],
            dtype=float,
        )
    frame = pd.DataFrame(columns)
    return frame.mean(axis=1, skipna=True).dropna()


def _label_texts(table: LabelTable) -> tuple[str, ...]:
    """The table's distinct labels in the vocabulary's text form, sorted."""
    return tuple(sorted({t for t in map(label_text, table.values.ravel()) if t is not None}))


def is_mqm_tsv(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".tsv":
        return False
    with path.open(encoding="utf-8-sig") as handle:
        header = handle.readline().rstrip("\r\n").split("\t")
    header = ["seg_id" if h == "docSegId" else h for h in header]
    return all(c in header for c in MQM_COLUMNS)


def load_human(
    path: str | Path, target: Target, tie_policy: TiePolicy = "exclude",
    exclude: Sequence[str] = (), judge_labels: Sequence[str] = (),
) -> tuple[pd.Series, int, Source]:  # fmt: skip
    """The humans' value of every human-labelled item, the number of ties left out, the source.

    Args:
        path: a labels file or run directory (long or wide), or a Google MQM TSV (``mean`` only:
            item ids ``system|doc|seg_id``, the segment's MQM = mean over its raters, >= 0).
        tie_policy: ``exclude`` drops an item whose human votes tie (share and rate targets);
            ``error`` and ``own_class`` keep it as the label ``"<tie>"``.
        exclude: raters to leave out (the judge, when its labels share the file).
        judge_labels: the judge's labels (``Source.labels`` of :func:`load_judge`): for a
            share or rate target the two label sets are checked first
            (:func:`judgekit.labels.overlap.check_label_sets`; a rate's boolean words are its
            declared set), and human labels that differ from the judge's in case alone are
            read as the judge's; the result is ``Source.overlap``.

    Raises:
        InputError: a missing file, a label the target cannot read, no human rater left.
        LabelSetError: the judge's and the humans' labels share none.
    """
    path = Path(path)
    if is_mqm_tsv(path):
        from judgekit.metrics.mqm import read_mqm_tsv, segment_mqm

        if target.kind != "mean":
            raise InputError(path, f"an MQM TSV gives segment MQM: use --target mean, not {target}")
        segments = segment_mqm(read_mqm_tsv(path))
        scores = {canonical_id(f"{s.system}|{s.doc}|{s.seg_id}"): float(s.score)
                  for s in segments}  # fmt: skip
        return pd.Series(scores, dtype=float), 0, Source(str(path), file_sha256(path))
    table = load_labels(path)
    file = resolve_labels_path(path)
    source = Source(str(file), file_sha256(file))
    left = [r for r in table.raters if str(r) not in set(exclude)]
    if not left:
        raise InputError(file, "no human rater (every rater is a judge rater)")
    table = table.select(left)
    if target.kind == "mean":
        return _rater_values(table, left, target, file), 0, source
    source = replace(source, labels=_label_texts(table))
    if judge_labels:
        declared = sorted(FALSE_WORDS | TRUE_WORDS) if target.kind == "rate" else None
        judge = pd.Series(list(judge_labels), dtype=object)
        _, table, overlap = align_labels(judge, table, declared=declared)
        source = replace(source, overlap=overlap)
    reference = majority_vote(table)
    pairs = pd.DataFrame({"reference": reference})
    n_ties = int((pairs["reference"] == TIE).sum())
    kept = apply_ties(pairs, tie_policy)["reference"]
    if tie_policy != "exclude":
        n_ties = 0
    where = "human majority label"
    values = pd.Series([target.value(v, where, file) if v != TIE else 0.0 for v in kept],
                       index=kept.index, dtype=float)  # fmt: skip
    return values, n_ties, source


def check_share_given(goal: Target, *values: pd.Series, labels: Sequence[str] = ()) -> None:
    """Refuse a ``share:LABEL`` that no judge or human gave: a misspelt label (``cs`` for
    ``CS``), or a share asked of a score judge (its labels are numbers), would otherwise be
    estimated (or planned for) as a share of exactly 0.

    Args:
        labels: the labels that were given (shown, up to 8), where known.

    Raises:
        InputError: every value of ``values`` (judge, human) is 0 (field ``--target``).
    """
    if goal.kind == "share" and not any(bool((v > 0).any()) for v in values):
        shown = ", ".join(list(labels)[:8]) + (", ..." if len(labels) > 8 else "")
        given = f"; the labels given are {shown}" if labels else ""
        scores = bool(labels) and all(number_from_text(t) is not None for t in labels)
        hint = "; a score judge's figure is --target mean" if scores else ""
        raise InputError(
            None, f"no judge or human label is '{goal.label}' (labels are compared as text, "
            f"case included){given}{hint}", field="--target",
        )  # fmt: skip


DEFAULT_TARGETS = {"errors": "mean", "spilling": "rate", "cultural": "share:CS"}


def default_target(judge_path: str | Path) -> Target:
    """The usual quantity of a run: ``mean`` (errors: segment MQM), ``rate`` (spilling),
    ``share:CS`` (cultural).

    Raises:
        InputError: the judge is not such a run (the message asks for ``--target``).
    """
    path = Path(judge_path)
    pipeline = None
    if _is_errors_run(path):
        pipeline = "errors"
    elif path.is_dir():
        pipeline = (_run_signature(path) or {}).get("pipeline")
    if pipeline in DEFAULT_TARGETS:
        return Target.parse(DEFAULT_TARGETS[pipeline])
    raise InputError(
        None, "which quantity? give --target share:LABEL, rate or mean", field="--target"
    )
