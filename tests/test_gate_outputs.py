"""The gate's JUnit XML and Markdown summary show every character of users' text: those XML 1.0
forbids (C0 controls but tab, LF, CR; lone surrogates) are written as visible escapes, so the
XML parses (ElementTree) and the Markdown row stays one row."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from cli_inproc import run_main

from judgekit.report.gate import visible


def test_visible_escapes_what_xml_forbids_only():
    assert visible("d\x1be\x00\x7f\x85") == "d\\x1be\\x00\\x7f\\x85"
    assert visible("a\ud800b\udfff") == "a\\ud800b\\udfff"
    assert visible("tab\tlf\ncr\r é 中 🙂") == "tab\tlf\ncr\r é 中 🙂"


def test_junit_and_summary_of_hostile_names_parse_and_show_them(tmp_path: Path):
    rows = [(f"i{i}", "yes" if i % 3 else "no", "d\x1be" if i % 2 else "fr") for i in range(60)]
    (tmp_path / "judge.csv").write_text("item,rater,label,language\n" + "".join(
        f"{i},judge,{lab},{lang}\n" for i, lab, lang in rows), encoding="utf-8")  # fmt: skip
    (tmp_path / "human.csv").write_text("item,rater,label\n" + "".join(
        f"{i},ann,{lab}\n" for i, lab, _ in rows[:30]), encoding="utf-8")  # fmt: skip
    gate = tmp_path / "gate.yaml"
    gate.write_text('rules:\n  - {name: "r\\u0001]]><x/>", judge: judge.csv, human: human.csv,'
                    " target: 'share:yes', by: language, at_most: 0.9}\n")  # fmt: skip
    done = run_main("gate", str(gate), "--junit", str(tmp_path / "j.xml"),
                    "--summary", str(tmp_path / "s.md"))  # fmt: skip
    assert done.returncode in (0, 1, 3), done.stderr
    suite = ET.parse(tmp_path / "j.xml").getroot()
    cases = {c.get("name"): c.get("classname") for c in suite.iter("testcase")}
    assert cases == {"d\\x1be": "gate.r\\x01]]><x/>", "fr": "gate.r\\x01]]><x/>"}
    summary = (tmp_path / "s.md").read_text(encoding="utf-8")
    assert "| r\\x01]]>&lt;x/> | d\\x1be |" in summary and "\x1b" not in summary
