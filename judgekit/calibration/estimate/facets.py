"""The facets of estimated items (language, model, system...), from the runs and tables of a
``calibrate estimate`` or ``plan``: :func:`item_facets` (see its doc for what each input gives).
Item ids are read as the label vocabulary reads them (:func:`judgekit.data.vocabulary.
canonical_id`), so they match the judge's and the humans' labels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.calibration.estimate.inputs import SEGMENTS_FILE, is_mqm_tsv, read_segments
from judgekit.data.languages import check_item_languages, facet_value
from judgekit.data.tables import read_table
from judgekit.data.vocabulary import canonical_id
from judgekit.errors import InputError
from judgekit.labels.table import LONG_COLUMNS

ITEMS_FILE = "items.jsonl"
TEXT_FIELDS = ("text", "input", "output_1", "output_2", "source", "target", "reference")


def item_facets(*paths: str | Path | None, by: str | None = None) -> pd.DataFrame:
    """Facets of each item (one column per facet, indexed by item id as text), from every path.

    What each path gives:

    * an ``errors`` run directory: ``system`` and ``doc`` of each segment (``segments.jsonl``);
    * a cultural run directory: ``benchmark``, ``language``, ``subject``, ``split`` and
      ``subject_category`` (``annotations.jsonl``);
    * a spilling run directory: ``model``, ``lang`` and ``word`` of every meaning (``items.csv``);
    * another run directory with an ``items.jsonl`` (classify, pairwise): the judged items'
      fields but their texts (``lang`` also as ``language``);
    * a long ``item,rater,label`` file (or a run's ``labels.csv``): its extra columns;
    * any other table (CSV, TSV, JSONL) with an ``item``, ``id`` or ``key`` column: its other
      columns (the classify pipeline's items file, for instance).

    A whitespace-only value is no value. ``language`` and ``lang`` values are read by
    :func:`judgekit.data.languages.language_value` (one spelling per language: ``DE`` is ``de``;
    a value that is not text is an :class:`InputError`), and a row whose two disagree is an
    :class:`InputError` (file, line, field ``lang``). The first path that gives an item a facet
    value wins, but two paths that give the facet ``by`` two values are an :class:`InputError`
    (the item and both files).
    Within one table, an item whose rows give the facet ``by`` two values is an
    :class:`InputError` (file, line, field); other columns (a rater's own answers) keep their
    first value.
    """
    frames: list[tuple[Path, pd.DataFrame]] = []
    for path in paths:
        if path is None:
            continue
        path = Path(path)
        if path.is_dir():
            frames.append((path, _run_facets(path)))
            if (path / "labels.csv").is_file():
                frames.append((path / "labels.csv", _table_facets(path / "labels.csv", by)))
        elif path.is_file() and not is_mqm_tsv(path):
            frames.append((path, _table_facets(path, by)))
    frames = [(p, f) for p, f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(index=pd.Index([], name="item"))
    out = frames[0][1]
    for k, (path, frame) in enumerate(frames[1:], start=1):
        if by is not None and by in frame.columns and by in out.columns:
            _check_agree(out[by], frame[by], frames[:k], path, by)
        out = out.combine_first(frame)
    return out


def _check_agree(before: pd.Series, now: pd.Series, earlier: list, path: Path, by: str) -> None:
    """Refuse an item whose ``by`` value in ``path`` differs from the one an earlier input gave
    (the check would silently take the first)."""
    both = before.dropna().index.intersection(now.dropna().index)
    differ = [i for i in both if before[i] != now[i]]
    if differ:
        item = differ[0]
        first = next(p for p, f in earlier if by in f.columns and pd.notna(f[by].get(item)))
        raise InputError(path, f"item '{item}': {by} is '{now[item]}' here but '{before[item]}' "
                         f"in {first} ({len(differ)} item(s) disagree); give each item one "
                         f"{by}", field=by)  # fmt: skip


def _run_facets(run_dir: Path) -> pd.DataFrame:
    if (run_dir / SEGMENTS_FILE).is_file():
        rows = {canonical_id(s["id"]): {"system": s["system"], "doc": s.get("doc")}
                for s in read_segments(run_dir)}  # fmt: skip
        return pd.DataFrame.from_dict(rows, orient="index")
    annotations = run_dir / "annotations.jsonl"
    if annotations.is_file():
        records = read_table(annotations).rows
        keys = ("benchmark", "language", "subject", "split", "item_subject_category")
        rows = {
            canonical_id(r["key"]): {
                k: facet_value(k, r.get(k), path=annotations, line=n) for k in keys
            }  # fmt: skip
            for n, r in records
            if "key" in r
        }
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
                "lang": facet_value("lang", r["lang"], path=items, line=line),
                "word": r["word"],
            }
            for line, r in records
            if wanted <= set(r)
        }
        label_rows = read_table(labels).rows
        rows = {}
        for _, r in label_rows:
            facets = by_prefix.get(str(canonical_id(r.get("item")) or "").rsplit("|", 1)[0])
            if facets is not None:
                rows[canonical_id(r["item"])] = facets
        return pd.DataFrame.from_dict(rows, orient="index")
    if (run_dir / ITEMS_FILE).is_file():
        return _items_facets(run_dir / ITEMS_FILE)
    return pd.DataFrame()


def _items_facets(path: Path) -> pd.DataFrame:
    """The facets of a run's judged items (``items.jsonl``: every field but the id and the
    texts); ``lang`` also gives ``language`` where an item has no ``language`` (an item whose
    two disagree is refused by :func:`_table_facets`)."""
    frame = _table_facets(path, None)
    frame = frame.drop(columns=[c for c in TEXT_FIELDS if c in frame.columns])
    if "lang" in frame.columns:
        language = frame["lang"] if "language" not in frame.columns else frame["language"]
        frame["language"] = language.where(language.notna(), frame["lang"])
    return frame


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
        item = canonical_id(row.get(key)) or ""
        entry = facets.setdefault(item, {})
        values = {c: facet_value(c, row.get(c), path=path, line=line) for c in columns}
        check_item_languages(item, values, path=path, line=line)
        for column, value in values.items():
            if value is None:
                continue  # whitespace-only is empty: no value
            if entry.setdefault(column, value) != value and column == by:  # one value per item
                raise InputError(path, f"item '{item}': {column} is both '{entry[column]}' and "
                                 f"'{value}'", line=line, field=column)  # fmt: skip
    return pd.DataFrame.from_dict(facets, orient="index", columns=columns or None)
