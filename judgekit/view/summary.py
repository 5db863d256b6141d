"""``summary.json`` as display blocks: the headline figures, then every part of the summary.

The first block is the pipeline's headline (:data:`HEADLINES`: the spilling rate with its CI,
accuracy and positional agreement of a pairwise judge, MQM by system, the CS share...), then
every part of the summary, usage, files and the signature last. Nothing of the summary is left
out and no pipeline needs page code: a list of rows becomes a table, a mapping of rows
(``labels`` per rater) a table with a row per key, a mapping of scalars a key/value block, and
anything else pretty-printed JSON. Values stay as they are in the summary (the page writes a
list or a mapping of scalars in words, never as JSON); names are shown readable
(:func:`readable`: ``n_items`` as "items", ``macro_f1`` as "macro-F1"). Each value carries its
path in the summary as a list of keys (``["items", "planned"]``; table cells add the row number
and the column), so a page test can check every number shown against summary.json itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Block = dict[str, Any]
Path_ = list[str | int]  # keys (and row numbers) from the top of summary.json
FIRST = ("items",)
LAST = ("usage", "files")
NAMES = {"macro_f1": "macro-F1", "kappa": "Cohen's kappa", "n_cs": "CS items", "n_tie": "ties",
         "n_common": "common items", "mean_mqm": "mean MQM", "mqm": "MQM",
         "mean_mqm_common": "mean MQM, common items", "std_item_rate": "SD of item rates",
         "n": "n", "ci": "95% CI"}  # fmt: skip
WORDS = {"ci": "CI", "std": "SD", "mqm": "MQM", "cs": "CS", "ts": "time-sensitive", "f1": "F1",
         "en": "English", "sd": "SD", "id": "id"}  # fmt: skip


def readable(key: object) -> str:
    """A summary key as a column or row name: ``n_items`` -> "items", ``spilling_rate`` ->
    "spilling rate", ``cs_ci_low`` -> "CS CI low" (:data:`NAMES` first, then word by word)."""
    text = str(key)
    if text in NAMES:
        return NAMES[text]
    words = text.split("_")
    if len(words) > 1 and words[0] == "n":
        words = words[1:]
    return " ".join(WORDS.get(w, w) for w in words)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _flat(value: Any) -> bool:  # a scalar, or a small mapping / list of scalars shown inline
    if _scalar(value):
        return True
    if isinstance(value, list):
        return all(_scalar(v) for v in value)
    return isinstance(value, dict) and all(_scalar(v) for v in value.values())


def _table(
    title: str, path: Path_, rows: list[dict[str, Any]], keys: list[str] | None = None
) -> Block:
    """A table block; ``keys``: the mapping keys of the rows (a first, unnamed column)."""
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    body = [[row.get(c) for c in columns] for row in rows]
    absent = [[r, c + bool(keys)] for r, row in enumerate(rows)
              for c, name in enumerate(columns) if name not in row]  # fmt: skip
    row_paths = [[*path, k] for k in keys] if keys else [[*path, r] for r in range(len(rows))]
    if keys:
        columns, body = ["", *columns], [[k, *cells] for k, cells in zip(keys, body, strict=True)]
    return {"kind": "table", "title": readable_path(title), "path": path, "columns": columns,
            "headers": [readable(c) if c else "" for c in columns], "rows": body,
            "row_paths": row_paths, "absent": absent}  # fmt: skip


def readable_path(title: str) -> str:
    """A block title (``rates / by_lang``) with each part readable."""
    return " / ".join(readable(part) for part in title.split(" / "))


def blocks_of(value: Any, title: str, path: Path_, depth: int = 0) -> list[Block]:
    """Display blocks for the summary part ``value`` found at ``path`` (module doc)."""
    if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        return [_table(title, path, value)]
    if (
        isinstance(value, dict)
        and value
        and all(isinstance(v, dict) and all(_flat(x) for x in v.values()) for v in value.values())
    ):
        return [_table(title, path, list(value.values()), keys=[str(k) for k in value])]
    if isinstance(value, dict) and depth < 3:
        flat = {k: v for k, v in value.items() if _flat(v)}
        out: list[Block] = []
        if flat:
            items = []
            for k, v in flat.items():
                if isinstance(v, dict) and v:  # {reason: n}: one line each
                    items += [[f"{readable(k)}: {readable(sub)}", x, [*path, k, sub]]
                              for sub, x in v.items()]  # fmt: skip
                else:
                    items.append([readable(k), v, [*path, k]])
            out.append({"kind": "kv", "title": readable_path(title), "path": path,
                        "items": items})  # fmt: skip
        for k, v in value.items():
            if k not in flat:
                out += blocks_of(v, f"{title} / {k}", [*path, k], depth + 1)
        return out
    if _flat(value):
        name = readable_path(title)
        return [{"kind": "kv", "title": name, "path": path, "items": [[name, value, path]]}]
    text = json.dumps(value, ensure_ascii=False, indent=1)
    return [{"kind": "json", "title": readable_path(title), "path": path, "text": text}]


def signature_line(signature: dict[str, Any]) -> str:
    """One line naming what made the numbers: judgekit version, pipeline, models (route and
    name), prompts (id and hash), samples and sizes; the full signature is shown below it."""
    parts = [f"judgekit {signature.get('judgekit', '?')}", str(signature.get("pipeline", "?"))]
    parts += _model_parts(signature)
    prompts = signature.get("prompts") or signature.get("prompt")
    if isinstance(prompts, dict) and "id" in prompts:
        prompts = {prompts["id"]: prompts.get("hash") or prompts.get("sha256")}
    if isinstance(prompts, dict):
        parts.append("prompts " + ", ".join(f"{k}@{str(v)[:8]}" for k, v in prompts.items()))
    parameters = signature.get("parameters")
    sized = {**(parameters if isinstance(parameters, dict) else {}), **signature}
    for key, value in sized.items():
        if key.startswith("n_") or key in ("samples", "seed"):
            parts.append(f"{key} {value}")
    return " · ".join(parts)


def _model_parts(signature: dict[str, Any]) -> list[str]:
    """ "<role> <route> (<name>), ..." per role, from ``models`` ([{role, name, route}], as
    ``judgekit run`` writes it) and the older per-role keys (judge, judges, generators...)."""
    by_role: dict[str, list[str]] = {}
    models = signature.get("models")
    for spec in models if isinstance(models, list) else []:
        if isinstance(spec, dict):
            by_role.setdefault(str(spec.get("role") or "model"), []).append(
                f"{spec.get('route')} ({spec.get('name')})"
            )
    for role in ("judge", "judges", "generators", "translator"):
        specs = signature.get(role)
        specs = [specs] if isinstance(specs, dict) else specs or []
        for spec in specs if isinstance(specs, list) else []:
            if isinstance(spec, dict):
                by_role.setdefault(role, []).append(f"{spec.get('route')} ({spec.get('name')})")
    return [f"{role} " + ", ".join(dict.fromkeys(named)) for role, named in by_role.items()]


def summary_blocks(summary: dict[str, Any], pipeline: str = "") -> list[Block]:
    """Every part of ``summary`` as blocks: the headline of ``pipeline`` first (always there,
    for the page to add its figures to), items, then the pipeline's own parts, usage and files
    last, the signature at the end."""
    keys = [k for k in FIRST if k in summary]
    keys += [k for k in summary if k not in (*FIRST, *LAST, "signature")]
    keys += [k for k in LAST if k in summary]
    out: list[Block] = [headline(summary, pipeline)]
    for key in keys:
        out += blocks_of(summary[key], key, [key])
    if "signature" in summary:
        out += blocks_of(summary["signature"], "signature", ["signature"])
    return out


# -- the headline ----------------------------------------------------------------------------
Row = list[Any]  # [name, value, path in summary.json, CI [low, high] or None, CI's paths]


def _at(summary: dict[str, Any], path: Path_) -> Any:
    value: Any = summary
    for part in path:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _row(summary: dict[str, Any], name: str, path: Path_, ci: Path_ | list[Path_] | None = None):
    """A headline row; ``ci``: the path of a ``[low, high]`` list, or the paths of low and
    high. None when the summary has no value there."""
    value = _at(summary, path)
    if value is None:
        return None
    where: list[Path_] | None = None
    if ci is not None and ci and isinstance(ci[0], list):
        where = [ci[0], ci[1]]  # type: ignore[list-item]
    elif ci is not None:
        where = [[*ci, 0], [*ci, 1]]  # type: ignore[list-item]
    bounds = [_at(summary, w) for w in where] if where else None
    if bounds is None or None in bounds:
        return [name, value, path, None]
    return [name, value, path, bounds, where]


def _with_ci(s: dict[str, Any], name: str, at: Path_, key: str) -> Row | None:
    """A row of ``key`` at ``at`` with its CI in ``key_low`` / ``key_high`` beside it."""
    return _row(s, name, [*at, key], [[*at, f"{key}_low"], [*at, f"{key}_high"]])


def _items(summary: dict[str, Any]) -> list[Row | None]:
    return [_row(summary, "items judged", ["items", "judged"]),
            _row(summary, "items planned", ["items", "planned"])]  # fmt: skip


def _rows_of(summary: dict[str, Any], key: str) -> list[tuple[int, dict[str, Any]]]:
    rows = _at(summary, [key])
    return (
        [(i, r) for i, r in enumerate(rows) if isinstance(r, dict)]
        if isinstance(rows, list)
        else []
    )


def _spilling(s: dict[str, Any]) -> list[Row | None]:
    out = [_row(s, "spilling rate [95% CI]", ["spilling_rate"], ["spilling_rate_ci"])]
    models = _at(s, ["rates", "by_model"]) or []
    if len(models) > 1:
        at = ["rates", "by_model"]
        out += [_row(s, f"spilling rate, {r.get('model')}", [*at, i, "spilling_rate"])
                for i, r in enumerate(models)]  # fmt: skip
    return out + _items(s)


def _classify(s: dict[str, Any]) -> list[Row | None]:
    labels = _at(s, ["labels"]) or {}
    return _items(s) + [_row(s, f"labels of {rater}", ["labels", rater]) for rater in labels]


def _pairwise(s: dict[str, Any]) -> list[Row | None]:
    out: list[Row | None] = []
    for i, r in _rows_of(s, "judges"):
        if r.get("source") != "run":
            continue
        name, at = f"{r.get('judge')} ({r.get('subset')})", ["judges", i]
        out += [_with_ci(s, f"accuracy vs gold [95% CI], {name}", at, "accuracy"),
                _row(s, f"positional agreement, {name}", [*at, "positional_agreement"]),
                _row(s, f"first-position win rate, {name}", [*at, "first_position_win_rate"]),
                _with_ci(s, f"resolved accuracy [95% CI], {name}", at,
                         "resolved_accuracy")]  # fmt: skip
    return out + [_row(s, "pairs consistent", ["resolution", "consistent"]),
                  _row(s, "pairs inconsistent", ["resolution", "inconsistent"])]  # fmt: skip


def _errors(s: dict[str, Any]) -> list[Row | None]:
    out: list[Row | None] = []
    for i, r in _rows_of(s, "type_counts"):
        system = r.get("system")
        at = ["type_counts", i]
        out += [_row(s, f"mean MQM, system {system}", [*at, "mean_mqm"]),
                _row(s, f"segments scored, system {system}", [*at, "n_scored"])]  # fmt: skip
    calibration = _at(s, ["calibration"])
    if isinstance(calibration, dict):
        out += [_row(s, f"vs human MQM: {readable(k)}", ["calibration", k])
                for k, v in calibration.items() if _scalar(v)]  # fmt: skip
    return out


def _cultural(s: dict[str, Any]) -> list[Row | None]:
    at = ["shares", "all", 0]
    return [_row(s, "CS share [95% CI]", [*at, "cs_share"],
                 [[*at, "cs_ci_low"], [*at, "cs_ci_high"]]),
            _row(s, "time-sensitive share [95% CI]", [*at, "ts_share"],
                 [[*at, "ts_ci_low"], [*at, "ts_ci_high"]]),
            _row(s, "CS/CA consistent with the rule", ["checks", "rule_consistent_share"]),
            _row(s, "self-consistency over samples", ["checks", "self_consistency"]),
            *_items(s)]  # fmt: skip


def _localise(s: dict[str, Any]) -> list[Row | None]:
    return [_row(s, f"localised, {r.get('model')} {r.get('locale')}", ["by_locale", i, "localised"])
            for i, r in _rows_of(s, "by_locale")] + _items(s)  # fmt: skip


HEADLINES: dict[str, Callable[[dict[str, Any]], list[Row | None]]] = {
    "spilling": _spilling, "classify": _classify, "pairwise": _pairwise, "errors": _errors,
    "cultural": _cultural, "localise": _localise,
}  # fmt: skip


def headline(summary: dict[str, Any], pipeline: str) -> Block:
    """The headline block of a run: :data:`HEADLINES` of its pipeline (items judged and
    planned for any other), each row ``[name, value, path, [low, high] | None]`` and, with a
    CI, the paths of its low and high bounds in the summary."""
    rows = HEADLINES.get(pipeline, _items)(summary)
    return {"kind": "kv", "title": "headline", "path": ["headline"], "headline": True,
            "items": [r for r in rows if r is not None]}  # fmt: skip
