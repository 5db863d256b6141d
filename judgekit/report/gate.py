"""The gate's outputs: the console table, the Markdown summary a CI job posts, JUnit XML (what CI
systems show as tests) and the JSON document (:func:`judgekit.gate.run.GateResult.to_dict`).

In JUnit XML each check is a ``testcase`` (classname ``gate.RULE``, name the facet value): a
failed check has a ``failure``, an inconclusive one is ``skipped`` (a ``failure`` instead where
the gate maps inconclusive to fail), with the figure, interval, bound and p-values in the
message. Text from users' files (rule names, facet values) is escaped by the XML writer and
printed as text, never markup; characters XML 1.0 forbids are written as visible escapes
(:func:`visible`), in the XML and the Markdown alike.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from judgekit.gate.run import GateResult
from judgekit.gate.verdicts import Check

MARK = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}
# What XML 1.0 forbids (C0 controls but tab, LF, CR; lone surrogates; U+FFFE, U+FFFF), and
# the C1 controls and DEL, which a terminal or a page would act on rather than show.
_UNSHOWABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def visible(text: object) -> str:
    """``text`` with every character XML 1.0 forbids (and the C1 controls) written as a visible
    escape (``\\x1b``, ``\\ud800``), so the JUnit XML parses and the Markdown shows what the
    user's file held; other text is unchanged."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _UNSHOWABLE.sub(escape, str(text))


def _num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def interval_text(check: Check) -> str:
    """``[low, high]`` or ``no interval``."""
    if check.ci_low is None or check.ci_high is None:
        return "no interval"
    return f"[{_num(check.ci_low)}, {_num(check.ci_high)}]"


def decision_text(check: Check) -> str:
    """What decided the check, or what would decide it, in words."""
    if check.note and check.note.startswith("not allowed"):
        return check.note
    if check.verdict != "inconclusive":
        return check.note or ""
    if check.more_labels is not None:
        return f"about {check.more_labels} more human labels would decide it" + (
            " (approximate)" if check.kind == "agreement" else ""
        )
    if check.decidable is False:
        return "cannot be decided even with every judged item labelled"
    return check.note or ""


def _bound_text(check: Check) -> str:
    if check.mode == "no-regression":
        return "no significant regression"
    return (">= " if check.direction == "at_least" else "<= ") + f"{check.bound:g}"


def print_gate(result: GateResult, console: Any) -> None:
    """The console table: one row per check, then the gate's verdict and family."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"judgekit gate: {MARK[result.verdict]}")
    for name in ("rule", "facet", "figure", "estimate", f"{1 - result.spec.interval_alpha:.0%} CI",
                 "bound", "n labels", "p (Holm)", "verdict", "to decide"):  # fmt: skip
        table.add_column(name)
    for c in result.checks:
        table.add_row(*(Text(str(v)) for v in (
            c.rule, c.facet, c.figure, _num(c.estimate), interval_text(c), _bound_text(c),
            f"{c.n_labelled}/{c.n_items}", _num(c.p_adjusted, 3), MARK[c.verdict or "inconclusive"],
            decision_text(c))))  # fmt: skip
    console.print(table)
    family = result.checks[0].family if result.spec.family == "gate" and result.checks else None
    console.print(Text(f"verdict: {MARK[result.verdict]} (exit {result.exit_code}); alpha "
                       f"{result.spec.alpha:g}, Holm over "
                       f"{family or 'each rule'}"))  # fmt: skip


def markdown(result: GateResult) -> str:
    """The Markdown summary (a CI job posts it as a comment or step summary)."""

    def cell(text: Any) -> str:
        return (
            visible(text)
            .replace("|", "\\|")
            .replace("\r", " ")
            .replace("\n", " ")
            .replace("<", "&lt;")
        )

    level = f"{1 - result.spec.interval_alpha:.0%}"
    lines = [f"## judgekit gate: **{MARK[result.verdict]}**", "",
             f"Holm over {'every check' if result.spec.family == 'gate' else 'each rule'}, "
             f"alpha {result.spec.alpha:g}; exit code {result.exit_code}.", "",
             f"| rule | facet | figure | estimate | {level} CI | bound | labels | p (Holm) | "
             "verdict | to decide |", "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in result.checks:
        lines.append("| " + " | ".join(cell(v) for v in (
            c.rule, c.facet, c.figure, _num(c.estimate), interval_text(c), _bound_text(c),
            f"{c.n_labelled}/{c.n_items}", _num(c.p_adjusted, 3),
            f"**{MARK[c.verdict or 'inconclusive']}**", decision_text(c))) + " |")  # fmt: skip
    return "\n".join(lines) + "\n"


def junit_xml(result: GateResult) -> str:
    """JUnit XML: one testsuite, one testcase per check (module docstring)."""
    fails = sum(c.verdict == "fail" for c in result.checks)
    unsure = sum(c.verdict == "inconclusive" for c in result.checks)
    as_failure = result.spec.inconclusive == "fail"
    suite = ET.Element("testsuite", name="judgekit gate", tests=str(len(result.checks)),
                       failures=str(fails + (unsure if as_failure else 0)), errors="0",
                       skipped=str(0 if as_failure else unsure))  # fmt: skip
    for c in result.checks:
        case = ET.SubElement(suite, "testcase", classname=visible(f"gate.{c.rule}"),
                             name=visible(c.facet))  # fmt: skip
        message = (
            f"{c.figure} = {_num(c.estimate)} {interval_text(c)}, bound {_bound_text(c)}, "
            f"p (Holm) {_num(c.p_adjusted, 3)}: {MARK[c.verdict or 'inconclusive']}"
        )
        extra = decision_text(c)
        if extra:
            message += f"; {extra}"
        message = visible(message)
        if c.verdict == "fail" or (c.verdict == "inconclusive" and as_failure):
            ET.SubElement(case, "failure", message=message, type=c.verdict or "")
        elif c.verdict == "inconclusive":
            ET.SubElement(case, "skipped", message=message)
        ET.SubElement(case, "system-out").text = message
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)


def write_gate(result: GateResult, *, json_path: Path | None = None,
               junit: Path | None = None, summary: Path | None = None) -> list[Path]:  # fmt: skip
    """Write the requested outputs (each through judgekit's atomic writer); returns the paths."""
    from judgekit.data.atomic import write_text
    from judgekit.data.jsonfile import json_safe

    written = []
    for path, text in ((json_path, lambda: json.dumps(json_safe(result.to_dict()), indent=2,
                                                      ensure_ascii=False) + "\n"),
                       (junit, lambda: junit_xml(result)),
                       (summary, lambda: markdown(result))):  # fmt: skip
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            write_text(Path(path), text())
            written.append(Path(path))
    return written
