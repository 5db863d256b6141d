"""The seeded draw of the items to label and ``selection.csv``, its one reader and writer.

``selection.csv`` has the columns ``item, inclusion_probability, stratum, reason, design``:
one row per item drawn, with the probability it had of being drawn (so that labels imported
for it can be weighted by its inverse), its stratum (``all`` outside the stratified design) and
why it was drawn (``uniform``, ``uncertainty 0.412``, ``neyman n_h/N_h``).

Draws: the uniform and active designs use Poisson sampling (each item drawn independently with
its probability; Zrnic & Candès 2024, Sec. 3); the stratified design draws ``n_h`` items without
replacement in each stratum (Fisch et al. 2024, Sec. 4). Sequential mode: items already labelled
in an earlier round are left out of the population of the next one, whose probabilities are
planned anew (their estimate combines the rounds by their own weights).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from judgekit.calibration.design import DESIGNS
from judgekit.calibration.design.probabilities import (
    active_probabilities,
    neyman_allocation,
    uniform_probabilities,
)
from judgekit.data.atomic import open_output
from judgekit.errors import InputError

COLUMNS = ("item", "inclusion_probability", "stratum", "reason", "design", "round")


@dataclass(frozen=True)
class Selected:
    """One drawn item: id, inclusion probability in (0, 1], stratum, reason, design name and
    round (1, 2, ...: sequential mode; the probability is the one its round planned)."""

    item: str
    probability: float
    stratum: str
    reason: str
    design: str
    round: int = 1


def draw(
    items: list[str],
    design: str,
    budget: int,
    *,
    uncertainty: np.ndarray | None = None,
    floor: float = 0.2,
    strata: list[str] | None = None,
    sigmas: dict[str, float] | None = None,
    exclude: set[str] | None = None,
    seed: int = 0,
    note: str = "",
    round_no: int = 1,
) -> list[Selected]:
    """Draw the items to label under ``design`` (uniform, active, stratified), seeded.

    ``items``: the N item ids; ``budget``: expected labels (uniform, active) or exact labels
    (stratified); ``uncertainty``: shape (N,), required by active; ``strata`` (length N) and
    ``sigmas`` (per stratum, from a pilot) for stratified; ``exclude``: items labelled in an
    earlier round (sequential mode), left out of this one; ``note``: appended to each reason
    (e.g. the pilot's verdict); ``round_no``: the round written with each row. Raises ValueError
    on a bad design or a missing input.
    """
    if design not in DESIGNS:
        raise ValueError(f"unknown design {design!r}: one of {', '.join(DESIGNS)}")
    keep = [i for i, item in enumerate(items) if item not in (exclude or set())]
    ids = [items[i] for i in keep]
    rng = np.random.default_rng(seed)
    if design == "stratified":
        if strata is None:
            raise ValueError("the stratified design needs a stratum per item")
        rows = _draw_strata(ids, [strata[i] for i in keep], budget, sigmas or {}, rng)
        return [replace(r, round=round_no) for r in rows]
    if design == "active":
        if uncertainty is None:
            raise ValueError("the active design needs the judge's uncertainty per item")
        u = np.asarray(uncertainty, dtype=float)[keep]
        pi = active_probabilities(u, min(budget, len(ids)), floor)
        reasons = [f"uncertainty {x:.3g}" for x in u]
    else:
        pi = uniform_probabilities(len(ids), min(budget, len(ids)))
        reasons = ["uniform"] * len(ids)
    hit = rng.random(len(ids)) < pi
    if note:
        reasons = [f"{r}; {note}" for r in reasons]
    return [Selected(ids[i], float(pi[i]), "all", reasons[i], design, round_no)
            for i in np.flatnonzero(hit)]  # fmt: skip


def _draw_strata(
    ids: list[str],
    strata: list[str],
    budget: int,
    sigmas: dict[str, float],
    rng: np.random.Generator,
) -> list[Selected]:
    groups: dict[str, list[str]] = {}
    for item, h in zip(ids, strata, strict=True):
        groups.setdefault(h, []).append(item)
    alloc = neyman_allocation({h: len(g) for h, g in groups.items()}, sigmas, budget)
    out = []
    for h, members in groups.items():
        n_h = alloc[h]
        for item in rng.choice(members, size=n_h, replace=False):
            out.append(Selected(str(item), n_h / len(members), h,
                                f"neyman {n_h}/{len(members)}", "stratified"))  # fmt: skip
    return out


def write_selection(path: Path, rows: list[Selected]) -> None:
    """Write ``selection.csv`` (columns :data:`COLUMNS`), creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_output(path, newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([r.item, repr(r.probability), r.stratum, r.reason, r.design, r.round])


def read_selection(path: Path) -> list[Selected]:
    """Read ``selection.csv``; InputError naming file, line and field on a bad row.

    Every row needs an item, a probability in (0, 1] and a design of :data:`DESIGNS`; a
    ``round`` (default 1) holds one design; an item appears once.
    """
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [
            c
            for c in ("item", "inclusion_probability", "design")
            if c not in (reader.fieldnames or [])
        ]
        if missing:
            raise InputError(
                path, f"missing column(s) {', '.join(missing)}", line=1, field=missing[0]
            )
        rows = [_row(path, n, r) for n, r in enumerate(reader, start=2)]
    first: dict[int, tuple[int, str]] = {}  # round -> (line, design) of its first row
    for line, r in enumerate(rows, start=2):
        at, design = first.setdefault(r.round, (line, r.design))
        if r.design != design:
            raise InputError(path, f"round {r.round} mixes designs: this row is {r.design!r} but "
                             f"line {at} (the round's first row) is {design!r}; a round holds "
                             "one design", line=line, field="design")  # fmt: skip
    seen: set[str] = set()
    for line, r in enumerate(rows, start=2):
        if r.item in seen:
            raise InputError(path, f"item {r.item!r} drawn twice", line=line, field="item")
        seen.add(r.item)
    return rows


def _row(path: Path, line: int, r: dict[str, str]) -> Selected:
    item = (r.get("item") or "").strip()
    if not item:
        raise InputError(path, "empty item", line=line, field="item")
    try:
        p = float(r.get("inclusion_probability") or "")
    except ValueError:
        p = float("nan")
    if not 0 < p <= 1:
        raise InputError(path, f"inclusion probability {r.get('inclusion_probability')!r} is not "
                         "in (0, 1]", line=line, field="inclusion_probability")  # fmt: skip
    design = (r.get("design") or "").strip()
    if design not in DESIGNS:
        raise InputError(path, f"design {design!r} is not one of {', '.join(DESIGNS)}", line=line,
                         field="design")  # fmt: skip
    try:
        rnd = int((r.get("round") or "1").strip())
    except ValueError:
        rnd = 0
    if rnd < 1:
        raise InputError(path, f"round {r.get('round')!r} is not an integer >= 1", line=line,
                         field="round")  # fmt: skip
    return Selected(item, p, (r.get("stratum") or "all").strip() or "all",
                    (r.get("reason") or "").strip(), design, rnd)  # fmt: skip


MIN_EFFECTIVE = 10  # Kish effective labels below which no weighted interval is given


def check_against(path: Path, rows: list[Selected], judged: set[str], labelled: list[str]) -> None:
    """Check ``rows`` (read from ``path``, in file order) against the judge's run and the labels.

    ``judged``: the judge's items; ``labelled``: the last round's human-labelled items of an
    active design (empty otherwise). Raises InputError naming the line: an item the judge did
    not judge (the selection belongs to another run, or was edited), or inclusion
    probabilities whose weights 1/p leave fewer than :data:`MIN_EFFECTIVE` Kish effective labels
    ``(sum w)^2 / sum w^2`` (Kish 1965, Sec. 11.7): one probability far below the others (a
    hand edit, say) makes the estimate rest on one label while its interval narrows."""
    lines = {r.item: n for n, r in enumerate(rows, start=2)}
    for r in rows:
        if r.item not in judged:
            raise InputError(path, f"item {r.item!r} is not an item of the judge's run",
                             line=lines[r.item], field="item")  # fmt: skip
    if not labelled:
        return
    chosen = {r.item: r for r in rows}
    p = np.array([chosen[i].probability for i in labelled])
    w = 1 / p
    effective = w.sum() ** 2 / (w**2).sum()
    if effective < MIN_EFFECTIVE:
        low = labelled[int(np.argmin(p))]
        raise InputError(path, f"the inclusion probabilities of the {len(labelled)} labelled "
                         f"items leave {effective:.1f} effective labels (Kish), under "
                         f"{MIN_EFFECTIVE}: no weighted interval is valid; the smallest is "
                         f"{chosen[low].probability:.3g} (item {low!r})", line=lines[low],
                         field="inclusion_probability")  # fmt: skip
