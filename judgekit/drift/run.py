"""``judgekit drift compare``: the anchors, two runs' answers and their signatures in, the drift
document out (:func:`drift_compare`). No model is called."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgekit.drift.anchors import anchor_frame, load_anchors, load_answers
from judgekit.drift.compare import compare_answers, compare_signatures
from judgekit.errors import InputError


def _signature(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read the run summary: {exc}") from None
    sig = data.get("signature", data) if isinstance(data, dict) else {}
    return sig if isinstance(sig, dict) else {}


def drift_compare(
    anchors: str | Path, before: str | Path, after: str | Path, *, kind: str = "label",
    alpha: float = 0.05, n_boot: int = 1000, seed: int = 0,
    before_summary: Path | None = None, after_summary: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Compare a judge's answers on a frozen anchor set before and after, per language.

    Returns :func:`judgekit.report.drift.drift_document`'s dict: ``drifted`` (any language's
    Holm-adjusted p < alpha), ``groups`` (one :class:`judgekit.drift.DriftCheck` row each),
    ``signature_changes`` (:func:`judgekit.drift.compare_signatures` of the two runs'
    ``summary.json`` signatures, where given) and the anchors' hash.

    Raises:
        InputError: a bad, unfrozen or changed anchor file, a bad answers file, a bad kind.
    """
    from judgekit.report.drift import drift_document

    if not 0 < alpha < 1:
        raise InputError(None, f"alpha must be in (0, 1), not {alpha}")
    frame, digest = load_anchors(anchors)
    data = anchor_frame(frame, load_answers(before), load_answers(after), kind)
    checks = compare_answers(data, kind=kind, alpha=alpha, n_boot=n_boot, seed=seed)
    changes = compare_signatures(_signature(before_summary), _signature(after_summary))
    return drift_document(checks, digest, changes, alpha)
