"""``judgekit gate``: every rule's checks, Holm within the family, the verdicts, what would decide
an inconclusive check, and the gate's verdict (:func:`run_gate`). No model is called: the gate
reads the labels and runs judgekit already wrote."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.gate.spec import GateSpec, Rule, check_files, check_gate, load_gate
from judgekit.gate.verdicts import Check, apply_requires, exit_code, holm, overall
from judgekit.signature import Signature


@dataclass(frozen=True)
class GateResult:
    """What ``judgekit gate`` reports.

    Attributes:
        verdict: ``pass``, ``fail`` or ``inconclusive`` (:func:`judgekit.gate.verdicts.overall`).
        checks: every check, in rule order, facet values sorted within a rule.
        spec: the gate.
        signature: judgekit's signature of the gate: the gate file and every input file with
            its sha256, alpha, family, interval, resamples, seed.
    """

    verdict: str
    checks: list[Check]
    spec: GateSpec
    signature: dict[str, Any]

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 3 inconclusive (or the gate's ``inconclusive`` mapping)."""
        return exit_code(self.verdict, self.spec.inconclusive)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document: verdict, exit code, family, alpha, checks, signature."""
        return {
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "alpha": self.spec.alpha,
            "family": self.spec.family,
            "inconclusive": self.spec.inconclusive,
            "rules": [
                {
                    "name": r.name,
                    "kind": r.kind,
                    "rule": r.describe(),
                    "by": r.by,
                    "requires": list(r.requires),
                }
                for r in self.spec.rules
            ],  # fmt: skip
            "checks": [c.to_dict() for c in self.checks],
            "signature": self.signature,
        }


def _signature(spec: GateSpec) -> dict[str, Any]:
    files: list[Path | str] = [spec.path] if spec.path else []
    for rule in spec.rules:
        for path in (rule.judge, rule.human, rule.baseline_judge, rule.baseline_human,
                     rule.facets):  # fmt: skip
            if path is None:
                continue
            target = Path(path)
            for name in ("labels.csv", "segments.jsonl"):
                if target.is_dir() and (target / name).is_file():
                    target = target / name
                    break
            files.append(target)
    parameters = {"alpha": spec.alpha, "family": spec.family, "interval": spec.interval,
                  "resamples": spec.resamples, "inconclusive": spec.inconclusive,
                  "rules": [r.describe() for r in spec.rules]}  # fmt: skip
    return Signature.for_files("gate", files, parameters=parameters, seed=spec.seed).as_dict()


def _checks(spec: GateSpec) -> tuple[list[Check], dict[tuple[str, str], Any]]:
    from judgekit.gate.agreement import agreement_checks
    from judgekit.gate.figures import estimate_checks

    checks: list[Check] = []
    values: dict[tuple[str, str], Any] = {}
    for rule in spec.rules:
        with located(rule, spec):
            if rule.kind == "agreement":
                checks += agreement_checks(rule, spec)
                continue
            for check, facet in estimate_checks(rule, spec):
                checks.append(check)
                values[(check.rule, check.facet)] = facet
    return checks, values


@contextmanager
def located(rule: Rule, spec: GateSpec) -> Iterator[None]:
    """Errors of a rule's readers that name no file (a value the readers take from the command
    line of ``calibrate estimate``: ``--by``, ``--target``) are the gate file's: they are raised
    again with the gate file, the rule's line and the gate's field (``by``, ``target``)."""
    try:
        yield
    except InputError as exc:
        if exc.path is not None:
            raise
        name = (exc.field or "").lstrip("-").replace("-", "_") or None
        raise InputError(spec.path, f"rule '{rule.name}': {exc.message}", line=rule.line,
                         field=name) from None  # fmt: skip


def decide(checks: list[Check], spec: GateSpec) -> list[Check]:
    """Holm within each family (every check, or each rule's), then ``requires``."""
    if spec.family == "gate":
        done = holm(checks, spec.alpha, "gate")
    else:
        done = []
        for rule in spec.rules:
            done += holm([c for c in checks if c.rule == rule.name], spec.alpha,
                         f"rule {rule.name}")  # fmt: skip
    requires = {r.name: r.requires for r in spec.rules if r.requires}
    return apply_requires(done, requires) if requires else done


def _with_plans(checks: list[Check], values: dict, spec: GateSpec) -> list[Check]:
    from judgekit.gate.agreement import more_labels as agreement_more
    from judgekit.gate.figures import more_labels as figure_more

    out = []
    for check in checks:
        if (
            check.verdict == "inconclusive"
            and check.mode != "no-regression"
            and not (check.note or "").startswith("not allowed")
        ):
            if check.kind == "agreement":
                more, decidable = agreement_more(check, spec.alpha)
            else:
                more, decidable = figure_more(check, values[(check.rule, check.facet)], spec)
            check = replace(check, more_labels=more, decidable=decidable)
        out.append(check)
    return out


def run_gate(gate: str | Path | GateSpec, *, alpha: float | None = None,
             inconclusive: str | None = None) -> GateResult:  # fmt: skip
    """Run a gate: read it (a ``GATE.yaml`` path, or a :class:`GateSpec`), compute each rule's
    checks from the recorded labels, control the family-wise error with Holm, and decide.

    Args:
        gate: the gate file or spec (:mod:`judgekit.gate.spec`).
        alpha: overrides the gate's alpha, in (0, 0.5).
        inconclusive: overrides what an inconclusive gate exits with (``inconclusive``,
            ``pass``, ``fail``).

    Raises:
        InputError: a bad gate file or input file (file, line, field), human labels on items
            the judge did not label, an unknown facet.
        LabelSetError: a judge's and the humans' labels share no label.
    """
    spec = gate if isinstance(gate, GateSpec) else load_gate(gate)
    if alpha is not None:
        spec = replace(spec, alpha=alpha)
    if inconclusive is not None:
        spec = replace(spec, inconclusive=inconclusive)
    spec = check_gate(spec)
    check_files(spec)
    checks, values = _checks(spec)
    checks = _with_plans(decide(checks, spec), values, spec)
    return GateResult(overall(checks), checks, spec, _signature(spec))
