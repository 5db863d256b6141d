"""The headline rows of a run's summary (:func:`judgekit.view.summary.headline`): the helpers
each pipeline's headline (beside its report, named by its viewer profile) is built from.

A row is ``[name, value, path in summary.json, [low, high] | None]`` and, with a CI, the paths
of its low and high bounds, so a page test can check every number shown against summary.json.
"""

from __future__ import annotations

from typing import Any

Path_ = list[str | int]  # keys (and row numbers) from the top of summary.json
Row = list[Any]  # [name, value, path in summary.json, CI [low, high] or None, CI's paths]

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


def scalar(value: Any) -> bool:
    """True for None, a string, a number or a boolean."""
    return value is None or isinstance(value, (str, int, float, bool))


def value_at(summary: dict[str, Any], path: Path_) -> Any:
    """The value at ``path`` in ``summary``, None where there is none."""
    value: Any = summary
    for part in path:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def row(summary: dict[str, Any], name: str, path: Path_, ci: Path_ | list[Path_] | None = None):
    """A headline row; ``ci``: the path of a ``[low, high]`` list, or the paths of low and
    high. None when the summary has no value there."""
    value = value_at(summary, path)
    if value is None:
        return None
    where: list[Path_] | None = None
    if ci is not None and ci and isinstance(ci[0], list):
        where = [ci[0], ci[1]]  # type: ignore[list-item]
    elif ci is not None:
        where = [[*ci, 0], [*ci, 1]]  # type: ignore[list-item]
    bounds = [value_at(summary, w) for w in where] if where else None
    if bounds is None or None in bounds:
        return [name, value, path, None]
    return [name, value, path, bounds, where]


def with_ci(s: dict[str, Any], name: str, at: Path_, key: str) -> Row | None:
    """A row of ``key`` at ``at`` with its CI in ``key_low`` / ``key_high`` beside it."""
    return row(s, name, [*at, key], [[*at, f"{key}_low"], [*at, f"{key}_high"]])


def items_rows(summary: dict[str, Any]) -> list[Row | None]:
    """Items judged and planned: the headline of any pipeline without its own."""
    return [row(summary, "items judged", ["items", "judged"]),
            row(summary, "items planned", ["items", "planned"])]  # fmt: skip


def rows_of(summary: dict[str, Any], key: str) -> list[tuple[int, dict[str, Any]]]:
    """(index, row) of the mapping rows of the list at ``key``."""
    rows = value_at(summary, [key])
    return (
        [(i, r) for i, r in enumerate(rows) if isinstance(r, dict)]
        if isinstance(rows, list)
        else []
    )
