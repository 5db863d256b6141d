"""What the texts and the target language do to BLEU and chrF: the target language picks BLEU's
tokenizer (13a on Chinese warns), Japanese scores by MeCab words, one Unicode normal form line
by line, all-empty hypotheses flagged, a byte order mark read as no text (the official WMT
scores: test_mt.py)."""

from __future__ import annotations

import json

import pytest
from cli_inproc import run_main
from typer.testing import CliRunner

import judgekit.cli.mqm  # noqa: F401  (registers a second command so `score` is a subcommand)
import judgekit.cli.score  # noqa: F401
from judgekit.cli import app
from judgekit.data.lines import read_lines
from judgekit.errors import InputError
from judgekit.metrics import mt

runner = CliRunner()


# the target language picks BLEU's tokenizer (issue 12, case 1)
ZH_HYP, ZH_REF = "我喜欢在公园里散步。", "我喜欢在公园散步。"


def test_target_language_picks_the_bleu_tokenizer_and_13a_on_chinese_warns():
    from judgekit.errors import JudgekitWarning
    from judgekit.metrics.tokenizers import tokenizer_for, usable

    # 13a keeps the whole unspaced sentence as one token: BLEU 0, and a warning says why
    with pytest.warns(JudgekitWarning, match="does not split into words"):
        plain = mt.corpus_score("bleu", [ZH_HYP], [[ZH_REF]])
    assert plain.score == 0.0 and "tok:13a" in plain.signature
    # by hand (tok:zh, one token per Han character): precisions 9/10, 7/9, 5/8, 3/7, BP 1
    expected = 100 * (9 / 10 * 7 / 9 * 5 / 8 * 3 / 7) ** 0.25
    for target in ("zh", "cmn_Hans", "cmn_Hans_Singapore", "yue_Hant"):
        zh = mt.corpus_score("bleu", [ZH_HYP], [[ZH_REF]], target_lang=target)
        assert zh.score == pytest.approx(expected) and "tok:zh" in zh.signature
    assert round(expected, 2) == 65.80
    seg = mt.segment_scores("bleu", [ZH_HYP], [[ZH_REF]], target_lang="zh")
    assert "tok:zh" in seg.signature
    # an explicit tokenizer wins; chrF and spBLEU do not change
    assert "tok:char" in mt.corpus_score("bleu", [ZH_HYP], [[ZH_REF]], tokenize="char",
                                         target_lang="zh").signature  # fmt: skip
    assert mt.corpus_score("chrf", [ZH_HYP], [[ZH_REF]], target_lang="zh").metric == "chrF"
    assert tokenizer_for("jpn_Jpan") == tokenizer_for("ja") == "ja-mecab"  # sacrebleu[ja] here
    assert tokenizer_for("kor_Hang") == ("ko-mecab" if usable("ko-mecab") else "char")
    assert tokenizer_for("tha_Thai") == "char" and tokenizer_for("deu_Latn_Austria") == "13a"
    with pytest.raises(InputError, match="not a target language"):
        tokenizer_for("Chinese")


def test_japanese_target_scores_with_mecab_words():
    hyp, ref = "今日は良い天気です。", "今日はいい天気です。"
    ja = mt.corpus_score("bleu", [hyp], [[ref]], target_lang="jpn_Jpan")
    assert "tok:ja-mecab" in ja.signature and 0 < ja.score < 100


def test_cli_score_target_lang_and_the_13a_warning(tmp_path):
    hyp, ref = tmp_path / "zh.hyp", tmp_path / "zh.ref"
    hyp.write_text(ZH_HYP + "\n", encoding="utf-8")
    ref.write_text(ZH_REF + "\n", encoding="utf-8")
    base = ["score", "-i", str(hyp), "-r", str(ref), "-m", "bleu", "--json"]
    plain = runner.invoke(app, base)
    assert plain.exit_code == 0
    payload = json.loads(plain.stdout)
    assert payload["scores"][0]["score"] == 0.0 and "13a" in payload["warnings"][0]
    assert "warning:" in plain.stderr and "--target-lang" in plain.stderr
    zh = runner.invoke(app, [*base, "--target-lang", "cmn_Hans"])
    assert zh.exit_code == 0 and zh.stderr == ""
    score = json.loads(zh.stdout)["scores"][0]
    assert round(score["score"], 2) == 65.80 and "tok:zh" in score["signature"]
    bad = runner.invoke(app, [*base, "--target-lang", "Chinese"])
    assert isinstance(bad.exception, InputError) and bad.exception.field == "--target-lang"


def test_texts_are_scored_in_one_normal_form_line_by_line_and_say_so() -> None:
    """Issue 32.8: a hypothesis file and a reference file mixing NFC and NFD from line to line
    (each file as a whole neither all NFC nor all NFD) scored far from 100 with nothing said;
    every segment is now compared in NFC (100) with a warning counting those normalised."""
    import unicodedata
    import warnings

    from sacrebleu.metrics import CHRF

    from judgekit.errors import JudgekitWarning

    text = ["Le café est très bon à Genève, déjà vu.", "Ça dépend: élève, fenêtre, où.",
            "Übermäßig schön, naïve Straße."]  # fmt: skip
    nfd = [unicodedata.normalize("NFD", t) for t in text]
    hyp = [text[0], nfd[1], text[2]]
    ref = [nfd[0], text[1], nfd[2]]
    assert CHRF().corpus_score(hyp, [ref]).score < 50  # as written: the forms never match
    with pytest.warns(JudgekitWarning, match=r"1 of 3 hypotheses, 2 of 3 segments of reference"):
        assert mt.corpus_score("chrf", hyp, [ref]).score == 100.0
    with pytest.warns(JudgekitWarning, match="not in Unicode NFC"):
        assert mt.segment_scores("bleu", hyp, [ref]).scores == pytest.approx((100.0,) * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", JudgekitWarning)  # all NFC: scored as sacrebleu, no warning
        assert mt.corpus_score("chrf", text, [text]).score == 100.0


def test_all_empty_hypotheses_are_flagged_not_scored_as_normal(tmp_path) -> None:
    """Issue 32.9: every hypothesis empty gave BLEU/chrF 0.00 with no word; now a warning and
    ``n_empty`` in --json. A 0-byte file is refused (exit 2)."""
    hyp, ref, zero = tmp_path / "hyp.txt", tmp_path / "ref.txt", tmp_path / "zero.txt"
    hyp.write_text("\n\n\n", encoding="utf-8")
    ref.write_text("a b c\nd e f\ng h i\n", encoding="utf-8")
    zero.write_bytes(b"")
    cmd = ["score", "--ref", str(ref)]
    done = run_main(*cmd, "--hyp", str(hyp), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["n_segments"], doc["n_empty"]) == (3, 3)
    assert [s["score"] for s in doc["scores"]] == [0.0, 0.0]
    assert doc["warnings"] == [
        "every hypothesis is empty: an empty segment scores 0 (nothing was translated there)"
    ]
    refused = run_main(*cmd, "--hyp", str(zero))
    assert refused.returncode == 2 and "the file is empty" in refused.stderr


def test_a_byte_order_mark_is_not_text_of_the_first_segment(tmp_path):
    lines = "Der Hund bellt laut.\nEine Katze schläft.\n"
    plain, marked, ref = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "r.txt"
    plain.write_text(lines, encoding="utf-8")
    marked.write_text(lines, encoding="utf-8-sig")  # Notepad's UTF-8: EF BB BF first
    ref.write_text("Der Hund bellt.\nEine Katze schläft.\n", encoding="utf-8-sig")
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    assert read_lines(marked) == read_lines(plain) == lines.splitlines()
    scores = [
        json.loads(
            runner.invoke(
                app, ["score", "--hyp", str(h), "--ref", str(ref), "--metric", "chrf", "--json"]
            ).output
        )  # fmt: skip
        for h in (plain, marked)
    ]
    assert scores[0]["scores"] == scores[1]["scores"]
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbf")
    with pytest.raises(InputError, match="empty"):
        read_lines(tmp_path / "bom.txt")
