"""MQM scores from error annotations, and a reader for Google's MQM TSV files.

Method (Freitag et al. 2021, "Experts, Errors, and Context", TACL, Sec. 3 and Table 2; the
README of google/wmt-mqm-human-evaluation): each error row weighs by its severity, Major 5,
Minor 1, Neutral 0, with two category rules, Minor ``Fluency/Punctuation`` 0.1 and Major
``Non-translation`` 25. A rating (one rater on one segment) scores the sum of its weights; a
segment scores the mean over its raters; a system scores the mean over its segments. Scores are
error weights per segment: >= 0, lower is better (Google's tables print them positive).

``Critical`` 25 is in the default severities for judges that use it (DESIGN 3.3); Google's data
has no Critical rows. Rows whose severity is ``HOTW-test`` (injected attention checks) are left
out by default. Source-side issues (``Source error``, ``Source issue``) count as in the README
table unless ``exclude_categories`` lists them.

The TSV format (google/wmt-mqm-human-evaluation): a header, then one row per error with the
columns ``system, doc, seg_id (or docSegId), rater, source, target, category, severity`` (others,
such as ``doc_id``, ``globalSegId`` and ``comment``, are ignored). The error span is marked with
``<v>...</v>`` in ``target``, or in ``source`` for omissions; a segment without errors has one
``No-error`` row.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from judgekit import __version__
from judgekit.errors import InputError
from judgekit.metrics.spans import Span

OPEN, CLOSE = "<v>", "</v>"
REQUIRED_COLUMNS = ("system", "doc", "seg_id", "rater", "source", "target", "category", "severity")
_ALIASES = {"docSegId": "seg_id"}
NO_ERROR = "no-error"


@dataclass(frozen=True)
class MQMError:
    """One annotation row.

    ``source`` and ``target`` have the ``<v>`` markers removed. ``start``/``end`` are character
    offsets of the span into ``target`` (end exclusive, None when the row marks no target span);
    ``source_start``/``source_end`` likewise for a span marked in the source (omissions).
    ``line`` is the 1-based line of the row in ``path``.
    """

    system: str
    doc: str
    seg_id: str
    rater: str
    source: str
    target: str
    category: str
    severity: str
    start: int | None
    end: int | None
    source_start: int | None
    source_end: int | None
    path: str = ""
    line: int = 0

    @property
    def segment(self) -> tuple[str, str, str]:
        """``(system, doc, seg_id)``."""
        return (self.system, self.doc, self.seg_id)

    @property
    def is_error(self) -> bool:
        return _norm(self.severity) != NO_ERROR


def _norm(value: str) -> str:
    return value.strip().lower().rstrip("!").strip()


def strip_span_markers(text: str) -> tuple[str, int | None, int | None]:
    """Remove one ``<v>...</v>`` pair; return the clean text and the span's offsets in it.

    An unclosed ``<v>`` runs to the end of the text (Google's TED files have such rows).

    Raises:
        ValueError: a ``</v>`` before any ``<v>``, or more than one span.
    """
    n_open, n_close = text.count(OPEN), text.count(CLOSE)
    if n_open == 0 and n_close == 0:
        return text, None, None
    if n_open != 1 or n_close > 1:
        raise ValueError(f"expected one {OPEN}...{CLOSE} span, found {n_open} {OPEN}")
    start = text.index(OPEN)
    if n_close and text.index(CLOSE) < start:
        raise ValueError(f"{CLOSE} comes before {OPEN}")
    clean = text.replace(OPEN, "", 1).replace(CLOSE, "", 1)
    end = text.index(CLOSE) - len(OPEN) if n_close else len(clean)
    return clean, start, end


def read_mqm_tsv(path: str | Path) -> list[MQMError]:
    """Read a Google MQM TSV (tab-separated, no quoting, header first) into typed rows.

    Raises:
        InputError: missing file, missing column, wrong field count, or a malformed span
            (naming file, line and field).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    with path.open(encoding="utf-8", newline="\n") as handle:
        lines = [line.rstrip("\r\n") for line in handle]
    if not lines or not lines[0].strip():
        raise InputError(path, "empty file; expected a header line", line=1)
    header = [_ALIASES.get(c.strip(), c.strip()) for c in lines[0].split("\t")]
    for name in REQUIRED_COLUMNS:
        if name not in header:
            raise InputError(
                path, f"missing column (header: {', '.join(header)})", line=1, field=name
            )
    index = {name: header.index(name) for name in REQUIRED_COLUMNS}
    rows = []
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise InputError(path, f"{len(cells)} fields, header has {len(header)}", line=number)
        value = {name: cells[i] for name, i in index.items()}
        spans = {}
        for side in ("source", "target"):
            try:
                spans[side] = strip_span_markers(value[side])
            except ValueError as exc:
                raise InputError(path, str(exc), line=number, field=side) from exc
        rows.append(
            MQMError(
                system=value["system"],
                doc=value["doc"],
                seg_id=value["seg_id"],
                rater=value["rater"],
                source=spans["source"][0],
                target=spans["target"][0],
                category=value["category"],
                severity=value["severity"],
                start=spans["target"][1],
                end=spans["target"][2],
                source_start=spans["source"][1],
                source_end=spans["source"][2],
                path=str(path),
                line=number,
            )
        )
    return rows


class WeightRule(BaseModel):
    """A category-specific weight; ``severity`` None matches every severity."""

    category: str
    weight: float
    severity: str | None = None


def _default_rules() -> list[WeightRule]:
    return [
        WeightRule(severity="Minor", category="Fluency/Punctuation", weight=0.1),
        WeightRule(severity="Major", category="Non-translation", weight=25.0),
    ]


class MQMWeights(BaseModel):
    """MQM weighting; the defaults are Google's WMT weights (module docstring).

    JSON form: ``{"severity": {...}, "rules": [{"severity", "category", "weight"}],
    "exclude_severities": [...], "exclude_categories": [...]}``; each key given replaces its
    default whole. Names compare case-insensitively, ignoring a trailing ``!``. A rule's
    category matches itself and its subcategories (``Fluency`` matches ``Fluency/Grammar``).
    """

    severity: dict[str, float] = Field(
        default_factory=lambda: {
            "Major": 5.0,
            "Minor": 1.0,
            "Neutral": 0.0,
            "No-error": 0.0,
            "Critical": 25.0,
        }
    )
    rules: list[WeightRule] = Field(default_factory=_default_rules)
    exclude_severities: list[str] = Field(default_factory=lambda: ["HOTW-test"])
    exclude_categories: list[str] = Field(default_factory=list)

    def weight(self, error: MQMError) -> float | None:
        """Weight of one row (>= 0 with the defaults), or None when the row is excluded.

        Raises:
            InputError: the severity is neither weighted nor excluded (names the row's line).
        """
        severity, category = _norm(error.severity), _norm(error.category)
        if severity in {_norm(s) for s in self.exclude_severities}:
            return None
        if any(_matches(category, c) for c in self.exclude_categories):
            return None
        for rule in self.rules:
            if (rule.severity is None or _norm(rule.severity) == severity) and _matches(
                category, rule.category
            ):
                return rule.weight
        weights = {_norm(k): v for k, v in self.severity.items()}
        if severity not in weights:
            known = ", ".join(list(self.severity) + self.exclude_severities)
            raise InputError(
                error.path or None,
                f"unknown severity '{error.severity}'; weighted or excluded: {known}",
                line=error.line or None,
                field="severity",
            )
        return weights[severity]

    def signature(self) -> str:
        """Every setting that changes a score, e.g. ``mqm|major:5|minor:1|...|v:judgekit-0.1.0``."""
        parts = ["mqm"] + [f"{_norm(k)}:{v:g}" for k, v in self.severity.items()]
        parts += [
            f"{_norm(r.severity or '*')}+{_norm(r.category)}:{r.weight:g}" for r in self.rules
        ]
        excluded = [_norm(s) for s in self.exclude_severities + self.exclude_categories]
        parts += [f"excl:{','.join(excluded) or 'none'}", "avg:rater>segment>system"]
        return "|".join(parts + [f"v:judgekit-{__version__}"])


def _matches(category: str, rule: str) -> bool:
    rule = _norm(rule)
    return category == rule or category.startswith(rule + "/")


def load_weights(spec: str | Path | None) -> MQMWeights:
    """Weights from a JSON file path or an inline JSON object; None gives the defaults.

    Raises:
        InputError: unreadable JSON or a field of the wrong type (naming the field).
    """
    if spec is None:
        return MQMWeights()
    text, where = str(spec), None
    if not text.lstrip().startswith("{"):
        if not Path(text).is_file():
            raise InputError(text, "weights file not found (or pass an inline JSON object)")
        where, text = text, Path(text).read_text(encoding="utf-8")
    try:
        return MQMWeights.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise InputError(where, f"invalid JSON: {exc.msg}", line=exc.lineno) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise InputError(where, first["msg"], field=loc) from exc


@dataclass(frozen=True)
class SegmentMQM:
    """MQM of one segment: the mean over raters of each rater's summed weights (>= 0)."""

    system: str
    doc: str
    seg_id: str
    score: float
    rater_scores: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SystemMQM:
    """MQM of one system: the mean segment score; ``total`` is the sum of segment scores."""

    system: str
    score: float
    n_segments: int
    n_ratings: int
    total: float
    signature: str


def segment_mqm(errors: Iterable[MQMError], weights: MQMWeights | None = None) -> list[SegmentMQM]:
    """Per-segment MQM, in order of first appearance.

    Every (segment, rater) seen counts as a rating, so a rater's excluded rows (e.g. HOTW) or
    ``No-error`` row still make a rating of 0.

    Raises:
        InputError: a row with an unknown severity.
    """
    weights = weights or MQMWeights()
    ratings: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for error in errors:
        rater_scores = ratings[error.segment]
        rater_scores.setdefault(error.rater, 0.0)
        weight = weights.weight(error)
        if weight is not None:
            rater_scores[error.rater] += weight
    return [
        SegmentMQM(*key, score=sum(r.values()) / len(r), rater_scores=dict(r))
        for key, r in ratings.items()
    ]


def system_mqm(errors: Iterable[MQMError], weights: MQMWeights | None = None) -> list[SystemMQM]:
    """Per-system MQM, best (lowest) first; see :func:`segment_mqm`.

    Raises:
        InputError: a row with an unknown severity.
    """
    weights = weights or MQMWeights()
    by_system: dict[str, list[SegmentMQM]] = defaultdict(list)
    for segment in segment_mqm(errors, weights):
        by_system[segment.system].append(segment)
    signature = weights.signature()
    results = [
        SystemMQM(
            system=name,
            score=sum(s.score for s in segs) / len(segs),
            n_segments=len(segs),
            n_ratings=sum(len(s.rater_scores) for s in segs),
            total=sum(s.score for s in segs),
            signature=signature,
        )
        for name, segs in by_system.items()
    ]
    return sorted(results, key=lambda r: (r.score, r.system))


def target_spans(
    errors: Sequence[MQMError], exclude_severities: Sequence[str] = ("HOTW-test",)
) -> dict[tuple[str, str, str, str], list[Span]]:
    """Target-side error spans per rating ``(system, doc, seg_id, rater)``, for span metrics.

    Every rating appears, with an empty list when it marked no target span (``No-error``, or
    only source-side omissions).
    """
    excluded = {_norm(s) for s in exclude_severities}
    spans: dict[tuple[str, str, str, str], list[Span]] = {}
    for e in errors:
        rating = spans.setdefault((*e.segment, e.rater), [])
        if e.is_error and e.start is not None and _norm(e.severity) not in excluded:
            rating.append(Span(e.start, e.end, e.severity, e.category))
    return spans
