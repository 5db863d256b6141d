"""A CI gate on calibrated figures: rules on PPI++ estimates, paired differences against a
baseline run and a judge's agreement with humans, each decided pass / fail / inconclusive from
its interval, with Holm's control of the family-wise error (docs/gate.md).

* :mod:`judgekit.gate.spec`: the gate file (``GATE.yaml``) and its rules;
* :mod:`judgekit.gate.figures`: estimate and difference checks (``calibrate estimate``'s
  readers and estimates);
* :mod:`judgekit.gate.agreement`: agreement checks (``calibrate judge``'s figure);
* :mod:`judgekit.gate.verdicts`: p-values, Holm, verdicts, exit codes;
* :mod:`judgekit.gate.run`: :func:`run_gate`;
* :mod:`judgekit.report.gate`: console table, JSON, JUnit XML, Markdown summary.
"""

from __future__ import annotations

from judgekit.gate.run import GateResult, run_gate
from judgekit.gate.spec import GateSpec, Rule, load_gate

__all__ = ["GateResult", "GateSpec", "Rule", "load_gate", "run_gate"]
