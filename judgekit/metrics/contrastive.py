"""Contrastive evaluation of localised vs original test sets (Cultivar, paper 000, Sec. 3.2 and 4).

* Delta (Sec. 3.2, "Delta BLEU and Delta chrF as measures of robustness"):
  ``Delta = score_localised - score_original`` per (model, locale), scores from
  :mod:`judgekit.metrics.mt` (spBLEU, BLEU, chrF; in [0, 100], so Delta in [-100, 100]). Negative
  Delta = the model degrades on the localised set.
* Mean pairwise Delta (Sec. 3.2): "we pair all locales with their language, forming pairs
  i = 1, 2, ..., n and compute a mean pairwise Delta_metric = 1/n sum_i (score_localised,i -
  score_original,i)" (Table 3, per model). "Likewise, the mean Delta_metric can be averaged across
  models but without requiring pairing" (Table 4, per locale). As the paper notes (Sec. 4.2), the
  mean pairwise Delta differs from (mean localised score) - (mean original score) when one
  language pairs with several locales; :func:`average_scores` gives both sides of that contrast.
* Figure 6 (drawn by :func:`judgekit.report.figures.delta_heatmap`): models x locales heatmap
  of Delta, models sorted by mean Delta across locales and
  locales by mean Delta across models, most negative at the bottom and right.
* Table 2: Spearman r_s and Kendall tau_b between the model rankings on the original and the
  localised set, per locale (:mod:`judgekit.metrics.ranking`).

Locale-specific word recall (Sec. 3.2) is in :mod:`judgekit.metrics.word_recall`; it shares this
module's reference reading and the tokenizer choice of :mod:`judgekit.metrics.tokenizers`
(:func:`default_tokenizer`, the one rule ``judgekit score`` uses too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from judgekit.data.testsets import Manifest, Segments, TestSet
from judgekit.errors import JudgekitError
from judgekit.metrics import mt
from judgekit.metrics.ranking import ranking_agreement
from judgekit.metrics.tokenizers import default_tokenizer

Hyps = Mapping[tuple[str, str], Sequence[str]]
"""Translations keyed by ``(model, test set id)``, one line per reference line."""


def set_labels(testsets: Sequence[TestSet]) -> dict[str, str]:
    """Column label per localised set: its locale id, plus the set id if the locale repeats."""
    counts = pd.Series([t.locale.id for t in testsets]).value_counts()
    return {
        t.id: t.locale.id if counts[t.locale.id] == 1 else f"{t.locale.id} ({t.id})"
        for t in testsets
    }


class RefCache:
    """Reference lines per test-set id, read once from the manifest (callable: ``cache(id)``)."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self._data: dict[str, Segments] = {}

    def __call__(self, testset_id: str) -> list[str]:
        if testset_id not in self._data:
            self._data[testset_id] = self.manifest.testsets[testset_id].read()
        return self._data[testset_id].references


def check_lengths(hyps: Sequence[str], refs: Sequence[str], model: str, testset: TestSet) -> None:
    """Raise :class:`JudgekitError` naming the model and test set when ``hyps`` and ``refs``
    differ in length."""
    if len(hyps) != len(refs):
        raise JudgekitError(
            f"model {model}: {len(hyps)} translations for test set {testset.id}, whose "
            f"references ({testset.reference or testset.data}) have {len(refs)} lines"
        )


DELTA_COLUMNS = (
    "model", "testset", "locale", "label", "original", "language", "metric",
    "score_original", "score_localised", "delta", "signature_original", "signature_localised",
)  # fmt: skip


def delta_frame(
    hyps: Hyps,
    manifest: Manifest,
    metrics: Sequence[str] = ("bleu", "chrf"),
    *,
    tokenize: str | None = None,
    spm_model: str | Path | None = None,
) -> pd.DataFrame:
    """Delta per (model, localised set, metric) for every manifest pair both of whose sets the
    model translated (Cultivar Sec. 3.2).

    Args:
        hyps: ``(model, test set id) -> translations``.
        metrics: names for :func:`judgekit.metrics.mt.make_metric` (``spbleu``, ``bleu``, ``chrf``).
        tokenize: BLEU tokenizer for every set; default :func:`default_tokenizer` of the target.

    Returns:
        One row per (model, localised set, metric): ``model, testset, locale, label, original,
        language, metric, score_original, score_localised, delta, signature_original,
        signature_localised``; ``language`` is the FLORES code the locale pairs with (the
        original's ``lang_Script``), ``label`` the heatmap column (the locale id). Scores in
        [0, 100], Delta in [-100, 100].

    Raises:
        JudgekitError: a translation count differs from its references, or a metric error.
        InputError: a reference file is unreadable.
    """
    refs = RefCache(manifest)
    pairs = manifest.pairs()
    labels = set_labels([loc for loc, _ in pairs])
    models = sorted({m for m, _ in hyps})
    cache: dict[tuple[str, str, str], mt.CorpusScore] = {}

    def score(model: str, testset: TestSet, metric: str) -> mt.CorpusScore:
        key = (model, testset.id, metric)
        if key not in cache:
            stream = refs(testset.id)
            check_lengths(hyps[model, testset.id], stream, model, testset)
            tok = tokenize or (default_tokenizer(testset.tgt_lang) if metric == "bleu" else None)
            cache[key] = mt.corpus_score(
                metric, hyps[model, testset.id], [stream], tokenize=tok, spm_model=spm_model
            )
        return cache[key]

    rows = []
    for model in models:
        for loc, orig in pairs:
            if (model, loc.id) not in hyps or (model, orig.id) not in hyps:
                continue
            for metric in metrics:
                o, lo = score(model, orig, metric), score(model, loc, metric)
                values = (model, loc.id, loc.locale.id, labels[loc.id], orig.id,
                          orig.locale.flores, lo.metric, o.score, lo.score, lo.score - o.score,
                          o.signature, lo.signature)  # fmt: skip
                rows.append(dict(zip(DELTA_COLUMNS, values, strict=True)))
    return pd.DataFrame(rows, columns=list(DELTA_COLUMNS))


def _need(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise JudgekitError(f"columns not found: {missing}; have {list(frame.columns)}")


def mean_pairwise_delta(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model and metric, the mean of Delta over its pairs i = (locale, its language)
    (Cultivar Sec. 3.2; Table 3's Delta columns). Columns ``model, metric, n_pairs, delta``."""
    _need(frame, ("model", "metric", "delta"))
    grouped = frame.groupby(["model", "metric"], sort=True)["delta"]
    return grouped.agg(n_pairs="count", delta="mean").reset_index()


def locale_mean_delta(frame: pd.DataFrame) -> pd.DataFrame:
    """Per localised set and metric, Delta averaged across models, no pairing needed
    (Cultivar Sec. 3.2; Table 4). Columns ``label, locale, metric, n_models, delta``."""
    _need(frame, ("label", "locale", "metric", "delta"))
    grouped = frame.groupby(["label", "locale", "metric"], sort=True)["delta"]
    return grouped.agg(n_models="count", delta="mean").reset_index()


def average_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model and metric: the original score averaged over distinct original sets ("FLORES
    scores averaged across languages") and the localised score averaged over locales (Table 3).
    Their difference is *not* the mean pairwise Delta when a language has several locales.
    Columns ``model, metric, original, localised``."""
    _need(frame, ("model", "metric", "original", "score_original", "score_localised"))
    orig = frame.drop_duplicates(["model", "metric", "original"])
    out = orig.groupby(["model", "metric"])["score_original"].mean().rename("original")
    loc = frame.groupby(["model", "metric"])["score_localised"].mean().rename("localised")
    return pd.concat([out, loc], axis=1).reset_index()


def delta_matrix(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Models (rows) x locales (columns) table of Delta for one metric display name (``BLEU``,
    ``spBLEU``, ``chrF``), sorted as Cultivar's Figure 6: rows by mean Delta across locales and
    columns by mean Delta across models, highest first (most negative bottom and right).

    Raises:
        JudgekitError: no row has this metric.
    """
    _need(frame, ("model", "label", "metric", "delta"))
    part = frame[frame["metric"] == metric]
    if part.empty:
        have = sorted(frame["metric"].unique())
        raise JudgekitError(f"no Delta rows for metric {metric!r}; have {have}")
    table = part.pivot(index="model", columns="label", values="delta")
    table = table.loc[table.mean(axis=1).sort_values(ascending=False, kind="mergesort").index]
    cols = table.mean(axis=0).sort_values(ascending=False, kind="mergesort").index
    table = table[cols]
    table.columns.name = None
    return table


def ranking_by_locale(
    frame: pd.DataFrame, metric: str, *, n_resamples: int = 0, seed: int = 0
) -> pd.DataFrame:
    """Spearman r_s and Kendall tau_b between model rankings on each original and localised set
    (Cultivar Table 2), for one metric display name. Locales with fewer than 3 models are left
    out. Columns ``label, locale, n_models, spearman, kendall_tau_b`` (in [-1, 1]) and, with
    ``n_resamples > 0``, their bootstrap CIs over models."""
    _need(frame, ("model", "label", "locale", "metric", "score_original", "score_localised"))
    columns = ["label", "locale", "n_models", "spearman", "kendall_tau_b"]
    columns += ["spearman_ci", "kendall_ci"]
    rows = []
    for (label, locale), part in frame[frame["metric"] == metric].groupby(["label", "locale"]):
        if part["model"].nunique() >= 3:
            x = part.set_index("model")
            r = ranking_agreement(
                x["score_original"], x["score_localised"], n_resamples=n_resamples, seed=seed
            )
            values = (r.n_models, r.spearman, r.kendall_tau_b, r.spearman_ci, r.kendall_ci)
            rows.append(dict(zip(columns, (label, locale, *values), strict=True)))
    return pd.DataFrame(rows, columns=columns)
