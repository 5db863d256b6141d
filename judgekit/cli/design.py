"""``calibrate plan --design`` and ``calibrate estimate --selection``: label designs.

The library does the work (:mod:`judgekit.calibration.design.run`); these only call and print.
"""

from __future__ import annotations

import json
from pathlib import Path

from judgekit.cli.output import plain_console
from judgekit.data.jsonfile import json_safe
from judgekit.errors import InputError

console = plain_console()


def design_plan(
    judge: Path, design: str, budget: int | None, selection_out: Path | None, **options: object
) -> None:
    """Draw the items to label under ``design`` and write ``selection.csv``."""
    from judgekit.calibration.design import DESIGNS
    from judgekit.calibration.design.run import plan_design
    from judgekit.calibration.design.selection import write_selection

    if design not in DESIGNS:
        raise InputError(None, f"design '{design}' is not one of {', '.join(DESIGNS)}",
                         field="--design")  # fmt: skip
    if budget is None or budget < 1:
        raise InputError(None, "a design needs --budget N (labels, >= 1)", field="--budget")
    rows = plan_design(str(judge), design, budget, **options)  # type: ignore[arg-type]
    path = selection_out or Path("selection.csv")
    write_selection(path, rows)
    strata = sorted({r.stratum for r in rows})
    console.print(f"{design} design: {len(rows)} items drawn (budget {budget}); strata: "
                  f"{', '.join(strata)}; wrote {path}")  # fmt: skip


def design_estimate(
    judge: Path, human: Path, selection: Path, as_json: bool, **options: object
) -> None:
    """The mean under the selection's design, beside the uniform-design width at the same n."""
    from judgekit.calibration.design.run import estimate_design

    est = estimate_design(str(judge), str(human), str(selection), **options)  # type: ignore[arg-type]
    if as_json:
        print(json.dumps(json_safe(est.to_dict()), ensure_ascii=False))
        return
    sig = est.signature
    console.print(f"design {est.design} ({sig['method']}; {sig['source']})")
    console.print(f"estimate {est.estimate:.4f}  CI [{est.low:.4f}, {est.high:.4f}]  "
                  f"n={est.n} of {est.n_items}")  # fmt: skip
    console.print(f"half-width {est.half_width:.4f}; uniform design at the same n: "
                  f"{est.uniform_half_width:.4f} (uniform would need ~{est.uniform_labels:.0f} "
                  "labels for this width)")  # fmt: skip
