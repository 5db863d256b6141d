"""Judge confidence from log-probabilities: a probability for every label of a judge's answer.

The one reader of log-probabilities (``judge.logprobs: true``; docs/confidence.md). It works on
the raw first choice of a completion, in every shape servers send: OpenAI and vLLM chat
(``logprobs.content[]`` of ``{token, logprob, bytes, top_logprobs}``; vLLM's ``bytes:\\xe0\\xa4``
tokens read as those bytes), llama-cpp-python's server (the same, ``bytes: null``), the
completions shape (``tokens``, ``token_logprobs``, ``top_logprobs: [{token: logprob}]``) and
llama.cpp's native ``completion_probabilities[]`` (older servers: ``probs: [{tok_str, prob}]``).

The label position rule: the answer is JSON whose label field (the schema's ``label_field``,
else its one enum field) holds one of the labels. The tokens' bytes are joined (offsets from
their lengths), the label value's first character is found by scanning the answer's top-level
keys (a key quoted in a string value is never taken for it), and the first token that reaches
past it starts the label. The generated path is followed while its text is the start of
several labels. At each such position the tokens the enum constraint allows (the generated one
and the ``top_logprobs`` alternatives that, appended to the path, still spell the start of a
label) are renormalised among themselves (``Z``), as a constrained decoder does; an allowed
alternative that spells one label only adds ``P(path) * p / Z`` to it, and the path goes on with
``p(token) / Z`` until only the chosen label remains (a multi-token label is scored whole: its
remaining tokens are forced). The values are then renormalised over the label set.

A label no alternative spells (absent from the top-K, or reachable only through an alternative
several labels share) gets 0 and, in ``label_probs_bound``, an upper bound of its probability:
the share of those shared alternatives plus, at each position, ``P(path) * u / (Z + u)`` with
``u = 1 - mass of the top-K``, as ``hi / (S + hi)`` (``S``: the labels' found mass). No number
is invented.

Source: G-Eval's reading of the score tokens' probabilities (Liu et al. 2023, Sec. 2.3), here
over a label set, each label scored whole.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from judgekit.llm.reply import json_span, split_think

_WS = re.compile(r"[ \t\n\r]*")
_HEX_BYTES = re.compile(r"\\x([0-9a-fA-F]{2})")
_DECODER = json.JSONDecoder(strict=False)


class LogprobsMismatch(ValueError):
    """The choice has log-probabilities but they cannot be read at the label (the tokens do
    not spell the answer, no label field in it, the label value not one of the labels, a
    value that is no log-probability: NaN, +inf, above 0, a string, an unknown shape)."""


_SLACK = 1e-4  # servers round: a logprob up to this above 0 is read as 0 (probability 1)
_UNREADABLE = (TypeError, ValueError, ArithmeticError, KeyError, IndexError, AttributeError)


def _logprob(value: Any) -> float:
    """A natural-log probability read from a payload: a number in [-inf, 0] (up to
    ``_SLACK`` above 0, read as 0); -inf is probability 0.

    Raises:
        LogprobsMismatch: anything else (NaN, +inf, above 0, a string, a bool, None).
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LogprobsMismatch(f"a log-probability that is not a number ({value!r:.40})")
    lp = float(value)
    if math.isnan(lp) or lp > _SLACK:
        raise LogprobsMismatch(f"a log-probability out of range ({lp!r})")
    return min(lp, 0.0)


@dataclass(frozen=True)
class Step:
    """One generated token: its ``text`` (bytes), ``logprob`` (natural log) and the top-K
    ``alternatives`` as ``(bytes, logprob)`` (the generated token may be among them)."""

    text: bytes
    logprob: float
    alternatives: tuple[tuple[bytes, float], ...]


@dataclass(frozen=True)
class LabelProbs:
    """A judge's probability for every label at its label position.

    Attributes:
        probs: label -> probability in [0, 1], summing to 1 over the label set.
        bounds: label -> upper bound of its probability, for the labels that got 0 (absent
            from the top-K); empty when every label was found.
        chosen: the label the answer holds.
        mass: raw probability of the label set before renormalising, in (0, 1].
        position: index of the output token where the label value starts.
        top_k: most alternatives given at one position.
    """

    probs: dict[str, float]
    bounds: dict[str, float] = field(default_factory=dict)
    chosen: str = ""
    mass: float = 0.0
    position: int = 0
    top_k: int = 0


def token_bytes(token: Any, given: Any = None) -> bytes:
    """A token's bytes: vLLM's ``bytes:\\xe0\\xa4`` form read as those bytes (whatever its
    ``bytes`` field holds: the UTF-8 of that text, from some servers), else ``given`` (a list of
    byte values) when sent, else the token text UTF-8 encoded."""
    text = str(token or "")
    rest = text[6:] if text.startswith("bytes:") else ""
    if rest and not _HEX_BYTES.sub("", rest):
        return bytes(int(h, 16) for h in _HEX_BYTES.findall(rest))
    if isinstance(given, list) and all(isinstance(b, int) and 0 <= b < 256 for b in given):
        return bytes(given)
    return text.encode("utf-8")


def _alternatives(top: Any) -> tuple[tuple[bytes, float], ...]:
    """``top_logprobs`` as ``(bytes, logprob)``: a list of entries, or a ``{token: logprob}``
    mapping (completions shape), or llama.cpp's older ``probs`` of ``{tok_str, prob}``."""
    if isinstance(top, Mapping):
        return tuple((token_bytes(t), _logprob(lp)) for t, lp in top.items() if lp is not None)
    out = []
    for alt in top or []:
        if not isinstance(alt, Mapping):
            continue
        if "prob" in alt and "logprob" not in alt:
            prob = alt["prob"]
            if isinstance(prob, bool) or not isinstance(prob, int | float) or not 0 <= prob <= 1:
                raise LogprobsMismatch(f"a probability out of range ({prob!r:.40})")
            lp = math.log(prob) if prob > 0 else -math.inf
            out.append((token_bytes(alt.get("tok_str")), lp))
        elif alt.get("logprob") is not None:
            out.append((token_bytes(alt.get("token"), alt.get("bytes")), _logprob(alt["logprob"])))
    return tuple(out)


def _step(entry: Mapping[str, Any]) -> Step:
    token = entry.get("token", entry.get("content"))
    alts = _alternatives(entry.get("top_logprobs", entry.get("probs")))
    text = token_bytes(token, entry.get("bytes"))
    logprob = entry.get("logprob")
    if logprob is None:  # llama.cpp's older shape: the token's own probability among probs
        logprob = next((lp for b, lp in alts if b == text), -math.inf)
    return Step(text, _logprob(logprob), alts)


def token_steps(choice: Mapping[str, Any]) -> list[Step] | None:
    """The generated tokens of a raw choice (any shape of the module doc); None when it
    carries no log-probabilities.

    Raises:
        LogprobsMismatch: log-probabilities in a shape this reader does not know.
    """
    native = choice.get("completion_probabilities")
    if isinstance(native, list) and native:
        return [_step(e) for e in native if isinstance(e, Mapping)]
    lp = choice.get("logprobs")
    if lp is None or lp == {} or lp == []:
        return None
    if isinstance(lp, Mapping) and isinstance(lp.get("content"), list):
        entries = lp["content"]
        return [_step(e) for e in entries if isinstance(e, Mapping)] or None
    if isinstance(lp, Mapping) and isinstance(lp.get("tokens"), list):
        tops = lp.get("top_logprobs") or [None] * len(lp["tokens"])
        steps = []
        logprobs = lp.get("token_logprobs") or []
        for token, logprob, top in zip(lp["tokens"], logprobs, tops, strict=False):
            alts = _alternatives(top or {})
            steps.append(Step(token_bytes(token), _logprob(logprob or 0.0), alts))
        return steps or None
    if isinstance(lp, Mapping) and lp.get("content") is None and set(lp) <= {"content", "refusal"}:
        return None  # OpenAI's ``{"content": null}``: asked for, none given
    what = f"keys {sorted(map(str, lp))[:5]}" if isinstance(lp, Mapping) else type(lp).__name__
    raise LogprobsMismatch(f"log-probabilities in an unknown shape ({what})")


def value_offset(text: str, key: str) -> tuple[int, Any] | None:
    """``(character offset, value)`` of top-level ``key``'s value in the JSON object ``text``
    (the answer's first complete JSON value, as the parser reads it:
    :func:`judgekit.llm.reply.json_span`); None when the text has no such object or lacks it."""
    span = json_span(text)
    if span is None:
        return None
    i = span[0]
    if text[i : i + 1] != "{":
        return None
    i += 1
    try:
        while True:
            i = _WS.match(text, i).end()
            if text[i : i + 1] != '"':
                return None
            name, i = json.decoder.scanstring(text, i + 1, False)
            i = _WS.match(text, i).end()
            if text[i : i + 1] != ":":
                return None
            i = _WS.match(text, i + 1).end()
            begin = i
            value, i = _DECODER.raw_decode(text, i)
            if name == key:
                return begin, value
            i = _WS.match(text, i).end()
            if text[i : i + 1] != ",":
                return None
            i += 1
    except (json.JSONDecodeError, ValueError):
        return None


def label_target(schema: type[BaseModel]) -> tuple[str, tuple[str, ...]] | None:
    """``(field, labels)`` of a judge answer schema: its ``label_field`` class attribute, else
    its one top-level field typed as a ``Literal`` of strings; None when it has neither."""
    fields = schema.model_fields
    named = getattr(schema, "label_field", None)
    candidates = [named] if isinstance(named, str) else list(fields)
    found = []
    for name in candidates:
        info = fields.get(name)
        if info is not None and get_origin(info.annotation) is Literal:
            values = get_args(info.annotation)
            if all(isinstance(v, str) for v in values):
                found.append((name, tuple(values)))
    return found[0] if len(found) == 1 else None


def label_probs(
    choice: Mapping[str, Any], labels: Sequence[str], label_field: str, content: str | None = None
) -> LabelProbs | None:
    """The probability of every label in ``labels`` at ``label_field`` of the answer in
    ``choice`` (raw first choice; ``content`` overrides its ``message.content``), by the
    label position rule of the module doc. None when the choice carries no log-probabilities.

    Any payload is read without raising anything else: a shape or value this reader cannot
    use (a string or NaN for a logprob, ``logprobs`` as a list, -9999.0 at the label's token)
    is a :class:`LogprobsMismatch`.

    Raises:
        LogprobsMismatch: they are there but cannot be read at the label.
    """
    try:
        return _label_probs(choice, labels, label_field, content)
    except LogprobsMismatch:
        raise
    except _UNREADABLE as exc:  # the class of unusable payloads, whatever their shape
        raise LogprobsMismatch(f"unreadable log-probabilities ({type(exc).__name__})") from exc


def _label_probs(
    choice: Mapping[str, Any], labels: Sequence[str], label_field: str, content: str | None
) -> LabelProbs | None:
    if not isinstance(choice, Mapping):
        raise LogprobsMismatch(f"a choice that is not an object ({type(choice).__name__})")
    steps = token_steps(choice)
    if steps is None:
        return None
    if content is None:
        message = choice.get("message") or {}
        content = message.get("content") if isinstance(message, Mapping) else None
        content = choice.get("content") if content is None else content
    if not isinstance(content, str):
        raise LogprobsMismatch("no answer text beside the log-probabilities")
    answer, _, _ = split_think(content)  # a leading <think> block: its braces never count
    base = content.rindex(answer) if answer else 0
    found = value_offset(answer or "", label_field)
    if found is not None:
        found = (base + found[0], found[1])
    if found is None or not isinstance(found[1], str) or found[1] not in labels:
        raise LogprobsMismatch(f"no label of the label set at '{label_field}' in the answer")
    begin, chosen = found
    generated = b"".join(s.text for s in steps)
    v = len(content[: begin + 1].encode("utf-8"))  # the byte after the opening quote
    head = content.encode("utf-8")[:v]
    targets = {lab: head + json.dumps(lab, ensure_ascii=False)[1:].encode() for lab in labels}
    if not generated.startswith(targets[chosen]):
        steps = _answer_steps(steps, generated, targets[chosen])
    return _walk(steps, targets, chosen, v)


def _answer_steps(steps: list[Step], generated: bytes, answer: bytes) -> list[Step]:
    """The steps of the answer where the token stream holds more than the answer's text: a
    vLLM or sglang reasoning parser moves the reasoning out of ``content`` but the
    log-probabilities still cover every generated token, reasoning first. The answer up to its
    label (``answer``) is then found as the last place where a token starts it. Otherwise the
    tokens lost bytes of a split character (:func:`_realign`).

    Raises:
        LogprobsMismatch: the tokens spell the answer nowhere.
    """
    at = generated.rfind(answer)
    if at > 0:
        offset = 0
        for n, step in enumerate(steps):
            if offset == at:
                return steps[n:]
            offset += len(step.text)
    return _realign(steps, answer)


def _realign(steps: list[Step], answer: bytes) -> list[Step]:
    """``steps`` with the non-ASCII bytes of ``answer`` (the answer up to its label) that
    their texts lost put back: llama-cpp-python decodes each token on its own with
    ``errors="ignore"``, so a character split over two tokens vanishes from both.

    Raises:
        LogprobsMismatch: the texts differ from the answer in any other way.
    """
    out, pos = [], 0
    for n, step in enumerate(steps):
        if pos >= len(answer):
            return out + steps[n:]
        lost = next(
            (k for k in range(5) if all(b >= 0x80 for b in answer[pos : pos + k])
             and _fits(answer[pos + k :], step.text)),
            None,
        )  # fmt: skip
        if lost is None:
            raise LogprobsMismatch("the tokens do not spell the answer up to its label")
        text = answer[pos : pos + lost] + step.text
        out.append(Step(text, step.logprob, step.alternatives))
        pos += len(text)
    if pos < len(answer):
        raise LogprobsMismatch("the tokens do not spell the answer up to its label")
    return out


def _fits(rest: bytes, text: bytes) -> bool:
    return rest.startswith(text) or text.startswith(rest)


def _walk(steps: list[Step], targets: dict[str, bytes], chosen: str, v: int) -> LabelProbs:
    """Follow the generated path from the label's first token (module doc)."""
    point = dict.fromkeys(targets, 0.0)
    loose = dict.fromkeys(targets, 0.0)  # mass that could be a label's: shared or unseen
    offset, i = 0, 0
    while offset + len(steps[i].text) <= v:
        offset += len(steps[i].text)
        i += 1
    position, path, alive = i, 1.0, list(targets)
    prefix = targets[chosen][:offset]

    def fits(label: str, text: bytes) -> bool:
        target = targets[label]
        return target.startswith(text) or text.startswith(target)

    for step in steps[position:]:
        seen, own = 0.0, False
        allowed: list[tuple[list[str], float]] = []  # alternatives that spell some label
        for alt, lp in step.alternatives:
            p = math.exp(lp)
            seen += p
            if alt == step.text and not own:
                own = True
                continue
            spelled = [lab for lab in alive if fits(lab, prefix + alt)]
            if spelled:
                allowed.append((spelled, p))
        p_own = math.exp(step.logprob)
        if not p_own > 0:  # -inf, or vLLM's -9999.0 under guided decoding: nothing to read
            raise LogprobsMismatch(f"the generated token has logprob {step.logprob} at the label")
        # the constrained decoder's normaliser at this position: the tokens it allows, seen
        norm = p_own + sum(p for _, p in allowed)
        for spelled, p in allowed:
            for lab in spelled:
                (point if len(spelled) == 1 else loose)[lab] += path * p / norm
        unseen = max(0.0, 1.0 - seen - (0.0 if own else p_own))
        for lab in alive:  # allowed tokens the top-K did not show: at most this share
            loose[lab] += path * unseen / (norm + unseen)
        path *= p_own / norm
        prefix += step.text
        alive = [lab for lab in alive if fits(lab, prefix)]
        if alive == [chosen]:
            point[chosen] += path
            break
    else:
        raise LogprobsMismatch("the tokens end before the label is told apart")
    total = sum(point.values())
    if not total > 0:
        raise LogprobsMismatch("the label position has no probability")
    probs = {lab: p / total for lab, p in point.items()}
    bounds = {lab: loose[lab] / (total + loose[lab]) for lab, p in point.items() if p == 0.0}
    top_k = max((len(s.alternatives) for s in steps[position:]), default=0)
    return LabelProbs(probs, bounds, chosen, min(1.0, total), position, top_k)
