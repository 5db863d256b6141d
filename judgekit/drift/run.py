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
    """The run's signature from its ``summary.json`` (or a signature file), with the judge's
    ``served_model`` and ``system_fingerprint`` values (``usage.served``) added where the
    provider sent them; {} for no path or a run with no summary."""
    if path is None:
        return {}
    path = Path(path)
    if path.is_dir():
        path = path / "summary.json"
        if not path.is_file():
            return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read the run summary: {exc}") from None
    sig = data.get("signature", data) if isinstance(data, dict) else {}
    sig = dict(sig) if isinstance(sig, dict) else {}
    usage = data.get("usage") if isinstance(data, dict) else None
    served = usage.get("served") if isinstance(usage, dict) else None
    for name in ("served_model", "system_fingerprint"):
        seen = sorted({v for k, who in (served or {}).items() if str(k).startswith("judge|")
                       for v in (who.get(name) or {})})  # fmt: skip
        if seen:
            sig[name] = seen
    return sig


def drift_compare(
    anchors: str | Path, before: str | Path, after: str | Path, *, kind: str = "label",
    alpha: float = 0.05, n_boot: int = 1000, seed: int = 0,
    before_summary: Path | None = None, after_summary: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Compare a judge's answers on a frozen anchor set before and after, per language.

    Returns :func:`judgekit.report.drift.drift_document`'s dict: ``drifted`` (any language's
    Holm-adjusted p < alpha), ``groups`` (one :class:`judgekit.drift.DriftCheck` row each),
    ``signature_changes`` (:func:`judgekit.drift.compare_signatures` of the two runs'
    ``summary.json`` signatures, where given), ``judge_models`` (the baseline's judge models
    from its signature, for ``drift status``), the anchors' hash, ``anchors`` (their number)
    and ``anchors_incomplete`` (anchors left out: no human label or a run without an answer).

    Raises:
        InputError: a bad, unfrozen or changed anchor file, a bad answers file, a bad kind.
    """
    from judgekit.report.drift import drift_document

    if not 0 < alpha < 1:
        raise InputError(None, f"alpha must be in (0, 1), not {alpha}")
    frame, digest = load_anchors(anchors, kind)
    data = anchor_frame(frame, load_answers(before, kind), load_answers(after, kind), kind)
    incomplete = int(data[["human", "before", "after"]].isna().any(axis=1).sum())
    checks = compare_answers(data, kind=kind, alpha=alpha, n_boot=n_boot, seed=seed)
    old, new = _signature(before_summary), _signature(after_summary)
    changes = compare_signatures(old, new)
    judges = [m for m in (old.get("models") or new.get("models") or [])
              if isinstance(m, dict) and m.get("role") == "judge"]  # fmt: skip
    document = drift_document(checks, digest, changes, alpha)
    return {**document, "anchors": len(data), "anchors_incomplete": incomplete,
            "judge_models": judges}  # fmt: skip


def drift_run(
    anchors: str | Path, config: str | Path, baseline: str | Path, out: str | Path, *,
    overrides: tuple[str, ...] = (), kind: str = "label", alpha: float = 0.05,
    n_boot: int = 1000, seed: int = 0,
) -> dict[str, Any]:  # fmt: skip
    """Rerun the judge of ``config`` on the frozen anchor set (response cache bypassed: every
    anchor is sent to the model again) into ``out``, compare its answers with ``baseline`` (an
    answers file or the baseline run's directory, whose ``summary.json`` signature is compared
    too) as :func:`drift_compare` does, and write ``out/answers.csv`` (item, answer) and
    ``out/drift.json`` (the document, for ``drift status``).

    The config's items must be the anchor items (same ids). The only model calls of drift.

    Raises:
        InputError: a bad, unfrozen or changed anchor file, a bad config or baseline.
    """
    from judgekit.data.atomic import write_frame
    from judgekit.data.jsonfile import write_json
    from judgekit.engine import run

    load_anchors(anchors)  # refuse a changed anchor set before any call is sent
    result = run(config, overrides, out=out, no_cache=True)
    answers = load_answers(result.out_dir)
    frame = answers.rename("answer").rename_axis("item").reset_index()
    write_frame(frame, Path(result.out_dir) / "answers.csv", index=False)
    base = Path(baseline)
    document = drift_compare(anchors, base, result.out_dir, kind=kind, alpha=alpha,
                             n_boot=n_boot, seed=seed,
                             before_summary=base if base.is_dir() else None,
                             after_summary=Path(result.out_dir))  # fmt: skip
    write_json(Path(result.out_dir) / "drift.json", document)
    return document
