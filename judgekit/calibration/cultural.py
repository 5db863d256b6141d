"""A CS/CA audit against human votes: the validation table of paper 001 (annotation pipeline).

Per item subset (all, calibration, heldout) the table has, as rows ``(subset, section, metric,
n, value, ci_low, ci_high)``:

* human majority: items, CS/CA ties and required-knowledge ties among the votes (reported,
  never broken), the published label counts;
* binary CS/CA accuracy, macro-F1, Cohen's kappa, CA recall and the direction of errors
  (CA->CS vs CS->CA) against the published label (Global-MMLU: CS when at least half of the
  votes are not ``none``), and against the strict majority with ties excluded or as errors;
* 4-way required-knowledge accuracy and macro-F1 on items with a unique majority, and the
  variant that counts ties as errors (paper 001: 83.9% on 477 native items, 80.0% on 500);
* time-sensitive accuracy on items with a unique majority;
* human agreement on the CS/CA votes: unanimous share, Fleiss' kappa, Gwet's AC1 with CIs, and
  prevalence (the CS share of all votes); Fleiss' kappa and AC1 on the 4-way votes;
* the human ceiling: each vote against the majority of the item's other votes, and the judge
  against the same references.

Every statistic comes from :mod:`judgekit.calibration.judge` and :mod:`judgekit.metrics.agreement`.
Judge ties (a tied jury) follow ``tie_policy``: ``exclude`` drops them (counted), ``error``
counts them wrong, ``own_class`` lets them match a human tie.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit.calibration.judge import JudgeReport, human_ceiling, judge_vs_humans
from judgekit.errors import InputError, JudgekitError
from judgekit.labels.human_votes import HumanVotes
from judgekit.labels.majority import TIE, labels_as_text
from judgekit.labels.overlap import LabelSetError
from judgekit.labels.table import LabelTable
from judgekit.metrics.agreement import (
    AgreementResult,
    fleiss_kappa,
    gwet_ac1,
    prevalence,
    unanimous_share,
)
from judgekit.metrics.classification import Estimate
from judgekit.metrics.label_codes import encode

JUDGE_TIE = "<judge tie>"
CS_CA = ("CS", "CA")

COLUMNS = ["subset", "section", "metric", "n", "value", "ci_low", "ci_high", "is_count"]


def judge_series(annotations: pd.DataFrame, column: str, tie_policy: str) -> pd.Series:
    """item key -> the judge's label in ``column`` (unjudged items left out, ties per policy),
    in the label vocabulary's text form."""
    labels = labels_as_text(annotations.set_index("key")[column])
    if tie_policy == "exclude":
        return labels[labels != TIE]
    if tie_policy == "error":
        return labels.replace(TIE, JUDGE_TIE)
    return labels


def _table(votes: LabelTable, keys: list[str]) -> LabelTable:
    frame = votes.frame.loc[[k for k in keys if k in votes.frame.index]]
    return LabelTable(frame.dropna(axis=1, how="all"))


class _Rows:
    """Accumulates the long validation rows of one subset."""

    def __init__(self, subset: str) -> None:
        self.subset = subset
        self.rows: list[dict[str, Any]] = []

    def add(self, section: str, metric: str, n: int, value: Any, ci: Any = None) -> None:
        """One row; an int ``value`` is a count (shown without decimals)."""
        low, high = (ci[0], ci[1]) if ci else (None, None)
        self.rows.append(
            {"subset": self.subset, "section": section, "metric": metric, "n": n,
             "value": value, "ci_low": low, "ci_high": high,
             "is_count": isinstance(value, int | np.integer)}
        )  # fmt: skip

    def estimate(self, section: str, metric: str, n: int, est: Estimate | AgreementResult) -> None:
        self.add(section, metric, n, est.value, est.ci)

    def report(self, section: str, rep: JudgeReport, *, recall: bool = False) -> None:
        for name in ("accuracy", "macro_f1", "kappa"):
            self.estimate(section, name, rep.n_items, getattr(rep, name))
        if recall:
            for row in rep.per_class.to_dict(orient="records"):
                ci = (
                    (row["recall_low"], row["recall_high"])
                    if row["recall_low"] is not None
                    else None
                )
                self.add(section, f"recall {row['label']}", row["support"], row["recall"], ci)
            counts = {f"{e['human']}->{e['judge']}": e["count"] for e in rep.errors}
            for direction in ("CA->CS", "CS->CA"):
                self.add(section, f"errors {direction}", rep.n_items, counts.get(direction, 0))


def _score(
    judge: pd.Series, humans: LabelTable, tie_policy: str, n_resamples: int, seed: int,
    declared: Any = None, what: str = "",
) -> JudgeReport | None:  # fmt: skip
    """The judge against ``humans`` on their shared items; None without one, or when every
    shared item is a human tie. Raises LabelSetError: no shared label (outside ``declared``)."""
    shared = judge[judge.index.isin(humans.frame.index.astype(str))]
    if shared.empty:
        return None
    try:
        return judge_vs_humans(
            shared, humans, tie_policy=tie_policy, ci=n_resamples > 0,  # type: ignore[arg-type]
            n_resamples=max(n_resamples, 1), seed=seed, declared=declared,
            judge_name=f"the judge's {what or 'labels'}",
        )  # fmt: skip
    except LabelSetError:
        raise
    except JudgekitError:  # no shared item, or every shared item is a human tie ("exclude")
        return None


def _agreement(
    out: _Rows, cs_votes: LabelTable, knowledge: LabelTable | None, n_resamples: int, seed: int
) -> None:
    """Human agreement rows: CS/CA votes with CIs and prevalence; 4-way votes, point values."""
    ci = dict(ci=n_resamples > 0, n_resamples=max(n_resamples, 1), seed=seed)
    section, n = "human agreement, CS/CA votes", cs_votes.n_items
    # encoded once; a language whose voters all said CA still has CS
    votes, _ = encode(cs_votes, ("CA", "CS"))
    out.estimate(section, "unanimous share", n, unanimous_share(votes, **ci))
    out.estimate(section, "Fleiss' kappa", n, fleiss_kappa(votes, **ci))
    out.estimate(section, "Gwet's AC1", n, gwet_ac1(votes, **ci))
    prev = prevalence(votes)
    share = prev.counts.get("CS", 0) / prev.n_ratings if prev.n_ratings else math.nan
    out.add(section, "prevalence CS (share of votes)", prev.n_ratings, share)
    if knowledge is not None:
        section = "human agreement, required-knowledge votes"
        coded, _ = encode(knowledge)
        out.estimate(section, "Fleiss' kappa", n, fleiss_kappa(coded))
        out.estimate(section, "Gwet's AC1", n, gwet_ac1(coded))


def validate_subset(
    subset: str,
    keys: list[str],
    annotations: pd.DataFrame,
    humans: HumanVotes,
    *,
    tie_policy: str = "exclude",
    n_resamples: int = 1000,
    seed: int = 0,
    vocabulary: Mapping[str, Sequence[str]] | None = None,
) -> list[dict[str, Any]]:
    """The validation rows of one item subset (``keys``: item keys in it); ``vocabulary``:
    question -> the rubric's values (default: the shipped rubric's, ``Rubric.vocabulary()``),
    for the label check."""
    from judgekit.labels.majority import majority_vote

    out = _Rows(subset)
    ann = annotations[annotations["key"].isin(keys)]
    keys = [k for k in keys if k in set(humans.items)]
    if not keys:
        return []
    cs_votes = _table(humans.cs, keys)
    judged = ann[ann["status"] != "unjudged"]
    out.add("items", "with human votes", len(keys), len(keys))
    out.add("items", "judged", len(keys), int(judged["key"].isin(keys).sum()))
    out.add("items", "judge ties (jury)", len(keys), int((ann["status"] == "tie").sum()))
    majority = majority_vote(cs_votes)
    out.add("human majority", "CS/CA ties", len(keys), int((majority == TIE).sum()))
    knowledge = _table(humans.knowledge, keys) if humans.knowledge is not None else None
    if knowledge is not None:
        k_ties = int((majority_vote(knowledge) == TIE).sum())
        out.add("human majority", "required-knowledge ties", len(keys), k_ties)
    boots = dict(n_resamples=n_resamples, seed=seed)
    if vocabulary is None:
        from judgekit.pipelines.cultural_schemas import load_rubric

        vocabulary = load_rubric().vocabulary()
    voc = vocabulary
    cs = judge_series(ann, "cs_label", tie_policy)
    if humans.published is not None:
        _vs_published(out, humans.published[humans.published.index.isin(keys)], cs, ann,
                      tie_policy, boots)  # fmt: skip
    policies = (("exclude", "ties excluded"), ("error", "ties as errors"))
    for policy, name in policies:
        rep = _score(cs, cs_votes, policy, **boots, declared=CS_CA, what="CS/CA")
        if rep is not None:
            out.report(f"CS/CA vs majority, {name}", rep, recall=policy == "exclude")
    if knowledge is not None:
        rk = judge_series(ann, "required_knowledge", tie_policy)
        for policy, name in policies:
            rep = _score(rk, knowledge, policy, **boots, declared=voc.get("required_knowledge"),
                         what="required knowledge")  # fmt: skip
            if rep is not None:
                out.report(f"required knowledge (4-way), {name}", rep)
    if humans.time_sensitive is not None:
        rep = _score(judge_series(ann, "time_sensitive", tie_policy),
                     _table(humans.time_sensitive, keys), "exclude", **boots,
                     declared=voc.get("time_sensitive"), what="time-sensitive answers")  # fmt: skip
        if rep is not None:
            out.estimate("time-sensitive, ties excluded", "accuracy", rep.n_items, rep.accuracy)
    if len(keys) >= 2:  # chance-corrected coefficients need two items (irrCAC divides by n-1)
        _agreement(out, cs_votes, knowledge, n_resamples, seed)
    shared = cs[cs.index.isin(keys)]
    if not shared.empty and cs_votes.n_raters > 1:
        _ceiling(out, cs_votes, shared, n_resamples, seed)
    return out.rows


def _vs_published(
    out: _Rows,
    published: pd.Series,
    cs: pd.Series,
    ann: pd.DataFrame,
    tie_policy: str,
    boots: dict[str, int],
) -> None:
    """Rows of the judge's CS/CA (jury, then each judge of a jury) against the published
    label of the subset's items."""
    for label in ("CS", "CA"):
        out.add("human majority", f"published {label}", len(published),
                int((published == label).sum()))  # fmt: skip
    gold = LabelTable(published.to_frame("published"))
    rep = _score(cs, gold, tie_policy, **boots, declared=CS_CA, what="CS/CA")
    if rep is not None:
        out.report("CS/CA vs published label", rep, recall=True)
    per_judge = pd.DataFrame(list(ann["by_judge"]), index=ann["key"]) if len(ann) else None
    if per_judge is None or per_judge.shape[1] <= 1:
        return
    for judge in per_judge.columns:
        labels = labels_as_text(per_judge[judge])
        rep = _score(labels[labels != TIE], gold, "exclude", 0, boots["seed"], CS_CA, "CS/CA")
        if rep is not None:
            out.estimate("CS/CA vs published label, per judge", judge, rep.n_items, rep.accuracy)


def _ceiling(
    out: _Rows, cs_votes: LabelTable, shared: pd.Series, n_resamples: int, seed: int
) -> None:
    """Rows of the human ceiling: each vote against the majority of the other votes, and the
    judge against the same references (ties excluded)."""
    ceiling = human_ceiling(
        cs_votes, shared, tie_policy="exclude", ci=n_resamples > 0,
        n_resamples=max(n_resamples, 1), seed=seed, declared=CS_CA,
    )  # fmt: skip
    section = "ceiling: vote vs majority of the other votes, ties excluded"
    out.estimate(section, "humans accuracy", ceiling.n_rows, ceiling.humans["accuracy"])
    if ceiling.judge is not None:
        out.estimate(section, "judge accuracy", ceiling.n_rows, ceiling.judge["accuracy"])


def validate(
    annotations: pd.DataFrame,
    humans: HumanVotes,
    splits: dict[str, str],
    *,
    tie_policy: str = "exclude",
    n_resamples: int = 1000,
    seed: int = 0,
    vocabulary: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """The validation table (long rows, :data:`COLUMNS`) over all annotated items with human
    votes, each split, and each benchmark when several carry votes; ``splits`` maps item id ->
    calibration/heldout; ``vocabulary`` the rubric's values (``Rubric.vocabulary()``).

    Every comparison checks the judge's labels against the humans' first
    (:mod:`judgekit.labels.overlap`, the rubric's values declared).

    Raises:
        LabelSetError: the judge's and the humans' labels of a question share none, and some
            are outside the rubric's values (e.g. human votes ``Yes``/``No`` read as other
            words than the rubric's).
    """
    rows: list[dict[str, Any]] = []
    subsets: dict[str, list[str]] = {"all": list(annotations["key"])}
    for split in ("calibration", "heldout"):
        subsets[split] = list(annotations.loc[annotations["id"].map(splits) == split, "key"])
    voted = annotations[annotations["key"].isin(set(humans.items))]
    if voted["benchmark"].nunique() > 1:  # human agreement per item set (per language)
        for bench, part in voted.groupby("benchmark"):
            subsets[str(bench)] = list(part["key"])
    for subset, keys in subsets.items():
        if not keys:
            continue
        with warnings.catch_warnings():  # sklearn on a subset with one class: reported as NaN
            warnings.simplefilter("ignore")
            rows += validate_subset(
                subset, keys, annotations, humans,
                tie_policy=tie_policy, n_resamples=n_resamples, seed=seed, vocabulary=vocabulary,
            )  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def read_annotations(path: Path) -> pd.DataFrame:
    """An audit's ``annotations.jsonl`` as a DataFrame, one row per item (the one JSONL
    reader, :func:`judgekit.data.jsonl_objects`: lines split on ``\\n`` only), ids as text.

    Raises:
        InputError: a line that is not a JSON object (file, line).
    """
    from judgekit.data import jsonl_objects
    from judgekit.data.vocabulary import canonical_id

    frame = pd.DataFrame([row for _, row in jsonl_objects(path)])
    for column in ("id", "key"):
        if column in frame.columns:
            frame[column] = [canonical_id(v) for v in frame[column]]
    return frame


def _cell(row: pd.Series) -> str:
    value = row["value"]
    if value is None or pd.isna(value):
        return "-"
    if row["is_count"]:
        return f"{int(value)}"
    text = f"{value:.3f}"
    if not pd.isna(row["ci_low"]):
        text += f" [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
    return f"{text} (n={int(row['n'])})"


def markdown_table(table: pd.DataFrame) -> str:
    """The validation rows as one Markdown table: a row per (section, metric), a column per
    subset, cells ``value [ci_low, ci_high] (n=...)``."""
    if table.empty:
        return ""
    subsets = list(dict.fromkeys(table["subset"]))
    lines = ["| section | metric | " + " | ".join(subsets) + " |"]
    lines.append("|---|---|" + "---|" * len(subsets))
    order = list(dict.fromkeys(zip(table["section"], table["metric"], strict=True)))
    cells = {(r["subset"], r["section"], r["metric"]): _cell(r) for _, r in table.iterrows()}
    for section, metric in order:
        values = [cells.get((s, section, metric), "") for s in subsets]
        lines.append(f"| {section} | {metric} | " + " | ".join(values) + " |")
    return "\n".join(lines) + "\n"


def validate_run(
    run_dir: str | Path,
    *,
    human: str | Path | None = None,
    tie_policy: str | None = None,
    n_resamples: int | None = None,
) -> pd.DataFrame:
    """The validation table of a finished audit run directory (its ``summary.json``,
    ``annotations.jsonl`` and ``splits.csv``), against ``human`` or the human votes of the item
    files it names. ``tie_policy`` and ``n_resamples`` default to the run's.

    Raises:
        InputError: not an audit run directory, an item file gone, or no human votes.
    """
    from judgekit.data import stored_path
    from judgekit.data.items import load_items
    from judgekit.labels.human_votes import load_human_votes
    from judgekit.pipelines.cultural_schemas import load_rubric

    run_dir = Path(run_dir)
    files = {name: run_dir / name for name in ("summary.json", "annotations.jsonl", "splits.csv")}
    for name, path in files.items():
        if not path.is_file():
            raise InputError(run_dir, f"not a finished audit run: no {name}")
    sig = json.loads(files["summary.json"].read_text(encoding="utf-8")).get("signature", {})
    if sig.get("pipeline") != "cultural":
        raise InputError(files["summary.json"], "not a cultural audit run", field="pipeline")
    opts = sig.get("options", {})
    language = opts.get("language") or "und"
    items = [
        it
        for f in sig["items"]
        for it in load_items(
            stored_path(f["path"], files["summary.json"]),
            language=language,
            benchmark=f["benchmark"],
        ).items
    ]
    rubric = load_rubric(opts.get("rubric", "cultural_sensitivity"))
    cs_of = {v.id: v.cs for v in rubric.required_knowledge}
    stored = sig.get("human") if sig.get("human") != "item fields" else None
    source = human or (stored_path(stored, files["summary.json"], "human") if stored else None)
    humans = load_human_votes(items, source, cs_of)
    if humans is None:
        raise InputError(run_dir, "no human votes: the items carry none; pass --human")
    annotations = read_annotations(files["annotations.jsonl"])
    splits = pd.read_csv(files["splits.csv"], dtype=str).set_index("id")["split"].to_dict()
    return validate(
        annotations, humans, splits,
        tie_policy=tie_policy or opts.get("tie_policy", "exclude"),
        n_resamples=opts.get("n_resamples", 1000) if n_resamples is None else n_resamples,
        seed=int(sig.get("seed", 0)), vocabulary=rubric.vocabulary(),
    )  # fmt: skip
