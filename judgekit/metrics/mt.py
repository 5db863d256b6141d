"""Reference-based MT metrics, thin over sacrebleu: BLEU, spBLEU and chrF.

Every score carries sacrebleu's signature string (``nrefs:1|case:mixed|eff:no|tok:13a|...``),
from which it can be reproduced with the sacrebleu command line.

* BLEU: Papineni et al. 2002, as implemented by sacrebleu (Post 2018), any sacrebleu tokenizer
  (``13a`` default, ``zh``, ``ja-mecab``, ``char``, ``intl``, ...).
* spBLEU: BLEU over SentencePiece pieces with the FLORES-200 model (``tok:flores200``; NLLB Team
  2022, Sec. 7.1; Cultivar paper, Sec. 4). judgekit never downloads the model: it reads it from a
  configured path (see :func:`judgekit.metrics.spm.resolve_spm_model`) and fails with a clear
  error when it is absent.
* chrF: Popovic 2015, character 6-grams, beta 2, ``word_order=0`` (chrF2, not chrF++).

References use sacrebleu's stream layout: ``refs[k][i]`` is the k-th reference of segment i.
Paired significance (bootstrap resampling, Koehn 2004; approximate randomisation, Riezler and
Maxwell 2005) runs through ``sacrebleu.significance.PairedTest``.

BLEU's tokenizer: ``tokenize`` if given, else the one of ``target_lang``
(:func:`judgekit.metrics.tokenizers.tokenizer_for`: ``zh`` for Chinese, ``ja-mecab`` for
Japanese, ...), else ``13a``; references mostly in Chinese, Japanese, Korean or Thai-type script
scored with ``13a`` raise a :class:`~judgekit.errors.JudgekitWarning`.

Every segment is scored in Unicode NFC: text already in NFC is scored as sacrebleu scores it;
a segment in another form is normalised, with a :class:`~judgekit.errors.JudgekitWarning`
counting them (:func:`in_one_form`; docs/mt-scoring.md, "Text normalisation").
"""

from __future__ import annotations

import unicodedata
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.metrics.base import Metric
from sacrebleu.significance import PairedTest
from sacrebleu.tokenizers.tokenizer_spm import SPM_MODELS

from judgekit.data.lines import read_lines
from judgekit.errors import InputError, JudgekitError, JudgekitWarning
from judgekit.metrics.spm import CUSTOM_SPM_PREFIX, SPBLEU_TOKENIZER, is_spm, spm_tokenizer
from judgekit.metrics.tokenizers import tokenizer_for, warn_if_unsplit

METRICS = ("spbleu", "bleu", "chrf")
"""Metric names accepted by :func:`make_metric` (case-insensitive)."""

Refs = Sequence[Sequence[str]]


@dataclass(frozen=True)
class CorpusScore:
    """One corpus-level score.

    Attributes:
        metric: ``"BLEU"``, ``"spBLEU"`` or ``"chrF"``.
        score: in [0, 100].
        signature: sacrebleu's signature, e.g. ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|...``.
        detail: sacrebleu's one-line report (n-gram precisions, brevity penalty for BLEU).
    """

    metric: str
    score: float
    signature: str
    detail: str


@dataclass(frozen=True)
class SegmentScores:
    """Sentence-level scores, one per hypothesis line, each in [0, 100]."""

    metric: str
    scores: tuple[float, ...]
    signature: str


@dataclass(frozen=True)
class PairedResult:
    """A paired significance test of one system against a baseline on one metric.

    Scores are in [0, 100]. ``p_value`` is sacrebleu's (two-sided; (c + 1) / (n + 1)).
    ``*_mean`` and ``*_ci`` are the bootstrap mean and the half-width of the 95% interval
    (score ranges are ``mean +- ci``). ``signature`` adds the test, its sample count and seed.
    """

    metric: str
    test: str
    baseline_score: float
    baseline_mean: float | None
    baseline_ci: float | None
    system_score: float
    system_mean: float | None
    system_ci: float | None
    p_value: float
    signature: str


def make_metric(
    name: str,
    *,
    tokenize: str | None = None,
    spm_model: str | Path | None = None,
    sentence_level: bool = False,
    lowercase: bool = False,
) -> tuple[str, Metric]:
    """Build a sacrebleu metric by judgekit name.

    Args:
        name: ``spbleu``, ``bleu`` or ``chrf`` (case-insensitive).
        tokenize: BLEU tokenizer; default ``flores200`` for spbleu, ``13a`` for bleu. Any sacrebleu
            tokenizer, or ``spm:PATH`` for a custom SentencePiece model (signature
            ``tok:spm-<sha256 prefix>``). Ignored for chrF, which does not tokenize.
        spm_model: model file for an SPM tokenizer (see
            :func:`judgekit.metrics.spm.resolve_spm_model`).
        sentence_level: BLEU with ``effective_order=True``, as sacrebleu's sentence BLEU and
            the WMT23 segment scores use.
        lowercase: case-insensitive scores (``case:lc`` in the signature).

    Returns:
        ``(display name, metric)``: the display name is ``spBLEU`` for BLEU over an SPM
        tokenizer, ``BLEU`` for other BLEU tokenizers, ``chrF`` for chrF.

    Raises:
        JudgekitError: unknown metric or tokenizer, or a missing SPM model or MeCab install.
    """
    key = name.strip().lower()
    if key == "chrf":
        return "chrF", CHRF(word_order=0, lowercase=lowercase)
    if key not in ("spbleu", "bleu"):
        raise JudgekitError(f"unknown metric '{name}'; choose from {', '.join(METRICS)}")
    tok = tokenize or (SPBLEU_TOKENIZER if key == "spbleu" else "13a")
    known = [t for t in BLEU.TOKENIZERS if t not in SPM_MODELS]
    if not is_spm(tok) and tok not in known:
        raise JudgekitError(
            f"unknown tokenizer '{tok}'; choose from {', '.join(known + list(SPM_MODELS))} "
            f"or {CUSTOM_SPM_PREFIX}PATH"
        )
    if not is_spm(tok):
        try:
            metric = BLEU(tokenize=tok, lowercase=lowercase, effective_order=sentence_level)
        except (ImportError, RuntimeError) as exc:
            raise JudgekitError(f"tokenizer '{tok}' is not usable here: {exc}") from exc
        return "BLEU", metric
    tokenizer = spm_tokenizer(tok, spm_model)
    metric = BLEU(tokenize="none", lowercase=lowercase, effective_order=sentence_level)
    # sacrebleu reads both attributes when scoring and when building the signature.
    metric.tokenizer = tokenizer
    metric.tokenizer_signature = tokenizer.signature()
    return "spBLEU", metric


def check_streams(hyps: Sequence[str], refs: Refs) -> None:
    """Check the stream layout: ``refs`` is a non-empty list of streams as long as ``hyps``.

    Raises:
        JudgekitError: naming the argument and the lengths that differ.
    """
    if isinstance(hyps, str) or not all(isinstance(h, str) for h in hyps):
        raise JudgekitError("hyps should be a sequence of strings")
    if isinstance(refs, str) or not refs or any(isinstance(r, str) for r in refs):
        raise JudgekitError(
            "refs should be a non-empty list of reference streams (a list of lists of strings); "
            "wrap a single reference stream as [refs]"
        )
    for k, stream in enumerate(refs, 1):
        if len(stream) != len(hyps):
            raise JudgekitError(
                f"reference stream {k} has {len(stream)} segments but hyps has {len(hyps)}"
            )


def in_one_form(hyps: Sequence[str], refs: Refs) -> tuple[list[str], list[list[str]]]:
    """The hypotheses and reference streams with every segment in Unicode NFC.

    Scores compare strings, so ``é`` written as ``e`` + U+0301 (NFD) never matches the single
    character ``é`` (NFC): a hypothesis file and a reference file that mix the two forms from
    line to line scored chrF 28.24 where the texts are equal (100). Segments already in NFC are
    left as they are (text all in NFC is scored exactly as sacrebleu scores it); where any
    segment was not, a :class:`~judgekit.errors.JudgekitWarning` says how many on each side
    were normalised (docs/mt-scoring.md, "Text normalisation").
    """
    counts = []
    out = []
    for stream in [hyps, *refs]:
        changed = [not unicodedata.is_normalized("NFC", t) for t in stream]
        counts.append(sum(changed))
        out.append(
            [
                unicodedata.normalize("NFC", t) if c else t
                for t, c in zip(stream, changed, strict=True)
            ]
        )
    if any(counts):
        sides = [f"{counts[0]} of {len(hyps)} hypotheses"] + [
            f"{n} of {len(r)} segments of reference stream {k}"
            for k, (n, r) in enumerate(zip(counts[1:], refs, strict=True), 1) if n
        ]  # fmt: skip
        warnings.warn(
            f"{', '.join(sides)} were not in Unicode NFC: every segment is scored in NFC, so "
            "that a character written in two forms matches",
            JudgekitWarning,
            stacklevel=3,
        )
    return out[0], out[1:]


def bleu_tokenizer(
    name: str, tokenize: str | None, target_lang: str | None, refs: Refs
) -> str | None:
    """The tokenizer metric ``name`` gets: ``tokenize``, else (BLEU only) the one of
    ``target_lang``; warns when BLEU would split CJK/Thai-type references with ``13a``.

    Raises:
        InputError: ``target_lang`` is not a language (see :func:`tokenizer_for`).
    """
    key = name.strip().lower()
    if key != "bleu":
        return tokenize
    tok = tokenize or (tokenizer_for(target_lang) if target_lang else None)
    warn_if_unsplit(tok or "13a", (line for stream in refs[:1] for line in stream))
    return tok


def corpus_score(
    name: str,
    hyps: Sequence[str],
    refs: Refs,
    *,
    tokenize: str | None = None,
    spm_model: str | Path | None = None,
    lowercase: bool = False,
    target_lang: str | None = None,
) -> CorpusScore:
    """Corpus-level BLEU, spBLEU or chrF of ``hyps`` against the reference streams ``refs``.

    With several references, BLEU counts n-gram matches against all of them; chrF keeps the
    best-scoring reference per segment, breaking ties by stream order (so the order can change
    the last decimals; WMT22's ``chrf-all`` used [refB, refA]). ``target_lang`` (FLORES code,
    locale or ISO 639 code) picks BLEU's tokenizer when ``tokenize`` is not given (module doc).

    Raises:
        JudgekitError: see :func:`make_metric` and :func:`check_streams`.
        InputError: ``target_lang`` is not a language.
    """
    check_streams(hyps, refs)
    hyps, refs = in_one_form(hyps, refs)
    empty = sum(not h.strip() for h in hyps)
    if empty:
        what = (
            "every hypothesis is empty"
            if empty == len(hyps)
            else f"{empty} of {len(hyps)} hypotheses are empty"
        )
        warnings.warn(f"{what}: an empty segment scores 0 (nothing was translated there)",
                      JudgekitWarning, stacklevel=2)  # fmt: skip
    tokenize = bleu_tokenizer(name, tokenize, target_lang, refs)
    label, metric = make_metric(name, tokenize=tokenize, spm_model=spm_model, lowercase=lowercase)
    result = metric.corpus_score(list(hyps), [list(r) for r in refs])
    return CorpusScore(label, result.score, metric.get_signature().format(), str(result))


def segment_scores(
    name: str,
    hyps: Sequence[str],
    refs: Refs,
    *,
    tokenize: str | None = None,
    spm_model: str | Path | None = None,
    lowercase: bool = False,
    target_lang: str | None = None,
) -> SegmentScores:
    """Sentence-level scores via sacrebleu's ``sentence_score``, one per hypothesis.

    BLEU uses ``effective_order=True`` (``eff:yes``), which reproduces the WMT23 segment scores.
    ``target_lang``: as in :func:`corpus_score`.

    Raises:
        JudgekitError: see :func:`make_metric` and :func:`check_streams`.
    """
    check_streams(hyps, refs)
    hyps, refs = in_one_form(hyps, refs)
    tokenize = bleu_tokenizer(name, tokenize, target_lang, refs)
    label, metric = make_metric(
        name, tokenize=tokenize, spm_model=spm_model, sentence_level=True, lowercase=lowercase
    )
    scores = tuple(
        metric.sentence_score(h, [stream[i] for stream in refs]).score for i, h in enumerate(hyps)
    )
    signature = metric.get_signature()
    signature.update("nrefs", len(refs))
    return SegmentScores(label, scores, signature.format())


def paired_test(
    name: str,
    hyps: Sequence[str],
    baseline: Sequence[str],
    refs: Refs,
    *,
    test: str = "bs",
    n_samples: int = 0,
    tokenize: str | None = None,
    spm_model: str | Path | None = None,
    target_lang: str | None = None,
) -> PairedResult:
    """Paired significance test of ``hyps`` against ``baseline`` on one corpus metric.

    Args:
        test: ``bs`` (paired bootstrap resampling, 1000 resamples by default, Koehn 2004) or
            ``ar`` (approximate randomisation, 10000 trials by default, with a 1000-resample
            bootstrap for the confidence intervals).
        n_samples: resamples or trials; 0 takes sacrebleu's default.
        target_lang: picks BLEU's tokenizer when ``tokenize`` is not given (see
            :func:`corpus_score`).

    The seed is sacrebleu's (``SACREBLEU_SEED``, default 12345) and is in the signature, so the
    p-values equal those of ``sacrebleu REF -i BASELINE HYP --paired-bs`` (or ``--paired-ar``).

    Raises:
        JudgekitError: unknown test, or ``baseline`` and ``hyps`` of different lengths.
    """
    if test not in ("bs", "ar"):
        raise JudgekitError(f"unknown paired test '{test}'; choose 'bs' or 'ar'")
    check_streams(hyps, refs)
    if len(baseline) != len(hyps):
        raise JudgekitError(f"baseline has {len(baseline)} segments but hyps has {len(hyps)}")
    tokenize = bleu_tokenizer(name, tokenize, target_lang, refs)
    label, metric = make_metric(name, tokenize=tokenize, spm_model=spm_model)
    paired = PairedTest(
        [("baseline", list(baseline)), ("system", list(hyps))],
        {label: metric},
        [list(r) for r in refs],
        test_type=test,
        n_samples=n_samples,
        n_ar_confidence=0 if test == "ar" else -1,
        n_jobs=1,
    )
    signatures, results = paired()
    key = next(k for k in results if k != "System")
    base, system = results[key]
    return PairedResult(
        metric=label,
        test=test,
        baseline_score=base.score,
        baseline_mean=base.mean,
        baseline_ci=base.ci,
        system_score=system.score,
        system_mean=system.mean,
        system_ci=system.ci,
        p_value=system.p_value,
        signature=signatures[key].format(),
    )


def read_hyp_refs(
    hyp_path: str | Path, ref_paths: Sequence[str | Path]
) -> tuple[list[str], list[list[str]]]:
    """Read a hypothesis file and one or more reference files into sacrebleu's stream layout.

    Raises:
        InputError: a file is missing or unreadable, or a reference file's line count differs
            from the hypothesis file's (the message names both files and counts).
    """
    if not ref_paths:
        raise InputError(None, "at least one reference file is needed", field="--ref")
    hyps = read_lines(hyp_path)
    refs = []
    for ref_path in ref_paths:
        stream = read_lines(ref_path)
        if len(stream) != len(hyps):
            raise InputError(
                ref_path,
                f"has {len(stream)} lines but the hypothesis file {hyp_path} has {len(hyps)}",
            )
        refs.append(stream)
    return hyps, refs
