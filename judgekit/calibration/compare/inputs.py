"""Inputs of ``judgekit calibrate compare``: judges and humans as label tables or score tables.

A source is given as ``[NAME=]PATH`` (``--human``, ``--judge``); its kind is read from the path:

* **labels** (:class:`LabelSource`): a label file (long ``item,rater,label`` or wide, CSV/TSV/
  JSONL) or a run directory (its ``labels.csv``), read by :func:`judgekit.labels.table.
  load_labels`, labels compared as text as everywhere in calibration; ``NAME=PATH::RATER``
  picks a rater, ``PATH`` alone makes every rater a judge. A **pairwise verdict table**
  (LLMBar's derived ``llm_judge_verdicts.tsv`` layout, or a pairwise run's ``verdicts.csv``)
  gives one label per item and judge, the verdict resolved across the two output orders by
  :func:`judgekit.metrics.pairwise.resolve_verdicts` (policy ``tie``: a position-inconsistent
  judge gets ``tie``, which never matches a gold 1 or 2; a verdict missing in an order leaves
  the item unlabelled); as ``--human`` it gives the gold labels (rater ``gold``). Its facets
  are ``subset`` (``Adversarial/Neighbor``) and ``set`` (the part before ``/``: ``Natural``,
  ``Adversarial``).
* **scores** (:class:`ScoreSource`): an MT-Metrics-Eval v2 segment file ``*.seg.score.tsv``
  (:func:`judgekit.metrics.mteval.read_seg_scores`: per-system blocks in source order, ``None``
  missing; segments keyed by the position in the block), optionally with a system file
  ``PATH,SYS`` (``*.sys.score.tsv``); a score table (CSV/TSV/JSONL with ``system``, a segment
  column ``segment``/``item``/``seg_id`` and ``score``); or an ``errors`` run directory
  (``segments.csv``: MQM negated, so that higher is better as in MT-Metrics-Eval files;
  unscored segments missing). Scores are always "higher is better".

``{lp}`` in a path is replaced by each ``--lp`` value (a language pair), so one option names
the files of every pair; a path without it takes its language from an MT-Metrics-Eval file
name (``en-de.mqm.seg.score.tsv``). Labels are read in judgekit's label vocabulary
(:mod:`judgekit.data.vocabulary`, through ``load_labels``) by :func:`read_labels`, and every
judge's labels pass the judge-vs-human label check in :func:`check_overlap`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from judgekit.calibration.estimate.facets import item_facets
from judgekit.data import resolve_path, text_lines
from judgekit.data.languages import check_item_languages, facet_value
from judgekit.data.pairwise import PUBLISHED_COLUMNS, load_published_verdicts, verdict_label
from judgekit.data.tables import read_table, table_columns
from judgekit.errors import InputError
from judgekit.labels.majority import labels_as_text
from judgekit.labels.overlap import check_label_sets
from judgekit.labels.table import LONG_COLUMNS, LabelTable, load_labels
from judgekit.metrics.mteval import read_seg_scores, read_sys_scores, score_cell
from judgekit.metrics.pairwise import resolve_verdicts

LP_PATTERN = re.compile(r"^([a-z]{2,3}-[a-z]{2,3})\.")
SEGMENT_COLUMNS = ("segment", "item", "seg_id", "position")
RUN_VERDICTS = ("item", "judge", "gold", "original", "swapped")


@dataclass
class LabelSource:
    """Labels of one input: ``labels`` rater -> Series (item -> label text), ``facets`` item ->
    {facet: value} (columns a long file carries), ``path`` for messages."""

    path: Path
    labels: dict[str, pd.Series]
    facets: dict[str, dict[str, str]] = field(default_factory=dict)
    table: LabelTable | None = None


@dataclass
class ScoreSource:
    """Scores of one input in one language pair: ``seg`` (columns system, segment, score; score
    NaN where missing, segment as text), ``sys`` system -> score or None, ``facets`` segment ->
    {facet: value}, ``lp`` (None when unknown)."""

    path: Path
    seg: pd.DataFrame
    sys: dict[str, float] | None
    lp: str | None
    facets: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceSpec:
    """``name`` (None: every rater of the file), ``path``, ``sys`` (a system file), ``rater``."""

    name: str | None
    path: str
    sys: str | None = None
    rater: str | None = None


def parse_spec(text: str, option: str) -> SourceSpec:
    """``[NAME=]PATH[,SYS][::RATER]`` (module doc).

    Raises:
        InputError: an empty name or path.
    """
    name, sep, rest = text.partition("=")
    if not sep or "/" in name or name.endswith((".tsv", ".csv", ".jsonl")):
        name, rest = None, text
    elif not name.strip():
        raise InputError(None, f"{text!r}: empty judge name before '='", field=option)
    rest, _, rater = rest.partition("::")
    path, _, sys_path = rest.partition(",")
    if not path.strip():
        raise InputError(None, f"{text!r}: no path", field=option)
    return SourceSpec(
        name and name.strip(), path.strip(), sys_path.strip() or None, rater.strip() or None
    )


def expand(spec: SourceSpec, lps: list[str]) -> list[tuple[str | None, Path, Path | None]]:
    """(lp, path, system file) for each ``--lp`` where the path has ``{lp}``, else one entry
    with the lp read from the file name (None when it has none). ``data:NAME/path`` names a
    file of a data set, fetched where needed (:func:`judgekit.data.resolve_path`)."""
    if "{lp}" not in spec.path and not (spec.sys and "{lp}" in spec.sys):
        match = LP_PATTERN.match(Path(spec.path).name)
        return [
            (
                match.group(1) if match else None,
                _local(spec.path),
                _local(spec.sys) if spec.sys else None,
            )
        ]
    if not lps:
        raise InputError(None, f"{spec.path}: '{{lp}}' in a path needs --lp", field="--lp")
    return [
        (
            lp,
            _local(spec.path.replace("{lp}", lp)),
            _local(spec.sys.replace("{lp}", lp)) if spec.sys else None,
        )
        for lp in lps
    ]


def _local(path: str | Path) -> Path:
    """``path``, or the local file of a ``data:`` reference (fetched where needed)."""
    return resolve_path(path) if str(path).startswith("data:") else Path(path)


def is_score_path(path: Path) -> bool:
    """True for score inputs (module doc): an MT-Metrics-Eval segment file, an errors run
    directory, or a table with ``system`` and ``score`` columns."""
    if path.name.endswith(".seg.score.tsv") or (
        path.is_dir() and (path / "segments.csv").is_file()
    ):
        return True
    if path.is_file() and path.suffix.lower() in (".csv", ".tsv", ".jsonl"):
        columns = table_columns(path, default="csv")  # the header only: no second full read
        return "system" in columns and "score" in columns
    return False


def _verdict_table(path: Path) -> pd.DataFrame | None:
    """A pairwise verdict frame (judge, subset, item, gold, original, swapped) or None."""
    if not path.is_file() or path.suffix.lower() not in (".csv", ".tsv"):
        return None
    columns = table_columns(path, default="csv")
    if all(c in columns for c in PUBLISHED_COLUMNS):
        return load_published_verdicts(path)
    if not all(c in columns for c in RUN_VERDICTS):
        return None
    rows = []
    for line, row in read_table(path, default="csv").rows:
        try:
            labels = [verdict_label(row.get(c) or None) for c in ("gold", "original", "swapped")]
        except ValueError as exc:
            raise InputError(path, str(exc), line=line) from None
        rows.append((row["judge"], row.get("subset") or None, row["item"], *labels))
    return pd.DataFrame(rows, columns=["judge", "subset", "item", "gold", "original", "swapped"])


def _verdict_source(path: Path, frame: pd.DataFrame, human: bool) -> LabelSource:
    keys = [
        i if s is None or pd.isna(s) else f"{s}/{i}"
        for s, i in zip(frame["subset"], frame["item"], strict=True)
    ]
    frame = frame.assign(key=keys)
    facets = {
        k: {"subset": str(s), "set": str(s).split("/")[0]}
        for k, s in zip(frame["key"], frame["subset"], strict=True)
        if s is not None and not pd.isna(s)
    }
    if human:
        gold = frame.drop_duplicates("key").set_index("key")["gold"].dropna()
        return LabelSource(path, {"gold": labels_as_text(gold)}, facets)
    labels = {}
    for judge, part in frame.groupby("judge", sort=False):
        resolved, _ = resolve_verdicts(part["original"], part["swapped"], "tie")
        series = pd.Series(resolved, index=part["key"].to_numpy(), dtype=object)
        labels[str(judge)] = labels_as_text(series)
    return LabelSource(path, labels, facets)


def _long_facets(path: Path) -> dict[str, dict[str, str]]:
    """item -> {column: value}: the facets of a long label file's extra columns, or of a run
    directory (its judged items' fields too), read by the one facet reader of estimates, plans
    and gates (:func:`judgekit.calibration.estimate.facets.item_facets`: ids as the label
    table reads them, one spelling per language, a row whose ``language`` and ``lang``
    disagree refused)."""
    resolved = path / "labels.csv" if path.is_dir() else path
    columns = table_columns(resolved, default="csv")  # no extra column: no second full read
    long = all(c in columns for c in ("item", "rater", "label"))
    if not path.is_dir() and not (long and [c for c in columns if c not in LONG_COLUMNS]):
        return {}
    frame = item_facets(path) if long or path.is_dir() else pd.DataFrame()
    return {str(item): {str(c): v for c, v in row.items() if isinstance(v, str)}
            for item, row in frame.to_dict("index").items()}  # fmt: skip


def read_labels(spec: SourceSpec, human: bool = False) -> LabelSource:
    """A label source (module doc). Every label of a comparison enters here.

    Raises:
        InputError: a missing or malformed file (file, line, field), an unknown rater.
    """
    path = _local(spec.path)
    verdicts = _verdict_table(path)
    if verdicts is not None:
        source = _verdict_source(path, verdicts, human)
    else:
        table = load_labels(path, numeric=False)
        labels = {str(r): labels_as_text(table.frame[r]) for r in table.raters}
        source = LabelSource(path, labels, _long_facets(path), table)
    if spec.rater is not None:
        if spec.rater not in source.labels:
            raise InputError(path, f"no rater '{spec.rater}' (raters: {', '.join(source.labels)})")
        source.labels = {spec.name or spec.rater: source.labels[spec.rater]}
    elif spec.name is not None and not human:
        if len(source.labels) == 1:
            source.labels = {spec.name: next(iter(source.labels.values()))}
        elif spec.name in source.labels:
            source.labels = {spec.name: source.labels[spec.name]}
        else:
            raise InputError(
                path,
                f"several raters ({', '.join(source.labels)}): pick one with "
                f"{spec.name}={spec.path}::RATER",
            )
    return source


def check_overlap(judge: str, labels: pd.Series, humans: LabelTable) -> pd.Series:
    """A judge's labels checked against the humans' by the label check every judge-vs-human
    comparison runs (:func:`judgekit.labels.overlap.check_label_sets`): a label that differs
    from the humans' in case alone takes the humans' spelling (with a warning), a partial
    overlap is a warning.

    Returns:
        ``labels`` (item -> label), with the humans' spelling where case was folded.

    Raises:
        LabelSetError: no label in common (an ``InputError`` naming both sets).
    """
    overlap = check_label_sets(
        labels.to_numpy(), humans.values.ravel(), judge_name=f"judge '{judge}'",
        human_name=f"the humans ({humans.source})", source=humans.source,
    )  # fmt: skip
    if not overlap.folded:
        return labels
    to_human = {j: h for h, j in overlap.folded.items()}
    return labels.map(lambda v: to_human.get(v, v))


def _score_table(path: Path) -> tuple[pd.DataFrame, dict[str, dict[str, str]]]:
    table = read_table(path, default="csv")
    segment = next((c for c in SEGMENT_COLUMNS if c in table.columns), None)
    if segment is None:
        raise InputError(
            path, f"a score table needs a segment column ({', '.join(SEGMENT_COLUMNS)})"
        )
    extra = [c for c in table.columns if c not in ("system", segment, "score")]
    rows, facets = [], {}
    for line, row in table.rows:
        score = score_cell(row.get("score"), path, line)
        key = str(row.get(segment)).strip()
        rows.append((str(row.get("system")).strip(), key, score))
        values = {c: facet_value(c, row.get(c), path=path, line=line) for c in extra}
        check_item_languages(key, values, path=path, line=line)
        facets.setdefault(key, {}).update({c: v for c, v in values.items() if v is not None})
    return pd.DataFrame(rows, columns=["system", "segment", "score"]), facets


def _errors_run(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path / "segments.csv", dtype={"seg_id": str, "doc": str, "id": str})
    for column in ("system", "mqm", "status"):
        if column not in frame.columns:
            raise InputError(path / "segments.csv", f"missing column '{column}'", field=column)
    key = (
        frame["doc"].astype(str) + "/" + frame["seg_id"].astype(str)
        if "seg_id" in frame
        else frame["id"]
    )
    score = -pd.to_numeric(frame["mqm"], errors="coerce").where(frame["status"] == "ok")
    return pd.DataFrame({"system": frame["system"].astype(str), "segment": key, "score": score})


def read_scores(path: Path, sys_path: Path | None, lp: str | None) -> ScoreSource:
    """A score source (module doc).

    Raises:
        InputError: a missing or malformed file (file, line, field).
    """
    facets: dict[str, dict[str, str]] = {}
    if path.name.endswith(".seg.score.tsv"):
        if not path.is_file():
            raise InputError(path, "no such file")
        seg = read_seg_scores(path).rename(columns={"position": "segment"})
        seg["segment"] = seg["segment"].astype(str)
    elif path.is_dir():
        seg = _errors_run(path)
    elif path.is_file():
        seg, facets = _score_table(path)
    else:
        raise InputError(path, "no such file or directory")
    duplicated = seg.duplicated(["system", "segment"])
    if duplicated.any():
        row = seg[duplicated].iloc[0]
        raise InputError(path, f"system {row['system']!r} scores segment {row['segment']!r} twice")
    sys_scores = None
    if sys_path is not None:
        if not sys_path.is_file():
            raise InputError(sys_path, "no such file")
        sys_scores = read_sys_scores(sys_path)
    return ScoreSource(path, seg, sys_scores, lp, facets)


def read_docs(path: Path) -> dict[str, dict[str, str]]:
    """An MT-Metrics-Eval ``docs`` file (``domain<TAB>doc`` per source line) as segment
    (position as text) -> {"domain", "doc"}.

    Raises:
        InputError: a line without two tab-separated fields.
    """
    out = {}
    for number, line in enumerate(text_lines(_local(path))):
        fields = line.split("\t")
        if len(fields) != 2:
            raise InputError(path, "expected domain<TAB>doc", line=number + 1)
        out[str(number)] = {"domain": fields[0].strip(), "doc": fields[1].strip()}
    return out
