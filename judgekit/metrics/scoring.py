"""Score a hypothesis file against references: corpus BLEU / spBLEU / chrF, segment scores and a
paired test against a baseline file, with sacrebleu (Post 2018; paired bootstrap resampling,
Koehn 2004; approximate randomisation, Riezler & Maxwell 2005). ``judgekit score`` prints what
:func:`score_files` returns.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from judgekit.data.lines import read_lines
from judgekit.errors import InputError, JudgekitWarning
from judgekit.metrics import mt
from judgekit.metrics.tokenizers import tokenizer_for

PAIRED_TESTS = ("bs", "ar")


def metric_names(spec: str) -> list[str]:
    """The metric names of a ``--metric`` value (comma-separated, case-insensitive, repeats
    dropped, in order).

    Raises:
        InputError: empty, or a name that is not one of :data:`judgekit.metrics.mt.METRICS`
            (field ``--metric``).
    """
    names = list(dict.fromkeys(n.strip().lower() for n in spec.split(",") if n.strip()))
    unknown = [n for n in names if n not in mt.METRICS]
    if not names or unknown:
        given = f"'{', '.join(unknown)}' is not a metric; " if unknown else ""
        raise InputError(None, f"{given}choose from {', '.join(mt.METRICS)}", field="--metric")
    return names


@dataclass
class ScoreReport:
    """What ``judgekit score`` reports: one corpus score per distinct (metric, signature), the
    segment scores and paired tests of those metrics when asked, and each warning once."""

    hyp: Path
    refs: list[Path]
    baseline: Path | None
    corpus: list[mt.CorpusScore]
    segments: list[mt.SegmentScores] = field(default_factory=list)
    paired: list[mt.PairedResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    n_segments: int = 0
    n_empty: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The ``--json`` payload: ``hyp``, ``refs``, ``n_segments``, ``n_empty`` (empty
        hypotheses: each scores 0), ``scores``, ``segments``, ``paired`` (each with its
        ``baseline``), ``warnings``."""
        return {
            "hyp": str(self.hyp),
            "refs": [str(r) for r in self.refs],
            "n_segments": self.n_segments,
            "n_empty": self.n_empty,
            "scores": [asdict(c) for c in self.corpus],
            "segments": [asdict(s) for s in self.segments],
            "paired": [asdict(t) | {"baseline": str(self.baseline)} for t in self.paired],
            "warnings": self.warnings,
        }


def score_files(
    hyp: Path,
    refs: list[Path],
    metrics: list[str],
    *,
    tokenize: str | None = None,
    target_lang: str | None = None,
    spm_model: Path | None = None,
    segments: bool = False,
    baseline: Path | None = None,
    paired: str = "bs",
    n_samples: int = 0,
) -> ScoreReport:
    """Score ``hyp`` (one segment a line) against ``refs`` with each of ``metrics``.

    Metrics that come out identical (same metric and sacrebleu signature, e.g. ``bleu`` with
    ``--tokenize flores200`` and ``spbleu``) are reported once. Scores are 0-100.

    Raises:
        InputError: an unknown paired test (field ``--paired``) or target language, a file
            missing or not UTF-8, files of different lengths (naming the file).
        JudgekitError: a SentencePiece model that cannot be found.
    """
    if paired not in PAIRED_TESTS:
        raise InputError(None, f"unknown paired test '{paired}'; choose bs or ar", field="--paired")
    hyps, ref_lines = mt.read_hyp_refs(hyp, refs)
    base_hyps = None
    if baseline is not None:
        base_hyps = read_lines(baseline)
        if len(base_hyps) != len(hyps):
            raise InputError(
                baseline,
                f"has {len(base_hyps)} lines but the hypothesis file {hyp} has {len(hyps)}",
            )
    if target_lang is not None:
        tokenizer_for(target_lang, field="--target-lang")  # a bad value fails before scoring
    options = {"tokenize": tokenize, "spm_model": spm_model, "target_lang": target_lang}
    report = ScoreReport(hyp, list(refs), baseline, corpus=[], n_segments=len(hyps),
                         n_empty=sum(not h.strip() for h in hyps))  # fmt: skip
    names: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", JudgekitWarning)
        for name in metrics:
            result = mt.corpus_score(name, hyps, ref_lines, **options)
            if all(
                (c.metric, c.signature) != (result.metric, result.signature) for c in report.corpus
            ):
                report.corpus.append(result)
                names.append(name)
    report.warnings = list(
        dict.fromkeys(str(w.message) for w in caught if w.category is JudgekitWarning)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JudgekitWarning)  # reported once above
        if segments:
            report.segments = [mt.segment_scores(n, hyps, ref_lines, **options) for n in names]
        if base_hyps is not None:
            report.paired = [
                mt.paired_test(
                    n, hyps, base_hyps, ref_lines, test=paired, n_samples=n_samples, **options
                )
                for n in names
            ]
    return report
