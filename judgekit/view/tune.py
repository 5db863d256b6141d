"""The ``calibrate tune`` result on a ``judgekit view`` card (issue 35).

``judgekit view TUNE_OUT`` shows the chosen candidate's run (``TUNE_OUT/<chosen>/``), and any run
that is a candidate of a tune output (its parent holds ``tune.json`` and ``splits.json``) gets
the tune's blocks on its card: the test-only report (figure with CI, gain over the baseline with
its paired CI and test, optimism, looks at the sealed test split, mode, the choice made without
each fold in nested mode, the human labels left out), the select-split ranking and the
per-facet figures with Cochran's Q, plus ``tune.png``. Every value is read from the tune
output's JSON files (``tune.json``, ``ranking.json``, ``looks.json``), never recomputed here;
each carries its path (``["tune", key]``) so a page test can check it against the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgekit.errors import InputError

TUNE_FILES = ("tune.json", "splits.json")
Block = dict[str, Any]


def is_tune_dir(path: Path) -> bool:
    """True when ``path`` is a ``calibrate tune`` output (tune.json and splits.json)."""
    return all((Path(path) / name).is_file() for name in TUNE_FILES)


def expand_tune_dirs(paths: list[str | Path]) -> list[Path]:
    """``paths`` with each tune output replaced by its chosen candidate's run directory.

    Raises InputError when a tune output's tune.json is unreadable or names no run directory.
    """
    out = []
    for path in map(Path, paths):
        if not is_tune_dir(path):
            out.append(path)
            continue
        chosen = _read(path / "tune.json").get("chosen")
        if not isinstance(chosen, str) or not (path / chosen).is_dir():
            raise InputError(path / "tune.json", f"no run directory for chosen {chosen!r}",
                             field="chosen")  # fmt: skip
        out.append(path / chosen)
    return out


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(path, f"unreadable: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(path, "expected a JSON object")
    return data


REPORT_KEYS = ("chosen", "statistic", "n_test", "test_figure", "test_ci", "baseline", "gain",
               "gain_ci", "test_name", "p_value", "optimism", "looks")  # fmt: skip


def _check_report(rep: dict[str, Any], path: Path) -> None:
    """Raise InputError naming ``path`` and the field when tune.json lacks a report key, its
    ``chosen``, ``baseline`` or ``statistic`` is no text, its ``notes`` or ``fold_choices`` are
    not lists of texts, or its ``facets`` are no ``{"values": {VALUE: {"figure": ...}}}`` (with
    ``by`` a text)."""
    for key in REPORT_KEYS:
        if key not in rep:
            raise InputError(path, "missing from the tune report", field=key)
    for key in ("chosen", "baseline", "statistic"):
        if not isinstance(rep[key], str):
            raise InputError(path, f"expected a text, got {json.dumps(rep[key])[:40]}", field=key)
    facets = rep.get("facets") or {}
    values = facets.get("values") if isinstance(facets, dict) else None
    if (
        not isinstance(facets, dict)
        or not isinstance(values or {}, dict)
        or not all(isinstance(d, dict) and "figure" in d for d in (values or {}).values())
    ):
        raise InputError(path, 'expected {"values": {VALUE: {"figure": ...}}}', field="facets")
    if values and not isinstance(rep.get("by"), str):
        raise InputError(path, "expected the facet's name (a text) with facets", field="by")
    for key in ("notes", "fold_choices"):
        texts = rep.get(key, [])
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            raise InputError(path, "expected a list of texts", field=key)


def _report_items(rep: dict[str, Any], this: str) -> list[list[Any]]:
    """kv rows ``[name, value, path, ci?, ci path?]`` of a tune.json report (checked by
    :func:`_check_report`)."""
    chosen = rep["chosen"] + (" (this run)" if rep["chosen"] == this else f" (not {this})")
    gain = "gain" if rep.get("mode", "split") == "split" else "gain of the procedure"
    rows = [
        ["chosen", chosen, ["tune", "chosen"]],
        ["mode", rep.get("mode", "split"), ["tune", "mode"]],
        ["statistic", rep["statistic"], ["tune", "statistic"]],
        ["test items", rep["n_test"], ["tune", "n_test"]],
        ["test figure", rep["test_figure"], ["tune", "test_figure"], rep["test_ci"],
         ["tune", "test_ci"]],
        [f"{gain} over {rep['baseline']}", rep["gain"], ["tune", "gain"], rep["gain_ci"],
         ["tune", "gain_ci"]],
        [f"paired test ({rep['test_name']}) p", rep["p_value"], ["tune", "p_value"]],
        ["optimism (select - test)", rep["optimism"], ["tune", "optimism"]],
        ["looks at the sealed test split", rep["looks"], ["tune", "looks"]],
    ]  # fmt: skip
    rows += [[f"chosen without fold {k + 1}", name, ["tune", "fold_choices", k]]
             for k, name in enumerate(rep.get("fold_choices", []))]  # fmt: skip
    notes = enumerate(rep.get("notes", []))
    return rows + [["left out", note, ["tune", "notes", i]] for i, note in notes]


def tune_blocks(run_dir: Path) -> tuple[list[Block], dict[str, bytes]]:
    """(display blocks, figures) of the tune output ``run_dir`` is a candidate of; ([], {})
    when it is none. Raises InputError for an unreadable tune.json or ranking.json, or a
    tune.json report of another shape (:func:`_check_report`)."""
    tune = Path(run_dir).parent
    if not is_tune_dir(tune):
        return [], {}
    rep = _read(tune / "tune.json")
    _check_report(rep, tune / "tune.json")
    title = "calibrate tune: report on the sealed test split"
    items = _report_items(rep, Path(run_dir).name)
    blocks: list[Block] = [{"kind": "kv", "title": title, "path": ["tune"], "items": items}]
    if (tune / "ranking.json").is_file():
        ranking = _read(tune / "ranking.json")
        rows = [[name, value] for name, value in ranking.get("select", [])]
        on = ranking.get("on", "select")
        blocks.append({"kind": "table", "title": f"calibrate tune: ranking on {on}",
                       "path": ["ranking"], "columns": ["candidate", ranking.get("statistic")],
                       "headers": ["candidate", f"{ranking.get('statistic')} on {on}"],
                       "rows": rows, "row_paths": [["ranking", r] for r in range(len(rows))],
                       "absent": []})  # fmt: skip
    facets = rep.get("facets") or {}
    if facets.get("values"):
        items = [[f"{rep['by']} {v}", d["figure"], ["tune", "facets", "values", v, "figure"]]
                 for v, d in facets["values"].items()]  # fmt: skip
        items.append(["Cochran's Q p", facets.get("p_value"), ["tune", "facets", "p_value"]])
        blocks.append({"kind": "kv", "title": f"calibrate tune: per {rep['by']} on test",
                       "path": ["tune", "facets"], "items": items})  # fmt: skip
    png = tune / "tune.png"
    return blocks, ({"tune.png": png.read_bytes()} if png.is_file() else {})
