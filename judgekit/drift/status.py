"""``judgekit drift status``: the results that depended on a drifted judge, marked stale.

A result is a JSON file with a judgekit ``signature`` (a run's ``summary.json``, an estimate's or
a gate's ``--json`` document). It is **stale** where the drift document says the judge drifted and
either the result's signature names one of the judge's models (same route and name), or one of
the files it read (its signature's ``data``) lies in a run directory whose ``summary.json`` names
it: an estimate or a gate computed from that judge's labels.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgekit.errors import InputError


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _signature(data: Any) -> dict[str, Any]:
    sig = data.get("signature") if isinstance(data, dict) else None
    return sig if isinstance(sig, dict) else {}


def _named(sig: dict[str, Any], judges: set[tuple[str, str]]) -> str | None:
    for model in sig.get("models") or []:
        if isinstance(model, dict) and (model.get("name"), model.get("route")) in judges:
            return f"{model.get('name')}={model.get('route')}"
    return None


def load_drift(path: str | Path) -> dict[str, Any]:
    """A drift document (``drift run``'s ``drift.json`` or ``drift compare --record``).
    Raises InputError when it is unreadable or has no ``drifted`` / ``judge_models``."""
    data = _json(Path(path))
    if not isinstance(data, dict) or "drifted" not in data:
        raise InputError(path, "not a drift document (no 'drifted' field)")
    if not data.get("judge_models"):
        raise InputError(path, "names no judge model (compare with the runs' summary.json)",
                         field="judge_models")  # fmt: skip
    return data


def stale_results(drift: dict[str, Any], folders: list[Path]) -> list[dict[str, str]]:
    """Every result under ``folders`` (recursively, ``*.json``) that depended on the drifted
    judge: ``{"path", "pipeline", "reason"}`` rows, sorted by path; empty when nothing drifted.
    The drift document's own run (its ``drift.json`` folder) is left out."""
    if not drift.get("drifted"):
        return []
    reason_of = StaleCheck(drift)
    rows = []
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.json")):
            if (path.parent / "drift.json").is_file():
                continue
            sig = _signature(_json(path))
            reason = reason_of(sig) if sig else None
            if reason:
                rows.append({"path": str(path), "pipeline": str(sig.get("pipeline")),
                             "reason": reason})  # fmt: skip
    return rows


class StaleCheck:
    """Why a result is stale under the drift document ``drift`` (see the module doc):
    ``StaleCheck(drift)(signature)`` is ``"names the judge NAME=ROUTE"``, ``"reads FILE, judged
    by NAME=ROUTE"`` or None (not stale, or nothing drifted). ``signature`` is a result's
    signature dict; the run directories its data files lie in are read once each."""

    def __init__(self, drift: dict[str, Any]) -> None:
        self.drifted = bool(drift.get("drifted"))
        self.judges = {(m.get("name"), m.get("route")) for m in drift.get("judge_models") or []
                       if isinstance(m, dict)}  # fmt: skip
        self._runs: dict[Path, str | None] = {}

    def _run_names(self, folder: Path) -> str | None:
        if folder not in self._runs:
            sig = _signature(_json(folder / "summary.json"))
            self._runs[folder] = _named(sig, self.judges)
        return self._runs[folder]

    def __call__(self, sig: dict[str, Any]) -> str | None:
        if not self.drifted:
            return None
        named = _named(sig, self.judges)
        if named:
            return f"names the judge {named}"
        for file in sig.get("data") or {}:
            if by := self._run_names(Path(file).parent):
                return f"reads {file}, judged by {by}"
        return None
