"""Post-edit statistics (Cultivar, paper 000, Sec. 2.3, Figure 1 and Table 1) on hand-made
triples, and the `judgekit contrast postedit` command."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import judgekit.cli.contrast  # noqa: F401  (registers `judgekit contrast`)
from judgekit.cli import app
from judgekit.errors import JudgekitError
from judgekit.metrics.postedit import changed_spans, postedit_stats, side_status

# Figure 1 (deu_Latn_Germany): original FLORES, LLM paraphrase; the editor kept both.
PILOT = {
    "source": ("Der Pilot wurde als Staffelführer Dilokrit Pattavee identifiziert.",
               "Der Pilot wurde als Staffelführer Werner Mölders identifiziert."),
    "target": ("The pilot was identified as Squadron Leader Dilokrit Pattavee.",
               "The pilot was identified as Squadron Leader Werner Mölders."),
}  # fmt: skip
VIDAL = {
    "source": ("Der 28-jährige Vidal war vor drei Spielzeiten von Sevilla zu Barça gekommen.",
               "Der 28-jährige Goretzka war vor drei Spielzeiten von Schalke zu Bayern gekommen."),
    "target": ("28-year-old Vidal joined Barça three seasons ago, from Sevilla.",
               "28-year-old Goretzka joined Bayern three seasons ago, from Schalke."),
}  # fmt: skip


def test_changed_spans():
    a = list("abcdef")
    assert changed_spans(a, a) == (0, 0)
    assert changed_spans(a, list("aXcdef")) == (1, 2)  # one replace: 1 out, 1 in
    assert changed_spans(a, list("aXYcdf")) == (2, 4)  # b -> X Y, and e deleted
    assert changed_spans(a, list("Zabcdef")) == (1, 1)  # one insertion


def test_side_status():
    assert side_status("orig", "llm", "llm") == "kept"
    assert side_status("orig", "llm", "orig ") == "reverted"  # whitespace is collapsed
    assert side_status("orig", "llm", "other") == "edited"
    assert side_status("same", "same", "same") == "kept"  # LLM changed nothing, editor agreed


def test_figure1_diff_counts():
    # The annotation interface shows "German diff: 4 / English diff: 4" for the pilot and
    # "German diff: 6 / English diff: 6" for Vidal: changed tokens, removed + added.
    sides = {s: ([PILOT[s][0], VIDAL[s][0]], [PILOT[s][1], VIDAL[s][1]],
                 [PILOT[s][1], VIDAL[s][1]]) for s in ("source", "target")}  # fmt: skip
    stats = postedit_stats(sides)
    pilot, vidal = stats.detail
    for side in ("source", "target"):
        assert pilot.sides[side].localisation_tokens == 4
        assert vidal.sides[side].localisation_tokens == 6
        assert (pilot.sides[side].localisation_edits, vidal.sides[side].localisation_edits) == (
            1,
            3,
        )
        assert stats.sides[side]["mean_localisation_edits"] == 2.0  # (1 + 3) / 2
    assert stats.segments == {"kept": 2, "reverted": 0, "edited": 0}


def test_table1_counts_on_hand_made_triples():
    src_o, src_l = VIDAL["source"]
    tgt_o, tgt_l = VIDAL["target"]
    src_e = src_l.replace("Bayern", "Dortmund")  # 1 editor span
    tgt_e = tgt_l.replace("Bayern", "Dortmund").replace("Schalke", "Bochum")  # 2 editor spans
    rows = [
        (src_l, tgt_l),  # kept
        (src_o, tgt_o),  # reverted
        (src_e, tgt_l),  # edited: source only
        (src_l, tgt_e),  # edited: target only
        (src_e, tgt_e),  # edited: both
        (src_o, tgt_e),  # source reverted, target edited: edited, both sides changed
    ]
    sides = {
        "source": ([src_o] * 6, [src_l] * 6, [r[0] for r in rows]),
        "target": ([tgt_o] * 6, [tgt_l] * 6, [r[1] for r in rows]),
    }
    stats = postedit_stats(sides)
    assert stats.segments == {"kept": 1, "reverted": 1, "edited": 4}
    assert stats.edited_by_sides == {"source": 1, "target": 1, "source+target": 2}
    source, target = stats.sides["source"], stats.sides["target"]
    assert (source["kept"], source["edited"], source["reverted"]) == (2, 2, 2)
    assert (target["kept"], target["edited"], target["reverted"]) == (2, 3, 1)
    # Editor spans: source 0,3,1,0,1,3 -> 8 over 4 revised; target 0,3,0,2,2,2 -> 9 over 4.
    assert (source["editor_edits"], source["mean_editor_edits_revised"]) == (8, 2.0)
    assert (target["editor_edits"], target["mean_editor_edits_revised"]) == (9, 2.25)
    # Original -> final spans: source 3,0,3,3,3,0 = 12; target 3,0,3,3,3,3 = 15.
    assert (source["localisation_edits"], target["localisation_edits"]) == (12, 15)
    assert stats.signature == "source.tok:13a|target.tok:13a|ws:collapse|spans:difflib-opcodes"


def test_cjk_side_counts_characters():
    # 台北 -> 新加坡 is one span of 5 characters (2 out, 3 in) under the zh tokenizer.
    stats = postedit_stats(
        {"source": (["台北很熱"], ["新加坡很熱"], ["新加坡很熱"])}, tokenize="zh"
    )
    assert (stats.detail[0].sides["source"].localisation_edits,
            stats.detail[0].sides["source"].localisation_tokens) == (1, 5)  # fmt: skip


def test_errors():
    with pytest.raises(JudgekitError, match="side 'target': 1 original, 2 LLM"):
        postedit_stats({"source": (["a"], ["b"], ["c"]), "target": (["a"], ["b", "x"], ["c"])})
    with pytest.raises(JudgekitError, match="no tokenizer given for side 'target'"):
        postedit_stats({"target": (["a"], ["b"], ["c"])}, tokenize={"source": "13a"})


def test_cli_postedit(tmp_path):
    texts = {"o": [PILOT["target"][0], VIDAL["target"][0]],
             "l": [PILOT["target"][1], VIDAL["target"][1]],
             "e": [PILOT["target"][1], VIDAL["target"][0]]}  # fmt: skip
    for name, lines in texts.items():
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["contrast", "postedit", "--original", tmp_path / "o.txt", "--llm", tmp_path / "l.txt",
            "--edited", tmp_path / "e.txt", "--out", out]  # fmt: skip
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    payload = json.loads((out / "postedit.json").read_text())
    assert payload["segments"] == {"kept": 1, "reverted": 1, "edited": 0}
    assert payload["sides"]["text"]["editor_edits"] == 3  # the revert undid 3 LLM spans
    assert (out / "postedit.csv").read_text().splitlines()[2].startswith("2,reverted,")
