"""Every error of a gate file names the gate file, the rule's line and the field (exit 2): also
the facet (`by`), the target, `requires` given a text, a non-text `name`, a missing judge or human
file, and a bound no figure of its kind can take. Labels differing in case alone are one label,
the target's included (one warning, no contradiction)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from cli_inproc import run_main

from judgekit.errors import InputError
from judgekit.gate import run_gate

HEAD = "rules:\n  - {name: ok, judge: judge.csv, human: human.csv, target: share:yes, at_most: 1}\n"


def labels(tmp_path: Path, judge_word: str = "yes", human_word: str = "yes") -> None:
    """60 judged items (de/fr), 30 of them labelled by a human."""
    rows = [(f"i{i}", judge_word if i % 3 else "no", "de" if i % 2 else "fr") for i in range(60)]
    (tmp_path / "judge.csv").write_text("item,rater,label,language\n" + "".join(
        f"{i},judge,{lab},{lang}\n" for i, lab, lang in rows))  # fmt: skip
    (tmp_path / "human.csv").write_text("item,rater,label\n" + "".join(
        f"{i},ann,{human_word if lab != 'no' else 'no'}\n" for i, lab, _ in rows[:30]))  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "where", "says"),
    [
        ("{name: r, judge: judge.csv, human: human.csv, target: share:yes, by: domain, "
         "at_most: 0.9}", "field 'by'", "no facet 'domain'"),
        ("{name: r, judge: judge.csv, human: human.csv, target: 'share:', at_most: 0.9}",
         "field 'target'", "unknown target"),
        ("{name: r, judge: judge.csv, human: human.csv, target: share:maybe, at_most: 0.9}",
         "field 'target'", "no judge or human label is 'maybe'"),
        ("{name: r, judge: judge.csv, human: human.csv, target: share:yes, requires: ok, "
         "at_most: 0.9}", "field 'requires'", "must be a list of names ([ok] for one)"),
        ("{name: 5, judge: judge.csv, human: human.csv, target: share:yes, at_most: 0.9}",
         "field 'name'", "got 5"),
        ("{name: r, judge: nothere.csv, human: human.csv, target: share:yes, at_most: 0.9}",
         "field 'judge'", "no such file or directory"),
        ("{name: r, judge: judge.csv, human: gone.csv, target: share:yes, at_most: 0.9}",
         "field 'human'", "no such file or directory"),
        ("{name: r, judge: judge.csv, human: human.csv, target: share:yes, at_least: 1.5}",
         "field 'at_least'", "a share is in [0, 1]"),
        ("{name: r, judge: judge.csv, human: human.csv, target: share:yes, at_most: -0.2}",
         "field 'at_most'", "a share is in [0, 1]"),
        ("{name: r, kind: agreement, judge: judge.csv, human: human.csv, at_least: 1.4}",
         "field 'at_least'", "a kappa is in [-1, 1]"),
        ("{name: r, kind: difference, judge: judge.csv, human: human.csv, target: share:yes, "
         "baseline_judge: judge.csv, baseline_human: human.csv, margin: 2}", "field 'margin'",
         "a margin of 2"),
    ],
)  # fmt: skip
def test_every_rule_error_names_the_gate_file_line_and_field(
    tmp_path: Path, rule: str, where: str, says: str
):
    labels(tmp_path)
    gate = tmp_path / "gate.yaml"
    gate.write_text(HEAD + f"  - {rule}\n")
    with pytest.raises(InputError) as err:
        run_gate(gate)
    assert err.value.path == str(gate) and err.value.line == 3, str(err.value)
    assert f"gate.yaml:3: {where}" in str(err.value) and says in str(err.value)


def test_the_cli_says_it_once_with_exit_2(tmp_path: Path):
    labels(tmp_path)
    gate = tmp_path / "gate.yaml"
    gate.write_text(HEAD + "  - {name: r, judge: judge.csv, human: human.csv, target: share:yes,"
                    " by: domain, at_most: 0.9}\n")  # fmt: skip
    done = run_main("gate", str(gate))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{gate}:3: field 'by'" in done.stderr and "<command line>" not in done.stderr


def test_a_target_spelt_as_the_humans_spell_it_follows_the_case_folding(tmp_path: Path):
    labels(tmp_path, judge_word="Positive", human_word="positive")
    gate = tmp_path / "gate.yaml"
    gate.write_text("rules:\n  - {name: r, judge: judge.csv, human: human.csv, "
                    "target: share:positive, at_most: 0.9}\n")  # fmt: skip
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = run_gate(gate)
    notes = [str(w.message) for w in seen]
    assert len(notes) == 1 and "'positive' = the judge 'Positive'" in notes[0]
    (check,) = result.checks
    assert check.figure == "ppi++ share:Positive" and check.estimate > 0.5
    gate.write_text("rules:\n  - {name: r, judge: judge.csv, human: human.csv, "
                    "target: share:POSITIVE, at_most: 0.9}\n")  # fmt: skip
    with pytest.raises(InputError, match="no judge or human label is 'POSITIVE'"):
        run_gate(gate)  # nobody spelt it so: a misspelling stays refused
