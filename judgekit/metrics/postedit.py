"""Post-edit statistics of LLM localisation against a human-edited version (Cultivar, paper 000,
Sec. 2.3 "Human annotation" and Table 1).

Each segment has one or more *sides* (Cultivar: the source sentence and its English target), and
per side three versions: the original (e.g. FLORES), the LLM-localised paraphrase, and the final
human-edited text. Versions are compared after collapsing runs of whitespace.

* Side status: ``kept`` (final == LLM: the editor accepted it), ``reverted`` (final == original
  != LLM: the editor restored the original), ``edited`` (anything else).
* Segment status, Table 1's columns: ``kept`` if every side was kept; ``reverted`` if not kept and
  every side equals its original; else ``edited``, with the sides the editor changed (Table 1's
  "Source Only", "Target Only", "Both").
* Edits: "we count a modified continuous string surrounded by original strings as an edit"
  (Sec. 2.3): the number of non-``equal`` opcodes of ``difflib.SequenceMatcher`` (autojunk off)
  on sacrebleu tokens (``13a`` by default; ``zh`` = one token per Han character). Per side:
  ``localisation_edits`` (original -> final; read here as Table 1's "Average Edits" when averaged
  over all segments: a locale with 7 revised segments of 200 still averages 4.24), its
  ``localisation_tokens`` (tokens removed + added, the "diff: N" of the annotation interface in
  Figure 1: 4 for "Dilokrit Pattavee" -> "Werner Mölders"), and ``editor_edits`` (LLM -> final:
  what the human changed; 0 for kept sides).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from difflib import SequenceMatcher

from judgekit.errors import JudgekitError
from judgekit.metrics.tokenizers import sacrebleu_tokenizer

STATUSES = ("kept", "edited", "reverted")


def changed_spans(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """``(spans, tokens)`` from token list ``a`` to ``b``: the number of maximal contiguous
    changed spans (replace, insert or delete opcodes) and of tokens removed plus added; (0, 0)
    when equal."""
    opcodes = SequenceMatcher(None, list(a), list(b), autojunk=False).get_opcodes()
    changed = [(i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]
    return len(changed), sum(changed)


def _norm(text: str) -> str:
    return " ".join(text.split())


def side_status(original: str, llm: str, final: str) -> str:
    """``kept``, ``reverted`` or ``edited`` for one side of one segment (whitespace-collapsed)."""
    original, llm, final = _norm(original), _norm(llm), _norm(final)
    if final == llm:
        return "kept"
    return "reverted" if final == original else "edited"


@dataclass(frozen=True)
class SideEdit:
    """One side of one segment: status and edit counts (contiguous changed token spans)."""

    status: str
    localisation_edits: int
    localisation_tokens: int
    editor_edits: int


@dataclass(frozen=True)
class SegmentEdit:
    """One segment: its status, the sides the editor changed, and each side's :class:`SideEdit`."""

    index: int
    status: str
    edited_sides: tuple[str, ...]
    sides: dict[str, SideEdit]


@dataclass(frozen=True)
class PostEditStats:
    """Totals over segments (Cultivar Table 1).

    Attributes:
        n_segments: segments compared.
        segments: ``kept``/``reverted``/``edited`` -> number of segments.
        edited_by_sides: for edited segments, ``"source"``, ``"target"``, ``"source+target"``
            (side names joined by ``+``) -> number of segments.
        sides: side -> ``kept``/``edited``/``reverted`` counts, ``localisation_edits`` and
            ``editor_edits`` totals, and their means per segment (``mean_localisation_edits``
            is Table 1's "Average Edits") and per revised segment (``mean_editor_edits_revised``,
            over segments whose side was edited or reverted; NaN-free: None when there are none).
        signature: tokenizers and comparison settings.
        detail: one :class:`SegmentEdit` per segment.
    """

    n_segments: int
    segments: dict[str, int]
    edited_by_sides: dict[str, int]
    sides: dict[str, dict[str, float | int | None]]
    signature: str
    detail: tuple[SegmentEdit, ...]

    def summary(self) -> dict:
        """Every field but the per-segment detail."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "detail"}


def postedit_stats(
    sides: Mapping[str, tuple[Sequence[str], Sequence[str], Sequence[str]]],
    *,
    tokenize: str | Mapping[str, str] = "13a",
) -> PostEditStats:
    """Kept / edited / reverted counts and edit spans, per segment and side.

    Args:
        sides: side name -> ``(original, llm, final)``, three aligned lists of segments; every
            side has the same number of segments.
        tokenize: sacrebleu tokenizer for all sides, or side -> tokenizer.

    Raises:
        JudgekitError: no sides, lists of different lengths (naming the side), a missing or
            unusable tokenizer.
    """
    if not sides:
        raise JudgekitError("post-edit statistics need at least one side")
    lengths = {name: tuple(len(v) for v in versions) for name, versions in sides.items()}
    n = next(iter(lengths.values()))[0]
    for name, (n_orig, n_llm, n_final) in lengths.items():
        if not n_orig == n_llm == n_final == n:
            raise JudgekitError(
                f"side {name!r}: {n_orig} original, {n_llm} LLM and {n_final} edited segments; "
                f"all versions of all sides need {n}"
            )
    toks = {s: tokenize if isinstance(tokenize, str) else tokenize.get(s) for s in sides}
    for name, tok in toks.items():
        if tok is None:
            raise JudgekitError(f"no tokenizer given for side {name!r}")
    detail = []
    for i in range(n):
        per_side = {}
        for name, (orig, llm, final) in sides.items():
            tokenizer = sacrebleu_tokenizer(toks[name])
            o, lm, f = (tokenizer(_norm(v[i])).split() for v in (orig, llm, final))
            spans, tokens = changed_spans(o, f)
            state = side_status(orig[i], llm[i], final[i])
            per_side[name] = SideEdit(state, spans, tokens, changed_spans(lm, f)[0])
        statuses = [e.status for e in per_side.values()]
        if all(s == "kept" for s in statuses):
            status = "kept"
        elif all(_norm(sides[s][2][i]) == _norm(sides[s][0][i]) for s in sides):
            status = "reverted"
        else:
            status = "edited"
        changed = tuple(name for name, e in per_side.items() if e.status != "kept")
        detail.append(SegmentEdit(i, status, changed if status == "edited" else (), per_side))
    return PostEditStats(
        n_segments=n,
        segments={s: sum(d.status == s for d in detail) for s in ("kept", "reverted", "edited")},
        edited_by_sides=dict(Counter("+".join(d.edited_sides) for d in detail if d.edited_sides)),
        sides={name: _side_totals(name, detail) for name in sides},
        signature="|".join(f"{name}.tok:{toks[name]}" for name in sides)
        + "|ws:collapse|spans:difflib-opcodes",
        detail=tuple(detail),
    )


def _side_totals(name: str, detail: Sequence[SegmentEdit]) -> dict[str, float | int | None]:
    edits = [d.sides[name] for d in detail]
    counts = Counter(e.status for e in edits)
    revised = [e.editor_edits for e in edits if e.status != "kept"]
    loc = sum(e.localisation_edits for e in edits)
    return {s: counts.get(s, 0) for s in STATUSES} | {
        "localisation_edits": loc,
        "localisation_tokens": sum(e.localisation_tokens for e in edits),
        "editor_edits": sum(revised),
        "mean_localisation_edits": loc / len(edits) if edits else None,
        "mean_editor_edits_revised": sum(revised) / len(revised) if revised else None,
    }
