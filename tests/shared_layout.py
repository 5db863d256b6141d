"""Lay out a data home (``JUDGEKIT_DATA``) from ``../shared/data``, for the tests and CI.

The paper-reproduction tests and the CI's wheel step read public data by name
(``data:NAME/path``) without a network. ``../shared/data`` holds those files (see each
``MANIFEST.md``): most are the official files byte for byte (stamped ``official``), some are
subsets or transcriptions (``mqm-ted``: 10 of the TED systems; ``global-mmlu-lite``: a
transcription of the JSONL copy), stamped ``local copy`` (:func:`judgekit.datasets.place.
place_copy`), so ``judgekit data list`` and ``verify`` never take them for the official files.

Run as a script: ``python tests/shared_layout.py DEST [SHARED_DATA]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from judgekit.datasets.place import place_copy
from judgekit.datasets.registry import get_set

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MT23 = "mt/wmt23"
GEMBA = "judge-vs-human/wmt23-gemba-mqm-vs-human-mqm"


def _wmt23() -> dict[str, str]:
    files = {}
    for lp in ("en-de", "zh-en"):
        for name in ("src.txt", "refA.txt", "docs.tsv"):
            files[f"{lp}.{name}"] = f"{MT23}/{lp}.{name}"
        for system in ("GPT4-5shot", "NLLB_Greedy", "NLLB_MBR_BLEU", "ONLINE-A"):
            files[f"{lp}.hyp.{system}.txt"] = f"{MT23}/{lp}.hyp.{system}.txt"
        for level in ("seg", "sys"):
            for name in ("BLEU-refA", "chrF-refA"):
                files[f"{lp}.{name}.{level}.score.tsv"] = f"{MT23}/{lp}.{name}.{level}.score.tsv"
            for name in ("mqm", "da-sqm", "GEMBA-MQM-src"):
                files[f"{lp}.{name}.{level}.score.tsv"] = f"{GEMBA}/{lp}.{name}.{level}.score.tsv"
    return files


CODES = "deu zho-CN hin spa rus fra por ita jpn zho-TW spa-MX fra-CA por-BR eng-GB eng-US eng-IN"
NTREX = ["src.eng"] + [f"ref.{c}" for c in CODES.split()]
HITS = "multi-rater/wmt22-appraise-calibration-hits"
LLMBAR = ("Natural", "Adversarial/Neighbor", "Adversarial/GPTInst", "Adversarial/GPTOut",
          "Adversarial/Manual")  # fmt: skip

LAYOUT: dict[str, dict[str, str]] = {
    "ntrex128": {
        **{f"newstest2019-{n}.txt": f"ntrex128/newstest2019-{n}.txt" for n in NTREX},
        "DOCUMENT_IDS.tsv": "ntrex128/DOCUMENT_IDS.tsv",
        "LANGUAGES.tsv": "ntrex128/LANGUAGES.tsv",
    },
    "wmt23-mtme": _wmt23(),
    "mqm-ted": {
        "mqm_ted_ende.tsv": "mqm/google_mqm_ted_ende.systems-subset.tsv",
        "mqm_ted_zhen.tsv": "mqm/google_mqm_ted_zhen.systems-subset.tsv",
    },
    "llmbar": {
        f"{s}/dataset.json": f"judge-vs-human/llmbar/dataset.{s.replace('/', '_')}.json"
        for s in LLMBAR
    },
    "wmt22-calibration-hits": {
        name: f"{HITS}/{name}"
        for name in (
            "WMT22.Appraise.calibrationHITs.20221103.csv",
            "WMT22.Appraise.calibrationHITs.20221103.mapping.csv",
            "header.calibrationHITs.csv",
            "header.calibrationHITs.mapping.csv",
        )
    },
    "global-mmlu-lite": {
        "en_test.jsonl": "benchmark-items/global-mmlu-lite-en/global_mmlu_lite_en_test.source.jsonl"
    },
}


def lay_out(home: Path, shared: Path = SHARED_DATA) -> dict[str, Path]:
    """Place every set of :data:`LAYOUT` whose files are all in ``shared``; returns the set
    folders placed (a set with a file missing is left out)."""
    placed = {}
    for name, files in LAYOUT.items():
        sources = {path: shared / rel for path, rel in files.items()}
        if all(p.is_file() for p in sources.values()):
            placed[name] = place_copy(get_set(name), sources, home)
    return placed


if __name__ == "__main__":
    dest = Path(sys.argv[1])
    done = lay_out(dest, Path(sys.argv[2]) if len(sys.argv) > 2 else SHARED_DATA)
    print(f"laid out {len(done)} data sets in {dest}: {', '.join(done)}")
