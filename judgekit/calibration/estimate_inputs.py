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
* :func:`item_facets` collects the facets of each item (language, model, system, ...).

Several raters: the judge's value of an item is the mean over its raters (a jury's vote share,
or the mean MQM over samples). The humans follow the calibration's tie policy
(:mod:`judgekit.labels.majority`): the majority label decides a share or a rate, and an item whose
votes tie is left out (``exclude``) or kept as the label ``"<tie>"`` (``error``, ``own_class``),
which is never LABEL; a ``mean`` averages the raters' numbers.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit.data.tables import read_table
from judgekit.errors import InputError
from judgekit.labels.files import resolve_labels_path
from judgekit.labels.majority import TIE, TiePolicy, apply_ties, majority_vote
from judgekit.labels.table import LONG_COLUMNS, LabelTable, load_labels

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
            return float(str(label) == self.label)
        if self.kind == "rate":
            word = str(label).strip().lower()
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
    """Where a table came from: the file read (for the signature) and its sha256."""

    path: str
    sha256: str
    run_signature: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "sha256": self.sha256}
        if self.run_signature is not None:
            out["run_signature"] = self.run_signature
        return out


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


def _read_segments(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / SEGMENTS_FILE
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"invalid JSON ({exc.msg})", line=number) from None
        for key in ("id", "system", "status"):
            if key not in record:
                raise InputError(path, f"missing key '{key}'", line=number, field=key)
        out.append(record)
    return out


def load_judge(
    path: str | Path, target: Target, raters: list[str] | None = None
) -> tuple[pd.Series, list[str], Source]:
    """The judge's value of every judged item, the raters used and the source.

    Args:
        path: a labels file, a run directory with ``labels.csv``, or an ``errors`` run directory
            (``segments.jsonl``; only ``scored`` segments count as judged, with their MQM).
        target: the quantity (:class:`Target`).
        raters: the judge raters to use (default: every rater of the table); with several, an
            item's value is their mean (a jury's vote share).

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
        segments = _read_segments(path)
        scored = {str(s["id"]): float(s["mqm"]) for s in segments if s["status"] == "scored"}
        source = Source(str(path / SEGMENTS_FILE), sha256_of(path / SEGMENTS_FILE),
                        _run_signature(path))  # fmt: skip
        if not scored:
            raise InputError(path / SEGMENTS_FILE, "no scored segment: nothing was judged")
        return pd.Series(scored, dtype=float), ["judge"], source
    table = load_labels(path)
    file = resolve_labels_path(path)
    source = Source(str(file), sha256_of(file), _run_signature(path) if path.is_dir() else None)
    chosen = raters if raters else [str(r) for r in table.raters]
    known = {str(r): r for r in table.raters}
    for rater in chosen:
        if rater not in known:
            raise InputError(
                file, f"no rater '{rater}' (raters: {', '.join(known)})", field="rater"
            )
    values = _rater_values(table, [known[r] for r in chosen], target, file)
    if values.empty:
        raise InputError(file, "no judged item")
    return values, chosen, source


def _rater_values(table: LabelTable, raters: list[Any], target: Target, file: Path) -> pd.Series:
    """Per item, the mean of the raters' target values (items no rater labelled left out)."""
    columns = {}
    for rater in raters:
        column = table.frame[rater]
        column = column[column.notna()]
        columns[str(rater)] = pd.Series(
            [target.value(v, f"item '{i}', rater '{rater}'", file) for i, v in column.items()],
            index=[str(i) for i in column.index],
            dtype=float,
        )
    frame = pd.DataFrame(columns)
    return frame.mean(axis=1, skipna=True).dropna()


def _is_mqm_tsv(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".tsv":
        return False
    with path.open(encoding="utf-8-sig") as handle:
        header = handle.readline().rstrip("\r\n").split("\t")
    header = ["seg_id" if h == "docSegId" else h for h in header]
    return all(c in header for c in MQM_COLUMNS)


def load_human(
    path: str | Path, target: Target, tie_policy: TiePolicy = "exclude", exclude: Sequence[str] = ()
) -> tuple[pd.Series, int, Source]:
    """The humans' value of every human-labelled item, the number of ties left out, the source.

    Args:
        path: a labels file or run directory (long or wide), or a Google MQM TSV (``mean`` only:
            item ids ``system|doc|seg_id``, the segment's MQM = mean over its raters, >= 0).
        tie_policy: ``exclude`` drops an item whose human votes tie (share and rate targets);
            ``error`` and ``own_class`` keep it as the label ``"<tie>"``.
        exclude: raters to leave out (the judge, when its labels share the file).

    Raises:
        InputError: a missing file, a label the target cannot read, no human rater left.
    """
    path = Path(path)
    if _is_mqm_tsv(path):
        from judgekit.metrics.mqm import read_mqm_tsv, segment_mqm

        if target.kind != "mean":
            raise InputError(path, f"an MQM TSV gives segment MQM: use --target mean, not {target}")
        segments = segment_mqm(read_mqm_tsv(path))
        scores = {f"{s.system}|{s.doc}|{s.seg_id}": float(s.score) for s in segments}
        return pd.Series(scores, dtype=float), 0, Source(str(path), sha256_of(path))
    table = load_labels(path)
    file = resolve_labels_path(path)
    source = Source(str(file), sha256_of(file))
    left = [r for r in table.raters if str(r) not in set(exclude)]
    if not left:
        raise InputError(file, "no human rater (every rater is a judge rater)")
    table = table.select(left)
    if target.kind == "mean":
        return _rater_values(table, left, target, file), 0, source
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


def item_facets(*paths: str | Path | None, by: str | None = None) -> pd.DataFrame:
    """Facets of each item (one column per facet, indexed by item id as text), from every path.

    What each path gives:

    * an ``errors`` run directory: ``system`` and ``doc`` of each segment (``segments.jsonl``);
    * a cultural run directory: ``benchmark``, ``language``, ``subject``, ``split`` and
      ``subject_category`` (``annotations.jsonl``);
    * a spilling run directory: ``model``, ``lang`` and ``word`` of every meaning (``items.csv``);
    * a long ``item,rater,label`` file (or a run's ``labels.csv``): its extra columns;
    * any other table (CSV, TSV, JSONL) with an ``item``, ``id`` or ``key`` column: its other
      columns (the classify pipeline's items file, for instance).

    The first path that gives an item a facet value wins. Within one table, an item whose rows
    give the facet ``by`` two values is an :class:`InputError` (file, line, field); other
    columns (a rater's own answers) keep their first value.
    """
    frames = []
    for path in paths:
        if path is None:
            continue
        path = Path(path)
        if path.is_dir():
            frames.append(_run_facets(path))
            if (path / "labels.csv").is_file():
                frames.append(_table_facets(path / "labels.csv", by))
        elif path.is_file() and not _is_mqm_tsv(path):
            frames.append(_table_facets(path, by))
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(index=pd.Index([], name="item"))
    out = frames[0]
    for frame in frames[1:]:
        out = out.combine_first(frame)
    return out


def _run_facets(run_dir: Path) -> pd.DataFrame:
    if (run_dir / SEGMENTS_FILE).is_file():
        rows = {str(s["id"]): {"system": s["system"], "doc": s.get("doc")}
                for s in _read_segments(run_dir)}  # fmt: skip
        return pd.DataFrame.from_dict(rows, orient="index")
    annotations = run_dir / "annotations.jsonl"
    if annotations.is_file():
        records = read_table(annotations).rows
        keys = ("benchmark", "language", "subject", "split", "item_subject_category")
        rows = {str(r["key"]): {k: r.get(k) for k in keys} for _, r in records if "key" in r}
        frame = pd.DataFrame.from_dict(rows, orient="index")
        return frame.rename(columns={"item_subject_category": "subject_category"})
    items = run_dir / "items.csv"
    labels = run_dir / "labels.csv"
    if items.is_file() and labels.is_file():
        records = read_table(items).rows
        wanted = {"model", "lang", "word", "sample"}
        by_prefix = {
            f"{r['model']}|{r['lang']}|{r['word']}|s{r['sample']}": {
                "model": r["model"],
                "lang": r["lang"],
                "word": r["word"],
            }
            for _, r in records
            if wanted <= set(r)
        }
        label_rows = read_table(labels).rows
        rows = {}
        for _, r in label_rows:
            facets = by_prefix.get(str(r.get("item", "")).rsplit("|", 1)[0])
            if facets is not None:
                rows[str(r["item"])] = facets
        return pd.DataFrame.from_dict(rows, orient="index")
    return pd.DataFrame()


def _table_facets(path: Path, by: str | None = None) -> pd.DataFrame:
    table = read_table(path)
    header, rows = table.columns, table.rows
    key = next((c for c in ("item", "id", "key") if c in header), None)
    if key is None:
        return pd.DataFrame()
    skip = set(LONG_COLUMNS) if all(c in header for c in LONG_COLUMNS) else {key}
    columns = [c for c in header if c not in skip]
    facets: dict[str, dict[str, Any]] = {}
    for line, row in rows:
        item = str(row.get(key)).strip()
        entry = facets.setdefault(item, {})
        for column in columns:
            value = row.get(column)
            if value in (None, "") or isinstance(value, (dict, list)):
                continue
            value = str(value).strip()
            if entry.setdefault(column, value) != value and column == by:  # one value per item
                raise InputError(path, f"item '{item}': {column} is both '{entry[column]}' and "
                                 f"'{value}'", line=line, field=column)  # fmt: skip
    return pd.DataFrame.from_dict(facets, orient="index", columns=columns or None)


def check_share_given(goal: Target, *values: pd.Series) -> None:
    """Refuse a ``share:LABEL`` that no judge or human gave: a misspelt label (``cs`` for
    ``CS``) would otherwise be estimated as a share of exactly 0.

    Raises:
        InputError: every value of ``values`` (judge, human) is 0 (field ``--target``).
    """
    if goal.kind == "share" and not any(bool((v > 0).any()) for v in values):
        raise InputError(
            None, f"no judge or human label is '{goal.label}' (labels are compared as text, "
            "case included)", field="--target",
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
