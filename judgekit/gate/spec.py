"""The gate file (``GATE.yaml``): its settings and rules, read once and checked at the door.

A gate file is a mapping::

    alpha: 0.05            # error level of each verdict (a one-sided test), in (0, 0.5)
    family: gate           # Holm over every check of the gate (or "rule": per rule)
    inconclusive: inconclusive   # what an inconclusive gate exits with: inconclusive (3),
                                 # pass (0) or fail (1)
    rules:
      - name: mqm-floor
        kind: estimate     # estimate | difference | agreement
        judge: runs/errors-ende        # a run directory or a labels file
        human: labels/mqm-sample.csv   # human labels on a random subset of the judged items
        target: mean                   # share:LABEL | rate | mean
        by: language                   # one check per facet value (optional)
        at_least: -5.0                 # or at_most

Paths are relative to the gate file's folder. Every error names the file, the line of the rule
and the field (:class:`judgekit.errors.InputError`, exit 2). docs/gate.md describes each kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from judgekit.data.yamltext import TextLoader
from judgekit.errors import InputError

KINDS = ("estimate", "difference", "agreement")
FAMILIES = ("gate", "rule")
INCONCLUSIVE = ("inconclusive", "pass", "fail")
METHODS = ("ppi++", "ppi", "classical")
AGREEMENT_METRICS = ("accuracy", "macro_f1", "kappa")
MODES = ("non-inferiority", "no-regression")
_COMMON = {"name", "kind", "judge", "human", "by", "facets", "judge_raters", "tie_policy",
           "requires", "at_least", "at_most"}  # fmt: skip
_ALLOWED = {
    "estimate": _COMMON | {"target", "method"},
    "difference": (_COMMON - {"at_least", "at_most"})
    | {
        "target",
        "method",
        "baseline_judge",
        "baseline_human",
        "margin",
        "mode",
        "higher_is_better",
    },  # fmt: skip
    "agreement": _COMMON | {"metric"},
}


@dataclass(frozen=True)
class Rule:
    """One rule of a gate: a calibrated figure and a bound.

    Attributes:
        name: the rule's name (unique in the gate).
        kind: ``estimate`` (a PPI++ estimate at least / at most ``bound``), ``difference``
            (the paired difference candidate - baseline, against a non-inferiority margin or
            0) or ``agreement`` (the judge's agreement with the human majority).
        judge, human: the judge's labels (run directory or file) and the humans'.
        bound: the bound, in the figure's unit; direction: ``at_least`` or ``at_most`` (the
            side that passes; for a difference, from ``higher_is_better``).
        target: ``share:LABEL``, ``rate`` or ``mean`` (estimate, difference).
        by: the facet with one check per value (``language``...), or None.
        method: the estimate's method: ``ppi++`` (default), ``ppi`` or ``classical``.
        metric: an agreement's statistic: ``accuracy``, ``macro_f1`` or ``kappa``.
        baseline_judge, baseline_human: the baseline run's judge and human labels.
        mode: a difference's ``non-inferiority`` (three verdicts, margin) or ``no-regression``
            (fail only on a significant regression).
        requires: names of rules that must pass (same facet value, or their overall) before
            this rule may pass: an agreement rule makes "a judge not calibrated enough cannot
            pass" explicit.
        line: the rule's line in the gate file.
    """

    name: str
    kind: str
    judge: str
    human: str
    bound: float
    direction: str
    target: str | None = None
    by: str | None = None
    facets: str | None = None
    judge_raters: tuple[str, ...] = ()
    tie_policy: str = "exclude"
    method: str = "ppi++"
    metric: str = "kappa"
    baseline_judge: str | None = None
    baseline_human: str | None = None
    mode: str = "non-inferiority"
    requires: tuple[str, ...] = ()
    line: int | None = None

    def describe(self) -> str:
        """The rule in words, e.g. ``ppi++ mean >= -5`` or ``kappa >= 0.6``."""
        sign = ">=" if self.direction == "at_least" else "<="
        if self.kind == "agreement":
            return f"{self.metric} {sign} {self.bound:g}"
        what = f"{self.method} {self.target or 'default'}"
        if self.kind == "difference":
            if self.mode == "no-regression":
                return f"{what} candidate - baseline: no significant regression"
            what += " candidate - baseline"
        return f"{what} {sign} {self.bound:g}"


@dataclass(frozen=True)
class GateSpec:
    """A gate: its settings and rules (module docstring).

    Attributes:
        alpha: error level in (0, 0.5); each verdict is a one-sided test at alpha: a check
            passes (or fails) where its Holm-adjusted one-sided p-value is below alpha, i.e.
            where its equal-tailed (1 - 2 alpha) interval (:attr:`interval_alpha`) clears (or
            lies beyond) the bound.
        family: ``gate`` (Holm over every check) or ``rule`` (Holm within each rule).
        inconclusive: the exit of an inconclusive gate: ``inconclusive`` (3), ``pass`` (0),
            ``fail`` (1).
        interval: the estimates' interval rule (``auto``, ``clt``, ``t``, ``bootstrap-t``).
        resamples, seed: bootstrap resamples (bootstrap-t, agreement CIs) and their seed.
        lam: PPI++'s ``lam`` rule, ``shrunk`` (default) or ``tuned``
            (:mod:`judgekit.calibration.estimate.moments`).
        path: the gate file, or None for a gate built in Python.
    """

    rules: tuple[Rule, ...]
    alpha: float = 0.05
    family: str = "gate"
    inconclusive: str = "inconclusive"
    interval: str = "auto"
    resamples: int = 2000
    seed: int = 0
    lam: str = "shrunk"
    path: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def interval_alpha(self) -> float:
        """``2 alpha``: the checks' intervals are the equal-tailed (1 - 2 alpha) intervals, whose
        ends are the one-sided tests at alpha (the two one-sided tests convention, Schuirmann
        1987, J. Pharmacokinet. Biopharm. 15:657-680)."""
        return 2 * self.alpha


def _lines(text: str) -> list[int | None]:
    """The 1-based line of each item of the top-level ``rules`` list (None where unknown)."""
    try:
        node = yaml.compose(text, Loader=TextLoader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError:
        return []
    if not isinstance(node, yaml.MappingNode):
        return []
    for key, value in node.value:
        if key.value == "rules" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def _number(raw: Any, path: Path, line: int | None, name: str) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise InputError(path, f"'{name}' must be a number, got {raw!r}", line=line, field=name)
    return float(raw)


def _text(raw: Any, path: Path, line: int | None, name: str, choices: tuple[str, ...]) -> str:
    if raw not in choices:
        raise InputError(path, f"'{name}' must be one of {', '.join(choices)}, got {raw!r}",
                         line=line, field=name)  # fmt: skip
    return str(raw)


def _file(raw: Any, base: Path, path: Path, line: int | None, name: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise InputError(path, f"'{name}' must be a path", line=line, field=name)
    local = Path(raw)
    return str(local if local.is_absolute() else base / local)


def _bound(raw: dict[str, Any], path: Path, line: int | None) -> tuple[float, str]:
    given = [k for k in ("at_least", "at_most") if k in raw]
    if len(given) != 1:
        raise InputError(path, "give exactly one of at_least and at_most", line=line,
                         field="at_least")  # fmt: skip
    return _number(raw[given[0]], path, line, given[0]), given[0]


def parse_rule(raw: Any, base: Path, path: Path, line: int | None) -> Rule:
    """One rule from its mapping (paths resolved against ``base``).

    Raises:
        InputError: an unknown kind or key, a missing or ill-typed field (file, line, field).
    """
    if not isinstance(raw, dict):
        raise InputError(path, "a rule must be a mapping", line=line, field="rules")
    kind = _text(raw.get("kind", "estimate"), path, line, "kind", KINDS)
    unknown = sorted(set(raw) - _ALLOWED[kind])
    if unknown:
        raise InputError(path, f"unknown key(s) for a {kind} rule: {', '.join(unknown)}",
                         line=line, field=unknown[0])  # fmt: skip
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InputError(path, "every rule needs a name", line=line, field="name")
    out: dict[str, Any] = {
        "name": name.strip(), "kind": kind, "line": line,
        "judge": _file(raw.get("judge"), base, path, line, "judge"),
        "human": _file(raw.get("human"), base, path, line, "human"),
        "by": raw.get("by"), "tie_policy": raw.get("tie_policy", "exclude"),
        "judge_raters": tuple(str(r) for r in raw.get("judge_raters") or ()),
        "requires": tuple(str(r) for r in raw.get("requires") or ()),
    }  # fmt: skip
    if raw.get("facets") is not None:
        out["facets"] = _file(raw["facets"], base, path, line, "facets")
    if kind == "agreement":
        out["metric"] = _text(raw.get("metric", "kappa"), path, line, "metric", AGREEMENT_METRICS)
        out["bound"], out["direction"] = _bound(raw, path, line)
        return Rule(**out)
    out["target"] = raw.get("target")
    out["method"] = _text(raw.get("method", "ppi++"), path, line, "method", METHODS)
    if kind == "estimate":
        out["bound"], out["direction"] = _bound(raw, path, line)
        return Rule(**out)
    for key in ("baseline_judge", "baseline_human"):
        out[key] = _file(raw.get(key), base, path, line, key)
    out["mode"] = _text(raw.get("mode", "non-inferiority"), path, line, "mode", MODES)
    higher = raw.get("higher_is_better", True)
    if not isinstance(higher, bool):
        raise InputError(path, "'higher_is_better' must be true or false", line=line,
                         field="higher_is_better")  # fmt: skip
    if out["mode"] == "non-inferiority":
        if "margin" not in raw:
            raise InputError(path, "a non-inferiority rule needs a margin (>= 0)", line=line,
                             field="margin")  # fmt: skip
        margin = _number(raw["margin"], path, line, "margin")
    else:
        margin = _number(raw.get("margin", 0.0), path, line, "margin")
    if margin < 0:
        raise InputError(path, f"the margin must be >= 0, got {margin:g}", line=line,
                         field="margin")  # fmt: skip
    out["bound"] = -margin if higher else margin
    out["direction"] = "at_least" if higher else "at_most"
    return Rule(**out)


def load_gate(path: str | Path) -> GateSpec:
    """Read and check a gate file (module docstring).

    Raises:
        InputError: a missing or unreadable file, bad YAML, an unknown setting, a bad rule, a
            duplicate rule name or a ``requires`` naming no rule (file, line, field).
    """
    from judgekit.data.yamltext import load_yaml, yaml_input_error

    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such gate file")
    text = path.read_text(encoding="utf-8-sig")
    try:
        raw = load_yaml(text)
    except yaml.YAMLError as exc:
        raise yaml_input_error(path, exc) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("rules"), list) or not raw["rules"]:
        raise InputError(path, "a gate file is a mapping with a non-empty list 'rules'",
                         field="rules")  # fmt: skip
    known = {"alpha", "family", "inconclusive", "interval", "resamples", "seed", "lam", "rules"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise InputError(path, f"unknown setting(s): {', '.join(unknown)}", field=unknown[0])
    lines = _lines(text)
    rules = tuple(
        parse_rule(r, path.parent, path, lines[i] if i < len(lines) else None)
        for i, r in enumerate(raw["rules"])
    )
    return check_gate(GateSpec(
        rules=rules,
        alpha=_number(raw.get("alpha", 0.05), path, None, "alpha"),
        family=_text(raw.get("family", "gate"), path, None, "family", FAMILIES),
        inconclusive=_text(raw.get("inconclusive", "inconclusive"), path, None,
                           "inconclusive", INCONCLUSIVE),
        interval=_text(raw.get("interval", "auto"), path, None, "interval",
                       ("auto", "clt", "t", "bootstrap-t")),
        resamples=int(_number(raw.get("resamples", 2000), path, None, "resamples")),
        seed=int(_number(raw.get("seed", 0), path, None, "seed")),
        lam=_text(raw.get("lam", "shrunk"), path, None, "lam", ("shrunk", "tuned")),
        path=str(path),
    ))  # fmt: skip


def check_gate(spec: GateSpec) -> GateSpec:
    """``spec`` after the checks every gate passes (also one built in Python).

    Raises:
        InputError: alpha outside (0, 0.5), fewer than 100 resamples, a duplicate rule name, or a
            ``requires`` that names no rule or the rule itself.
    """
    path = spec.path
    if spec.inconclusive not in INCONCLUSIVE:
        raise InputError(path, f"inconclusive must be one of {', '.join(INCONCLUSIVE)}, got "
                         f"{spec.inconclusive!r}", field="inconclusive")  # fmt: skip
    if spec.family not in FAMILIES:
        raise InputError(path, f"family must be one of {', '.join(FAMILIES)}, got "
                         f"{spec.family!r}", field="family")  # fmt: skip
    if not 0 < spec.alpha < 0.5:
        raise InputError(path, f"alpha must be in (0, 0.5), got {spec.alpha:g} (each verdict is a "
                         "one-sided test at alpha)", field="alpha")  # fmt: skip
    if spec.resamples < 100:
        raise InputError(path, f"at least 100 resamples, got {spec.resamples}",
                         field="resamples")  # fmt: skip
    names: dict[str, Rule] = {}
    for rule in spec.rules:
        if rule.name in names:
            raise InputError(path, f"two rules are named '{rule.name}'", line=rule.line,
                             field="name")  # fmt: skip
        names[rule.name] = rule
    for rule in spec.rules:
        for other in rule.requires:
            if other not in names or other == rule.name:
                raise InputError(path, f"rule '{rule.name}' requires '{other}', which is not "
                                 "another rule of this gate", line=rule.line,
                                 field="requires")  # fmt: skip
    return spec
