"""Locale-specific word recall of translations of localised sets (Cultivar, paper 000, Sec. 3.2).

FP = unique terms of the original reference that appear in the translation of the localised
source; FN = unique terms of the localised reference missing from it. judgekit's "terms": the
word types that differ between the two references of a segment (original-only types for FP,
localised-only types for FN), tokenised by sacrebleu
(:func:`judgekit.metrics.tokenizers.default_tokenizer`: ``13a`` words for space-delimited
scripts, ``zh`` = one token per Han character for Chinese, ``ja-mecab`` words for Japanese,
``char`` for Thai, Lao, Khmer and Myanmar), tokens without any letter or digit dropped. Rates are
pooled (micro) over segments, in [0, 1]: FP rate = sum FP / sum original-only terms, FN rate =
sum FN / sum localised-only terms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

import pandas as pd

from judgekit.data.testsets import Manifest
from judgekit.errors import InputError, JudgekitError
from judgekit.metrics.contrastive import Hyps, RefCache, check_lengths, set_labels
from judgekit.metrics.tokenizers import default_tokenizer, sacrebleu_tokenizer


def word_types(text: str, tokenize: str = "13a", *, lowercase: bool = False) -> set[str]:
    """The distinct tokens of ``text`` under sacrebleu tokenizer ``tokenize``, keeping only
    tokens with at least one letter or digit (``zh`` makes each Han character a token).

    Raises:
        JudgekitError: the tokenizer is unknown or unusable (e.g. MeCab missing for ja-mecab).
    """
    tokens = sacrebleu_tokenizer(tokenize)(text.lower() if lowercase else text).split()
    return {t for t in tokens if any(ch.isalnum() for ch in t)}


@dataclass(frozen=True)
class SegmentRecall:
    """One segment: the reference-difference terms and which were FP / FN (sorted tuples)."""

    index: int
    original_terms: tuple[str, ...]
    localised_terms: tuple[str, ...]
    fp_terms: tuple[str, ...]
    fn_terms: tuple[str, ...]


@dataclass(frozen=True)
class WordRecall:
    """Locale-specific word recall of one translation of a localised set (Cultivar Sec. 3.2).

    ``fp_rate = n_fp / n_original_terms`` and ``fn_rate = n_fn / n_localised_terms``, in [0, 1]
    (NaN when the references never differ). ``signature`` records tokenizer, case and pooling.
    """

    n_segments: int
    n_original_terms: int
    n_fp: int
    fp_rate: float
    n_localised_terms: int
    n_fn: int
    fn_rate: float
    signature: str
    segments: tuple[SegmentRecall, ...]

    def summary(self) -> dict:
        """Every field but the per-segment detail."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "segments"}


def locale_word_recall(
    hyps: Sequence[str],
    original_refs: Sequence[str],
    localised_refs: Sequence[str],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
) -> WordRecall:
    """FP and FN of the locale-specific terms (Cultivar Sec. 3.2, "Locale-specific word recall").

    Args:
        hyps: translations of the localised sources, aligned with both reference lists.
        original_refs: the original (unlocalised) references; localised_refs: the localised ones.
        tokenize: sacrebleu tokenizer (see :func:`default_tokenizer`); lowercase: fold case first.

    Raises:
        JudgekitError: the three lists differ in length, or an unusable tokenizer.
    """
    if not len(hyps) == len(original_refs) == len(localised_refs):
        raise JudgekitError(
            f"word recall needs aligned lists: {len(hyps)} translations, "
            f"{len(original_refs)} original and {len(localised_refs)} localised references"
        )
    segments = []
    for i, (hyp, orig, loc) in enumerate(zip(hyps, original_refs, localised_refs, strict=True)):
        o, lo = (
            word_types(orig, tokenize, lowercase=lowercase),
            word_types(loc, tokenize, lowercase=lowercase),
        )
        h = word_types(hyp, tokenize, lowercase=lowercase)
        o_only, lo_only = o - lo, lo - o
        segments.append(
            SegmentRecall(
                i,
                tuple(sorted(o_only)),
                tuple(sorted(lo_only)),
                tuple(sorted(o_only & h)),
                tuple(sorted(lo_only - h)),
            )
        )
    n_o = sum(len(s.original_terms) for s in segments)
    n_lo = sum(len(s.localised_terms) for s in segments)
    n_fp = sum(len(s.fp_terms) for s in segments)
    n_fn = sum(len(s.fn_terms) for s in segments)
    case = "lc" if lowercase else "mixed"
    return WordRecall(
        n_segments=len(segments),
        n_original_terms=n_o,
        n_fp=n_fp,
        fp_rate=n_fp / n_o if n_o else math.nan,
        n_localised_terms=n_lo,
        n_fn=n_fn,
        fn_rate=n_fn / n_lo if n_lo else math.nan,
        signature=f"terms:ref-diff|tok:{tokenize}|case:{case}|pool:micro",
        segments=tuple(segments),
    )


def recall_frames(
    hyps: Hyps, manifest: Manifest, *, tokenize: str | None = None, lowercase: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`locale_word_recall` for every (model, localised set) that the model translated.

    Returns:
        ``(summary, segments)``: one row per (model, localised set) with the :class:`WordRecall`
        summary fields, and one row per segment with its terms joined by spaces.

    Raises:
        InputError: the two references of a pair differ in line count (naming both files).
        JudgekitError: see :func:`locale_word_recall`.
    """
    refs = RefCache(manifest)
    pairs = manifest.pairs()
    labels = set_labels([loc for loc, _ in pairs])
    summary, detail = [], []
    for model in sorted({m for m, _ in hyps}):
        for loc, orig in pairs:
            if (model, loc.id) not in hyps:
                continue
            loc_refs, orig_refs = refs(loc.id), refs(orig.id)
            if len(loc_refs) != len(orig_refs):
                raise InputError(
                    loc.reference or loc.data,
                    f"has {len(loc_refs)} lines but the original's references "
                    f"{orig.reference or orig.data} have {len(orig_refs)}; word recall needs "
                    "aligned segments",
                )
            check_lengths(hyps[model, loc.id], loc_refs, model, loc)
            tok = tokenize or default_tokenizer(loc.tgt_lang)
            result = locale_word_recall(
                hyps[model, loc.id], orig_refs, loc_refs, tokenize=tok, lowercase=lowercase
            )
            key = {"model": model, "testset": loc.id, "locale": loc.locale.id}
            summary.append(key | {"label": labels[loc.id], "original": orig.id} | result.summary())
            for s in result.segments:
                terms = {k: " ".join(v) for k, v in asdict(s).items() if k != "index"}
                detail.append(key | {"line": s.index + 1} | terms)
    return pd.DataFrame(summary), pd.DataFrame(detail)
