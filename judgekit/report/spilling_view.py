"""The viewer profile of the spilling pipeline (paper 002): a generation or judge record's item,
label and units, its facets, the dictionary entries and generation links of its detail pane,
and the headline of its summary (:mod:`judgekit.view.profile`)."""

from __future__ import annotations

from typing import Any

from judgekit.data.digest import file_sha256
from judgekit.view.data import RunData
from judgekit.view.headline import Row, items_rows, row, value_at
from judgekit.view.profile import Profile, Record, meta_of, parsed_of


def _spilling_item(record: Record) -> str:
    generator = meta_of(record, "generator") or record.get("model")
    parts = (
        generator,
        meta_of(record, "lang"),
        meta_of(record, "word"),
        f"s{meta_of(record, 'sample')}",
    )
    return "|".join(str(p) for p in parts)


def _spilling_units(record: Record) -> list[tuple[str, str]]:
    valid = parsed_of(record).get("valid")
    if record.get("stage") != "judge" or not isinstance(valid, list):
        return []
    base = _spilling_item(record)
    return [(f"{base}|m{i}", str(bool(v)).lower()) for i, v in enumerate(valid)]


def _spilling_label(record: Record) -> str | None:
    valid = parsed_of(record).get("valid")
    if not isinstance(valid, list):
        return None
    return f"{sum(not v for v in valid)} of {len(valid)} invalid"


def _spilling_extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    from judgekit.lexicon.store import dictionaries_dir, load_dictionary
    from judgekit.pipelines.spilling import render_entry

    generated: dict[tuple[Any, ...], int] = {}
    for record in run.records:
        if record.get("stage") == "generate":
            meta = record.get("meta") or {}
            ident = (record.get("model"), meta.get("lang"), meta.get("word"), meta.get("sample"))
            generated[ident] = rows_by_key[record["key"]]
    links: dict[int, int] = {}
    wanted: set[tuple[str, str]] = set()
    for record in run.records:
        if record.get("stage") == "judge":
            meta = record.get("meta") or {}
            ident = (meta.get("generator"), meta.get("lang"), meta.get("word"), meta.get("sample"))
            if ident in generated:
                links[rows_by_key[record["key"]]] = generated[ident]
            wanted.add((str(meta.get("lang")), str(meta.get("translation"))))
    dictionary, changed = {}, []
    recorded = (run.summary.get("signature") or {}).get("data_sha256") or {}
    for lang in sorted({lang for lang, _ in wanted}):
        path = dictionaries_dir() / f"{lang}.jsonl"
        if path.is_file() and recorded.get(path.name) not in (None, file_sha256(path, 16)):
            changed.append(path.name)
        entries = load_dictionary(lang)
        for wlang, word in wanted:
            if wlang == lang and word in entries:
                dictionary[f"{lang}|{word}"] = render_entry(entries[word])
    out: dict[str, Any] = {"dictionary": dictionary, "generation": links}
    if changed:
        out["dictionary_note"] = (
            f"{', '.join(changed)} changed since this run (its sha256 differs from the run's "
            "signature): the entry shown is today's, not necessarily the one the judge saw"
        )
    return out


def _spilling(s: dict[str, Any]) -> list[Row | None]:
    out = [row(s, "spilling rate [95% CI]", ["spilling_rate"], ["spilling_rate_ci"])]
    models = value_at(s, ["rates", "by_model"]) or []
    if len(models) > 1:
        at = ["rates", "by_model"]
        out += [row(s, f"spilling rate, {r.get('model')}", [*at, i, "spilling_rate"])
                for i, r in enumerate(models)]  # fmt: skip
    return out + items_rows(s)


PROFILE = Profile(
    _spilling_item,
    _spilling_label,
    _spilling_units,
    ("lang", "generator"),
    extras=_spilling_extras,
    headline=_spilling,
)
