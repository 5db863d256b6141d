"""Human votes carried by benchmark items: Global-MMLU's per-annotator labels as label tables.

Global-MMLU items carry per-annotator ``required_knowledge`` and ``time_sensitive`` lists, and
the published ``cs_label`` / ``cultural_sensitivity_label`` (Singh et al. 2024, Sec. 3);
:func:`human_votes` reads them from loaded items, :func:`load_human_votes` from the items or from
a separate item or label file. Bad input raises :class:`~judgekit.errors.InputError` naming the
file, line and field.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from judgekit.data.items import BenchmarkItem, load_items
from judgekit.data.tables import read_table
from judgekit.data.vocabulary import label_text, nfc
from judgekit.errors import InputError
from judgekit.labels.table import LabelTable

PUBLISHED_CS_FIELDS = ("cs_label", "cultural_sensitivity_label")


@dataclass(frozen=True)
class HumanVotes:
    """Human labels of a set of items, as label tables (items x annotator slots).

    Global-MMLU does not identify annotators across items: slot ``a1`` is the first vote of
    each item, not one person, so per-annotator statistics (the Alternative Annotator Test)
    do not apply; pooled ones (agreement, majority, leave-one-out ceiling) do.

    Attributes:
        knowledge: required-knowledge votes (``none``/``cultural``/``regional``/``dialect``),
            or None when the labels are CS/CA only.
        cs: CS/CA votes (from knowledge votes: CA for ``none``, else CS).
        time_sensitive: ``yes``/``no`` votes (None when the items carry none).
        published: the published CS/CA label per item (Global-MMLU: CS when at least half of
            the votes are not ``none``, ties included), or None.
    """

    knowledge: LabelTable | None
    cs: LabelTable
    time_sensitive: LabelTable | None
    published: pd.Series | None

    @property
    def items(self) -> list[str]:
        return [str(i) for i in self.cs.items]

    def reference_cs(self) -> dict[str, str]:
        """item -> the published CS/CA label where there is one, else the strict majority of
        the CS/CA votes (``<tie>`` on a tie)."""
        from judgekit.labels.majority import majority_vote

        out = majority_vote(self.cs).to_dict()
        if self.published is not None:
            out.update(self.published.to_dict())
        return out


def _vote_table(votes: dict[str, list[str]]) -> LabelTable:
    width = max((len(v) for v in votes.values()), default=0)
    frame = pd.DataFrame(
        [v + [None] * (width - len(v)) for v in votes.values()],
        index=pd.Index(list(votes), name="item"),
        columns=pd.Index([f"a{i + 1}" for i in range(width)], name="rater"),
        dtype=object,
    )
    return LabelTable(frame)


def human_votes(
    items: Iterable[BenchmarkItem], *, cs_of: dict[str, str] | None = None
) -> HumanVotes | None:
    """Global-MMLU-style human labels carried by the items, keyed by :attr:`BenchmarkItem.key`.

    Args:
        items: items whose ``extra`` may hold ``required_knowledge`` (a list of votes),
            ``time_sensitive`` (a list of Yes/No) and ``cs_label`` or
            ``cultural_sensitivity_label`` (CS/CA).
        cs_of: required-knowledge value -> CS/CA (default: ``none`` -> CA, anything else CS).

    Returns None when no item carries required-knowledge votes.

    Raises:
        InputError: a vote list that is not a list of text.
    """
    knowledge: dict[str, list[str]] = {}
    time: dict[str, list[str]] = {}
    published: dict[str, str] = {}
    for item in items:
        votes = item.extra.get("required_knowledge")
        if votes is None or votes == []:
            continue
        if not isinstance(votes, list) or not all(isinstance(v, str) for v in votes):
            raise InputError(
                item.benchmark,
                "expected a list of votes",
                line=item.line,
                field="required_knowledge",
            )
        knowledge[item.key] = [nfc(v).lower() for v in votes]
        ts = item.extra.get("time_sensitive")
        if isinstance(ts, list) and ts:
            time[item.key] = [str(label_text(v)).lower() for v in ts]
        label = next((item.extra[f] for f in PUBLISHED_CS_FIELDS if item.extra.get(f)), None)
        if label_text(label) in ("CS", "CA"):
            published[item.key] = label_text(label)
    if not knowledge:
        return None
    mapping = cs_of or {}
    cs = {
        k: [mapping.get(v, "CA" if v == "none" else "CS") for v in vs]
        for k, vs in knowledge.items()
    }
    return HumanVotes(
        knowledge=_vote_table(knowledge),
        cs=_vote_table(cs),
        time_sensitive=_vote_table(time) if time else None,
        published=pd.Series(published, dtype=object) if published else None,
    )


def _fold_to_rubric(table: LabelTable, values: list[str], path: Path) -> pd.DataFrame:
    """The table's cells with labels that differ from the rubric's ``values`` in case alone
    spelt as the rubric does (``cs`` -> ``CS``), with a warning (:mod:`judgekit.labels.overlap`)."""
    import warnings

    from judgekit.errors import JudgekitWarning
    from judgekit.labels.overlap import case_folds, fold

    folded = case_folds(values, table.values.ravel())
    if not folded:
        return table.frame
    pairs = "; ".join(f"{h!r} = {r!r}" for h, r in sorted(folded.items()))
    warnings.warn(f"{path}: labels that differ from the rubric's only in case are taken as "
                  f"the rubric's: {pairs}", JudgekitWarning, stacklevel=3)  # fmt: skip
    return table.frame.map(lambda v: fold(v, folded))


def load_human_votes(
    items: list[BenchmarkItem], path: str | Path | None, cs_of: dict[str, str]
) -> HumanVotes | None:
    """Human labels for ``items``: from ``path`` when given, else carried by the items.

    ``path`` is either an item file whose rows carry ``required_knowledge`` vote lists
    (matched to ``items`` by id), or a label file (``item,rater,label`` or wide, see
    :func:`judgekit.labels.table.load_labels`; item = the item id) whose labels are
    required-knowledge values (the keys of ``cs_of``) or CS/CA.

    Raises:
        InputError: unreadable file, labels of neither kind, or no item in common.
    """
    if path is None:
        return human_votes(items, cs_of=cs_of)
    from judgekit.labels.table import load_labels

    path = Path(path)
    columns = read_table(path, what="item files").columns
    by_id: dict[str, list[str]] = defaultdict(list)
    for it in items:
        by_id[it.id].append(it.key)
    if "required_knowledge" in columns:
        source = load_items(path, language="und")
        rows = [
            replace(it, benchmark=key.rsplit("|", 1)[0] if "|" in key else key)
            for it in source.items
            for key in by_id.get(it.id, [])
        ]
        votes = human_votes(rows, cs_of=cs_of)
    else:
        table = load_labels(path)
        frame = _fold_to_rubric(table, [*cs_of, "CS", "CA"], path)
        labels = {label_text(v) for v in frame.to_numpy().ravel() if v is not None}
        keys = [(k, i) for i in frame.index for k in by_id.get(i, [])]
        frame = frame.loc[[i for _, i in keys]]
        frame.index = pd.Index([k for k, _ in keys], name="item")
        if labels <= set(cs_of):
            knowledge = LabelTable(frame)
            cs = LabelTable(frame.apply(lambda col: col.map(lambda v: cs_of.get(v, v))))
            votes = HumanVotes(knowledge, cs, None, None)
        elif labels <= {"CS", "CA"}:
            votes = HumanVotes(None, LabelTable(frame), None, None)
        else:
            raise InputError(
                path, f"labels must be {sorted(cs_of)} or CS/CA, found {sorted(labels)[:6]}"
            )
    if votes is None or votes.cs.n_items == 0:
        raise InputError(path, "no item in common with the items being audited")
    return votes
