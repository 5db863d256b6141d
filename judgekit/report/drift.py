"""The outputs of ``judgekit drift compare``: the console table and the JSON document."""

from __future__ import annotations

from typing import Any

from judgekit.drift.compare import DriftCheck


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or value != value else f"{value:.{digits}f}"


def drift_document(checks: list[DriftCheck], anchors_hash: str, signature_changes: list[str],
                   alpha: float) -> dict[str, Any]:  # fmt: skip
    """The ``--json`` document: the anchor set's hash, alpha, the family, whether any language
    drifted, the signature changes and one row per language."""
    return {"anchors_sha256": anchors_hash, "alpha": alpha,
            "family": f"Holm over {len(checks)} group(s)",
            "drifted": any(c.drifted for c in checks),
            "drifted_groups": [c.group for c in checks if c.drifted],
            "signature_changes": signature_changes,
            "groups": [c.to_dict() for c in checks]}  # fmt: skip


def print_drift(document: dict[str, Any], console: Any) -> None:
    """The console table: one row per language, then the verdict and any signature change."""
    from rich.table import Table
    from rich.text import Text

    level = f"{1 - document['alpha']:.0%}"
    table = Table(title="judgekit drift: " + ("DRIFT" if document["drifted"] else "no drift"))
    names = ("group", "n", "metric", "before", "after", "change", f"{level} CI", "p (Holm)")
    for name in (*names, "flip rate", f"{level} flip CI", "detectable drop", "drifted"):
        table.add_column(name)
    for g in document["groups"]:
        table.add_row(*(Text(str(v)) for v in (
            g["group"], g["n"], g["metric"], _num(g["before"]), _num(g["after"]),
            _num(g["change"]), f"[{_num(g['ci_low'])}, {_num(g['ci_high'])}]",
            f"{g['p_adjusted']:.2g}", _num(g["flip_rate"]),
            f"[{_num(g['flip_low'])}, {_num(g['flip_high'])}]", _num(g["detectable_drop"]),
            "yes" if g["drifted"] else "no")))  # fmt: skip
    console.print(table)
    console.print(Text(f"anchors sha256 {document['anchors_sha256'][:12]}; alpha "
                       f"{document['alpha']:g}, {document['family']}"))  # fmt: skip
    if document.get("anchors_incomplete"):
        console.print(
            Text(
                f"{document['anchors_incomplete']} of {document['anchors']} anchors "
                "left out: a missing human label or answer (empty, NA, nan)"
            )
        )
    for change in document["signature_changes"]:
        console.print(Text(f"signature changed: {change}"))
