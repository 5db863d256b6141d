"""``summary.json`` as display blocks: the headline figures, then every part of the summary.

The first block is the pipeline's headline (its viewer profile's ``headline``, beside its
report: the spilling rate with its CI, accuracy and positional agreement of a pairwise judge,
MQM by system, the CS share...), then every part of the summary, usage, files and the signature
last. Nothing of the summary is left out and no pipeline needs page code: a list of rows becomes
a table, a mapping of rows (``labels`` per rater) a table with a row per key, a mapping of
scalars a key/value block, and anything else pretty-printed JSON. Values stay as they are in the
summary (the page writes a list or a mapping of scalars in words, never as JSON); names are
shown readable (:func:`readable`: ``n_items`` as "items", ``macro_f1`` as "macro-F1"). Each
value carries its path in the summary as a list of keys (``["items", "planned"]``; table cells
add the row number and the column), so a page test can check every number shown against
summary.json itself.
"""

from __future__ import annotations

import json
from typing import Any

from judgekit.view.headline import Path_, readable, scalar
from judgekit.view.profiles import profile

Block = dict[str, Any]
FIRST = ("items",)
LAST = ("usage", "files")


def _flat(value: Any) -> bool:  # a scalar, or a small mapping / list of scalars shown inline
    if scalar(value):
        return True
    if isinstance(value, list):
        return all(scalar(v) for v in value)
    return isinstance(value, dict) and all(scalar(v) for v in value.values())


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


def headline(summary: dict[str, Any], pipeline: str) -> Block:
    """The headline block of a run: the headline rows of its pipeline's viewer profile
    (:func:`judgekit.view.profiles.profile`; items judged and planned for any other), each row
    ``[name, value, path, [low, high] | None]`` and, with a CI, the paths of its low and high
    bounds in the summary."""
    rows = profile(pipeline).headline(summary)
    return {"kind": "kv", "title": "headline", "path": ["headline"], "headline": True,
            "items": [r for r in rows if r is not None]}  # fmt: skip
