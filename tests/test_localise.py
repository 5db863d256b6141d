"""Localisation generation (Cultivar §2.2, Figure 4 prompt): the prompt, the checks on an answer,
and a whole run against a scripted HTTP server writing the localised pair files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fault_server import FaultServer

from judgekit.config import load_config
from judgekit.data.locales import parse_locale
from judgekit.errors import InputError
from judgekit.llm.client import LLMClient
from judgekit.pipelines.localisation_schemas import (
    PAIR_CHECKS,
    LocalisedPair,
    PairChecks,
    checking,
    count_sentences,
)
from judgekit.pipelines.localise import (
    LocaliseRun,
    language_name,
    location_name,
    split_messages,
    write_pairs,
)
from judgekit.prompts import load_prompt
from judgekit.runlog import RunLog

SRC = "Der 28-jährige Vidal war vor drei Spielzeiten von Sevilla zu Barça gekommen."
ENG = "28-year-old Vidal had joined Barça three seasons ago, from Sevilla."
NEW_SRC = "Der 28-jährige Goretzka war vor drei Spielzeiten von Schalke zu Bayern gekommen."
NEW_ENG = "28-year-old Goretzka had joined Bayern three seasons ago, from Schalke."  # paper Fig. 1


def test_locale_ids_follow_the_paper() -> None:
    loc = parse_locale("deu_Latn_Germany", need_location=True)
    assert (loc.language, loc.script, loc.location) == ("deu", "Latn", "Germany")
    assert (language_name(loc), location_name(parse_locale("zho_Hant_Hong_Kong"))) == (
        "German",
        "Hong Kong",
    )
    assert language_name(parse_locale("cmn_Hans_US")) == "Chinese"
    with pytest.raises(InputError, match="locale"):
        parse_locale("de-DE")
    with pytest.raises(InputError, match="no location"):
        parse_locale("deu_Latn", need_location=True)


def test_figure_4_prompt_renders_to_a_system_and_a_user_message() -> None:
    prompt = load_prompt("localisation/localise")
    values = {"src_name": "German", "tgt_name": "English", "src_location": "Germany"}
    messages = split_messages(prompt.render(**values, src_text=SRC, tgt_text=ENG))
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"].startswith("I will provide a pair of German-English parallel")
    assert (
        "localize both sentences to Germany by rephrasing the named entities"
        in messages[0]["content"]
    )  # noqa: E501
    assert messages[1]["content"] == f"German: {SRC}\nEnglish: {ENG}"


def test_sentence_counts() -> None:
    assert count_sentences(SRC) == 1
    assert count_sentences("Er kam. Sie ging!") == 2
    assert count_sentences("我很好。你呢？") == 2
    assert count_sentences("It costs 3.5 euros") == 1
    assert count_sentences("") == 0


CHECKS = PairChecks({"source": SRC, "target": ENG}, {"source": "German", "target": "English"})


def test_a_parallel_localised_pair_passes_and_labels_are_stripped() -> None:
    with checking(PAIR_CHECKS, CHECKS):
        pair = LocalisedPair.model_validate({"source": f"German: {NEW_SRC}", "target": NEW_ENG})
    assert (pair.source, pair.target) == (NEW_SRC, NEW_ENG)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ({"source": " ", "target": NEW_ENG}, "source is empty"),
        ({"source": NEW_SRC}, "Field required"),
        ({"source": f"{NEW_SRC}\nEnglish: {NEW_ENG}", "target": NEW_ENG}, "also holds"),
        ({"source": NEW_SRC, "target": f"{NEW_ENG} He scored twice."}, "2 sentences"),
        ({"source": NEW_SRC, "target": "Goretzka joined."}, "times the original length"),
    ],
)
def test_unparallel_or_missing_sides_are_refused(answer: dict, reason: str) -> None:
    with checking(PAIR_CHECKS, CHECKS), pytest.raises(ValueError, match=reason):
        LocalisedPair.model_validate(answer)


def reply(body: dict) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if "Vidal" in user:
        return json.dumps({"source": NEW_SRC, "target": NEW_ENG}, ensure_ascii=False)
    return json.dumps({"source": "Kurz.", "target": "Short."})  # fails the length check


def test_run_writes_aligned_pair_files_and_counts_exclusions(tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    rows = [{"id": "p1", "source": SRC, "english": ENG},
            {"id": "p2", "source": "Die Sitzung im Bundestag dauerte bis Mitternacht.",
             "english": "The session in the Bundestag lasted until midnight."}]  # fmt: skip
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    with FaultServer(answer_fn=reply) as srv:
        cfg_path = tmp_path / "localise.yaml"
        cfg_path.write_text(
            f"pipeline: localise\nout: {tmp_path / 'run'}\n"
            f"generator: {{model: hosted_vllm/stub, api_base: '{srv.base_url}', max_reasks: 1,"
            " max_retries: 1, timeout: 5}\n"
            f"localise:\n  input: {data}\n  locales: [deu_Latn_Germany, deu_Latn_Switzerland]\n",
            encoding="utf-8",
        )
        cfg = load_config(cfg_path)
        client = LLMClient(RunLog(cfg.out_dir()))
        runner = LocaliseRun(cfg, client)
        asyncio.run(runner.run())
        summary = write_pairs(runner, list(client.seen.values()), cfg.out_dir())
        client.runlog.close()
    out = cfg.out_dir()
    assert summary["items"] == {"planned": 4, "judged": 2, "excluded": {"localise_unscored": 2}}
    lines = [json.loads(x) for x in (out / "localised.jsonl").read_text("utf-8").splitlines()]
    failed = [x for x in lines if x["excluded"]]
    assert len(failed) == 2 and all("times the original length" in x["reason"] for x in failed)
    folder = out / "pairs" / "stub"
    for locale in ("deu_Latn_Germany", "deu_Latn_Switzerland"):
        assert (folder / f"{locale}.source.txt").read_text("utf-8") == NEW_SRC + "\n"
        assert (folder / f"{locale}.english.txt").read_text("utf-8") == NEW_ENG + "\n"
        assert (folder / f"{locale}.ids.txt").read_text("utf-8") == "p1\n"
    assert summary["signature"]["prompts"]["localisation/localise"]


def test_aligned_inputs_must_have_the_same_length(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("eins\nzwei\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("one\n", encoding="utf-8")
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(
        "pipeline: localise\ngenerator: {model: hosted_vllm/stub}\nlocalise:\n"
        f"  source_file: {tmp_path / 'a.txt'}\n  english_file: {tmp_path / 'b.txt'}\n"
        "  locales: [deu_Latn_Germany]\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="aligned"):
        LocaliseRun(load_config(cfg_path), LLMClient(RunLog(tmp_path / "run")))
