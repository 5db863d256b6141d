"""``calibrate plan --design`` and ``calibrate estimate --selection``: label designs.

The library does the work (:mod:`judgekit.calibration.design.run`); these only call and print.
"""

from __future__ import annotations

from pathlib import Path

from judgekit.cli.output import plain_console
from judgekit.data.jsonfile import print_json
from judgekit.errors import InputError

console = plain_console()


def design_plan(
    judge: Path, design: str, budget: int | None, selection_out: Path | None,
    as_json: bool = False, **options: object,
) -> None:  # fmt: skip
    """Draw the items to label under ``design`` and write ``selection.csv``; say the design
    used and why (the active design may fall back to uniform), on the console or as JSON."""
    from judgekit.calibration.design import DESIGNS
    from judgekit.calibration.design.run import plan_design
    from judgekit.calibration.design.selection import write_selection

    if design not in DESIGNS:
        raise InputError(None, f"design '{design}' is not one of {', '.join(DESIGNS)}",
                         field="--design")  # fmt: skip
    width, kappa = options.pop("width", None), options.pop("kappa", None)
    if budget is None and width is not None:
        from judgekit.calibration.design.run import design_budget

        keys = ("pilot", "target", "raters", "kind", "exclude")
        given = {k: options.get(k) for k in keys}
        budget, sizing = design_budget(str(judge), design, width, kappa=kappa, **given)  # type: ignore[arg-type]
        if not as_json:
            console.print(f"budget {budget}: {sizing}", markup=False)
    if budget is None or budget < 1:
        raise InputError(None, "a design needs --budget N (labels, >= 1) or --width W",
                         field="--budget")  # fmt: skip
    plan = plan_design(str(judge), design, budget, **options)  # type: ignore[arg-type]
    path = selection_out or Path("selection.csv")
    write_selection(path, plan.rows)
    doc = {**plan.to_dict(), "selection": str(path)}
    if as_json:
        print_json(doc)
        return
    used = doc["design"] if doc["design"] == design else f"{design} requested, {doc['design']} used"
    console.print(f"{used} design: {doc['drawn']} items drawn (budget {budget}); strata: "
                  f"{', '.join(doc['strata'])}; wrote {path}", markup=False)  # fmt: skip
    console.print(f"why: {plan.why}", markup=False)


def design_estimate(
    judge: Path, human: Path, selection: Path, as_json: bool, **options: object
) -> None:
    """The mean under the selection's design, beside the uniform-design width at the same n."""
    from judgekit.calibration.design.run import estimate_design

    est = estimate_design(str(judge), str(human), str(selection), **options)  # type: ignore[arg-type]
    if as_json:
        print_json(est.to_dict())
        return
    sig = est.signature
    console.print(f"design {est.design} ({sig['method']}; {sig['source']})")
    console.print(f"estimate {est.estimate:.4f}  CI [{est.low:.4f}, {est.high:.4f}]  "
                  f"n={est.n} of {est.n_items}")  # fmt: skip
    if est.note:
        console.print(f"note: {est.note}", markup=False)
    console.print(f"half-width {est.half_width:.4f}; uniform design at the same n: "
                  f"{est.uniform_half_width:.4f} (uniform would need ~{est.uniform_labels:.0f} "
                  "labels for this width)")  # fmt: skip
