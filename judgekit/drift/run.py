"""``judgekit drift compare``: the anchors, two runs' answers and their signatures in, the drift
document out (:func:`drift_compare`). No model is called."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

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
    fingerprints = _task_fingerprints(path.parent)
    if fingerprints:
        sig["task_fingerprints"] = fingerprints
    return sig


def _task_fingerprints(run_dir: Path) -> list[str]:
    """The last part of the judge's task keys in ``run_dir/records.jsonl`` (the hash of what
    reached the model: the prompt's text and options, label set, model, parameters:
    :func:`judgekit.pipelines.base.task_fingerprint`), sorted; [] without records."""
    from judgekit.results import read_records

    if not (run_dir / "records.jsonl").is_file():
        return []
    records = read_records(run_dir)
    judged = records[records["role"] == "judge"] if "role" in records else records
    return sorted({str(k).rsplit("|", 1)[-1] for k in judged["key"]})


def check_config_items(anchors: pd.DataFrame, config: str | Path,
                       overrides: tuple[str, ...] = ()) -> None:  # fmt: skip
    """Refuse a judge config whose items are not exactly the anchor items (by id), before any
    call is sent; a pipeline whose runner does not list its items (``items`` with ``id``) is
    not checked here.

    Raises:
        InputError: a bad config or input file; the items differ (the config, field ``items``:
            how many anchors the config lacks and how many items are no anchor, with examples).
    """
    from judgekit.config import load_config
    from judgekit.pipelines import get_pipeline

    cfg = load_config(config, list(overrides))
    runner_cls, _ = get_pipeline(cfg.pipeline)
    items = getattr(runner_cls(cfg, None), "items", None)  # reads the inputs, calls nothing
    if not items or not all(hasattr(i, "id") for i in items):
        return
    ours = {str(i.id).strip() for i in items}
    theirs = {str(i) for i in anchors["item"]}
    if ours == theirs:
        return
    lacking, extra = sorted(theirs - ours), sorted(ours - theirs)
    parts = [f"{len(lacking)} anchor(s) not among its items ({', '.join(lacking[:3])})"
             if lacking else "", f"{len(extra)} item(s) that are no anchor "
             f"({', '.join(extra[:3])})" if extra else ""]  # fmt: skip
    raise InputError(config, "the judge config's items must be the anchor items: it has "
                     + " and ".join(p for p in parts if p), field="items")  # fmt: skip


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

    The config's items must be the anchor items (same ids; :func:`check_config_items`). The
    only model calls of drift.

    Raises:
        InputError: a bad, unfrozen or changed anchor file, a bad config or baseline, a config
            whose items are not the anchor items.
    """
    from judgekit.data.atomic import write_frame
    from judgekit.data.jsonfile import write_json
    from judgekit.engine import run

    frame, _ = load_anchors(anchors)  # refuse a changed anchor set before any call is sent
    check_config_items(frame, config, overrides)
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
