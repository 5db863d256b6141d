"""Cultivar's contrastive analysis (paper 000, Sec. 3.2, Tables 2-4, Figure 6) by hand and on
NTREX-128's locale-variant references (shared/data/ntrex128)."""

from __future__ import annotations

import csv
import json
import math

import pandas as pd
import pytest
from conftest import shared_path
from typer.testing import CliRunner

import judgekit.cli.contrast  # noqa: F401  (registers `judgekit contrast`)
import judgekit.cli.contrast_inputs
from judgekit.cli import app
from judgekit.data.lines import read_lines
from judgekit.data.locales import parse_locale
from judgekit.data.testsets import Manifest, TestSet, ntrex128_manifest
from judgekit.errors import InputError, JudgekitError
from judgekit.metrics import contrastive as c
from judgekit.metrics import word_recall as wr


def _row(model, locale, language, orig, loc):
    return {"model": model, "testset": locale, "locale": locale, "label": locale,
            "original": language, "language": language, "metric": "BLEU",
            "score_original": orig, "score_localised": loc, "delta": loc - orig}  # fmt: skip


# 2 models x 2 locales, scores chosen by hand.
HAND = pd.DataFrame(
    [
        _row("M1", "hin_Deva_India", "hin_Deva", 30.0, 25.0),  # -5
        _row("M1", "fra_Latn_Canada", "fra_Latn", 40.0, 44.0),  # +4
        _row("M2", "hin_Deva_India", "hin_Deva", 20.0, 22.0),  # +2
        _row("M2", "fra_Latn_Canada", "fra_Latn", 50.0, 41.0),  # -9
    ]
)


def test_mean_pairwise_delta_and_locale_means_by_hand():
    pairwise = c.mean_pairwise_delta(HAND).set_index("model")
    assert pairwise.loc["M1", "delta"] == pytest.approx((-5 + 4) / 2)
    assert pairwise.loc["M2", "delta"] == pytest.approx((2 - 9) / 2)
    assert set(pairwise["n_pairs"]) == {2}
    per_locale = c.locale_mean_delta(HAND).set_index("label")["delta"]
    assert per_locale["hin_Deva_India"] == pytest.approx((-5 + 2) / 2)
    assert per_locale["fra_Latn_Canada"] == pytest.approx((4 - 9) / 2)
    # Table 3's "Average" row: the mean over models of the mean pairwise Delta.
    assert pairwise["delta"].mean() == pytest.approx(-2.0)


def test_figure6_order():
    table = c.delta_matrix(HAND, "BLEU")
    assert list(table.index) == ["M1", "M2"]  # mean -0.5 above -3.5
    assert list(table.columns) == ["hin_Deva_India", "fra_Latn_Canada"]  # -1.5 left of -2.5
    assert table.loc["M2", "fra_Latn_Canada"] == -9.0
    with pytest.raises(JudgekitError, match="no Delta rows for metric 'chrF'"):
        c.delta_matrix(HAND, "chrF")


def test_mean_pairwise_delta_is_not_the_difference_of_averages():
    # Sec. 4.2: one language paired with several locales. cmn has 2 locales, hin 1.
    frame = pd.DataFrame(
        [
            _row("M", "cmn_Hans_Singapore", "cmn_Hans", 40.0, 30.0),  # -10
            _row("M", "cmn_Hans_US", "cmn_Hans", 40.0, 44.0),  # +4
            _row("M", "hin_Deva_India", "hin_Deva", 20.0, 23.0),  # +3
        ]
    )
    assert c.mean_pairwise_delta(frame)["delta"].item() == pytest.approx(-1.0)
    avg = c.average_scores(frame).iloc[0]
    assert (avg["original"], avg["localised"]) == (30.0, pytest.approx(97 / 3))
    assert avg["localised"] - avg["original"] == pytest.approx(7 / 3)  # != -1


def test_ranking_by_locale():
    rows = [_row(m, "yor_Latn_Nigeria", "yor_Latn", o, lo)
            for m, o, lo in (("A", 10, 12), ("B", 20, 25), ("C", 30, 28))]  # fmt: skip
    rows += [_row(m, "tel_Telu_India", "tel_Telu", o, lo)
             for m, o, lo in (("A", 10, 30), ("B", 20, 20), ("C", 30, 10))]  # fmt: skip
    ranking = c.ranking_by_locale(pd.DataFrame(rows), "BLEU").set_index("label")
    assert ranking.loc["yor_Latn_Nigeria", ["spearman", "kendall_tau_b"]].tolist() == [1.0, 1.0]
    assert ranking.loc["tel_Telu_India", ["spearman", "kendall_tau_b"]].tolist() == [-1.0, -1.0]
    assert c.ranking_by_locale(HAND, "BLEU").empty  # 2 models: too few to rank


def _bleu(*precisions):
    """sacrebleu BLEU with brevity penalty 1: 100 * geometric mean of the 4 precisions."""
    return 100 * math.prod(precisions) ** 0.25


# Hand-made references; BLEU of one against the other (13a, same length, so BP = 1):
FR_ORIG, FR_LOC = (
    "Le maire de Paris a visité Lyon hier",
    "Le maire de Montréal a visité Québec hier",
)
FR_BLEU = _bleu(6 / 8, 3 / 7, 1 / 6, 1 / (2 * 5))  # no 4-gram match: exp smoothing 1/(2*5)
ES_ORIG, ES_LOC = "El tren llegó a Madrid a las diez", "El tren llegó a Monterrey a las diez"
ES_BLEU = _bleu(7 / 8, 5 / 7, 3 / 6, 1 / 5)


def _hand_manifest(tmp_path) -> Manifest:
    sets = {}
    for code, orig, loc, locale in (("fra", FR_ORIG, FR_LOC, "fra_Latn_Canada"),
                                    ("spa", ES_ORIG, ES_LOC, "spa_Latn_Mexico")):  # fmt: skip
        for set_id, text, link in ((code, orig, None), (locale, loc, code)):
            (tmp_path / f"{set_id}.txt").write_text(text + "\n", encoding="utf-8")
            parsed = parse_locale(locale if link else locale[:8])
            sets[set_id] = TestSet(set_id, "eng_Latn", parsed.flores, parsed, link,
                                   tmp_path / f"{set_id}.txt")  # fmt: skip
    return Manifest(sets)


def test_delta_frame_2_models_x_2_locales(tmp_path):
    manifest = _hand_manifest(tmp_path)
    # "orig" always outputs the original reference, "loc" the localised one.
    hyps = {("orig", k): [FR_ORIG if k[:3] == "fra" else ES_ORIG] for k in manifest.testsets}
    hyps |= {("loc", k): [FR_LOC if k[:3] == "fra" else ES_LOC] for k in manifest.testsets}
    frame = c.delta_frame(hyps, manifest, ["bleu"]).set_index(["model", "locale"])
    assert frame.loc[("orig", "fra_Latn_Canada"), "delta"] == pytest.approx(FR_BLEU - 100)
    assert frame.loc[("orig", "spa_Latn_Mexico"), "delta"] == pytest.approx(ES_BLEU - 100)
    assert frame.loc[("loc", "fra_Latn_Canada"), "delta"] == pytest.approx(100 - FR_BLEU)
    assert frame.loc[("loc", "spa_Latn_Mexico"), "score_original"] == pytest.approx(ES_BLEU)
    pairwise = c.mean_pairwise_delta(frame.reset_index()).set_index("model")["delta"]
    assert pairwise["loc"] == pytest.approx((200 - FR_BLEU - ES_BLEU) / 2)
    assert pairwise["orig"] == pytest.approx(-pairwise["loc"])
    # A model that translated only one side of a pair has no Delta for it.
    del hyps["loc", "spa"]
    assert len(c.delta_frame(hyps, manifest, ["bleu"]).query("model == 'loc'")) == 1


def test_default_tokenizer():
    tokenizers = [c.default_tokenizer(x) for x in ("cmn_Hant", "jpn_Jpan", "tha_Thai", "hin_Deva")]
    assert tokenizers == ["zh", "ja-mecab", "char", "13a"]


def test_word_recall_by_hand():
    # Cultivar Figure 1's pilot, and a football sentence; "." is not a term.
    orig = ["The pilot was identified as Squadron Leader Dilokrit Pattavee.",
            "Vidal joined Barça from Sevilla."]  # fmt: skip
    loc = ["The pilot was identified as Squadron Leader Werner Mölders.",
           "Goretzka joined Bayern from Schalke."]  # fmt: skip
    hyp = ["The pilot was named as Squadron Leader Werner Pattavee.",
           "Goretzka joined Bayern from Sevilla."]  # fmt: skip
    result = wr.locale_word_recall(hyp, orig, loc)
    first, second = result.segments
    assert (first.original_terms, first.localised_terms) == (
        ("Dilokrit", "Pattavee"),
        ("Mölders", "Werner"),
    )
    assert (first.fp_terms, first.fn_terms) == (("Pattavee",), ("Mölders",))
    assert (second.fp_terms, second.fn_terms) == (("Sevilla",), ("Schalke",))
    assert (result.n_fp, result.n_original_terms, result.fp_rate) == (2, 5, 0.4)
    assert (result.n_fn, result.n_localised_terms, result.fn_rate) == (2, 5, 0.4)
    assert result.signature == "terms:ref-diff|tok:13a|case:mixed|pool:micro"
    # Case: "pattavee" is another word unless case is folded.
    lower = ["the pilot was named as squadron leader werner pattavee.", hyp[1]]
    assert wr.locale_word_recall(lower, orig, loc).n_fp == 1
    assert wr.locale_word_recall(lower, orig, loc, lowercase=True).n_fp == 2


def test_word_recall_cjk_counts_characters():
    # Taipei mayor Ko Wen-je said -> Singapore PM Lee Hsien Loong said (Traditional script).
    orig, loc = "台北市長柯文哲說", "新加坡總理李顯龍說"
    hyp = "新加坡總理李文哲說"  # keeps 文哲 of the original name, misses 顯龍
    result = wr.locale_word_recall([hyp], [orig], [loc], tokenize="zh")
    [seg] = result.segments
    assert "".join(seg.original_terms) == "".join(sorted("台北市長柯文哲"))
    assert (seg.fp_terms, seg.fn_terms) == (("哲", "文"), ("顯", "龍"))  # code point order
    assert (result.fp_rate, result.fn_rate) == (2 / 7, 2 / 8)
    with pytest.raises(JudgekitError, match="aligned lists"):
        wr.locale_word_recall([hyp], [orig, orig], [loc])


# --- NTREX-128: human locale variants used as "translations" -------------------------------


@pytest.fixture(scope="module")
def ntrex():
    """Per pair, a pseudo-model whose translation of both sets is the localised reference, so
    its original score is the variant scored against its sibling (MANIFEST.md's overlap file)."""
    manifest = ntrex128_manifest(shared_path("ntrex128"))
    wanted = ("fra-CA", "zho-TW", "eng-IN")
    pairs = {loc.id: orig for loc, orig in manifest.pairs() if loc.id in wanted}
    hyps = {}
    for loc_id, orig in pairs.items():
        text = manifest.testsets[loc_id].read().references
        hyps[f"{loc_id}-as-MT", loc_id] = hyps[f"{loc_id}-as-MT", orig.id] = text
    return manifest, hyps, c.delta_frame(hyps, manifest, ["bleu", "chrf"])


def test_ntrex128_deltas_match_locale_variant_overlap(ntrex):
    _, _, frame = ntrex
    with shared_path("ntrex128", "locale_variant_overlap_sacrebleu2.6.0.tsv").open() as handle:
        expected = {r["hypothesis_file"][4:]: r for r in csv.DictReader(handle, delimiter="\t")}
    assert len(frame) == 6
    for row in frame.itertuples():
        want = expected[row.testset]
        column = "corpus_BLEU" if row.metric == "BLEU" else "corpus_chrF2"
        assert row.score_original == pytest.approx(float(want[column]), abs=5e-5)
        assert row.score_localised == pytest.approx(100.0)
        assert row.delta == pytest.approx(100.0 - float(want[column]), abs=5e-5)
        if row.metric == "BLEU":
            assert f"tok:{want['bleu_tokenize']}|" in row.signature_original
    assert c.delta_matrix(frame, "chrF").shape == (3, 3)


def test_ntrex128_word_recall_eng_gb():
    # The WMT19 English source as a "translation" of the British set: US spellings are FPs.
    # 143/78 and 142/77 were also counted with a plain regex word split (\w, ', -), by hand.
    manifest = ntrex128_manifest(shared_path("ntrex128"))
    wmt19 = read_lines(shared_path("ntrex128", "newstest2019-src.eng.txt"))
    summary, segments = wr.recall_frames({("wmt19", "eng-GB"): wmt19}, manifest)
    line19 = segments.set_index("line").loc[19]
    assert (line19.original_terms, line19.localised_terms) == ("neighboring", "neighbouring")
    assert (line19.fp_terms, line19.fn_terms) == ("neighboring", "neighbouring")
    row = summary.iloc[0]
    assert (row.n_original_terms, row.n_fp, row.n_localised_terms, row.n_fn) == (143, 78, 142, 77)
    assert row.fp_rate == pytest.approx(78 / 143)


def test_cli_delta_single_pair(tmp_path):
    root = shared_path("ntrex128")
    ref = {k: root / f"newstest2019-ref.{k}.txt" for k in ("eng-US", "eng-IN")}
    out = tmp_path / "out"
    args = ["contrast", "delta", "--orig-ref", ref["eng-US"], "--loc-ref", ref["eng-IN"],
            "--orig-hyp", ref["eng-IN"], "--loc-hyp", ref["eng-IN"], "--model", "IN-as-MT",
            "--locale", "eng_Latn_India", "--metric", "bleu", "--out", out]  # fmt: skip
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out / "delta.csv")
    assert frame["score_original"].item() == pytest.approx(92.0952, abs=5e-5)  # overlap file
    assert (out / "delta.json").is_file() and (out / "delta_BLEU.png").stat().st_size > 0


def test_cli_manifest_form_delta_recall_and_errors(tmp_path):
    manifest = _hand_manifest(tmp_path)
    lines = ["testsets:"] + [
        f"  - {{id: {t.id}, src_lang: eng_Latn, tgt_lang: {t.tgt_lang}, locale: {t.locale.id}, "
        f"reference: {t.reference.name}" + (f", original: {t.original}}}" if t.original else "}")
        for t in manifest.testsets.values()
    ]
    (tmp_path / "m.yaml").write_text("\n".join(lines) + "\n")
    for model, texts in (("orig", (FR_ORIG, ES_ORIG)), ("loc", (FR_LOC, ES_LOC))):
        (tmp_path / "hyps" / model).mkdir(parents=True)
        for set_id in manifest.testsets:
            text = texts[0] if set_id.startswith("fra") else texts[1]
            (tmp_path / "hyps" / model / f"{set_id}.txt").write_text(text + "\n")
    base = ["--manifest", tmp_path / "m.yaml", "--hyp-dir", tmp_path / "hyps"]
    out = tmp_path / "out"
    run = CliRunner().invoke
    result = run(app, [str(a) for a in ["contrast", "delta", *base, "--out", out]])
    assert result.exit_code == 0, result.output
    payload = json.loads((out / "delta.json").read_text())
    pairwise = {(r["model"], r["metric"]): r["delta"] for r in payload["mean_pairwise_delta"]}
    assert pairwise["loc", "BLEU"] == pytest.approx((200 - FR_BLEU - ES_BLEU) / 2)
    assert {p.name for p in out.glob("*.png")} == {"delta_BLEU.png", "delta_chrF.png"}
    result = run(app, [str(a) for a in ["contrast", "recall", *base, "--out", out]])
    assert result.exit_code == 0, result.output
    recall = pd.read_csv(out / "recall.csv").set_index(["model", "locale"])
    # orig copies the original reference: every original-only term kept, every new one missed.
    assert recall.loc[("orig", "fra_Latn_Canada"), ["n_fp", "n_original_terms"]].tolist() == [2, 2]
    assert recall.loc[("loc", "spa_Latn_Mexico"), ["fp_rate", "fn_rate"]].tolist() == [0.0, 0.0]
    # A translation file with the wrong number of lines: the error names both files.
    (tmp_path / "hyps" / "loc" / "fra.txt").write_text("a\nb\n")
    with pytest.raises(InputError) as info:
        judgekit.cli.contrast_inputs.contrast_inputs(
            str(tmp_path / "m.yaml"), tmp_path / "hyps", {}, "m", None, None
        )
    assert str(info.value) == (
        f"{tmp_path / 'hyps' / 'loc' / 'fra.txt'}: has 2 lines but the references "
        f"{tmp_path / 'fra.txt'} have 1"
    )
