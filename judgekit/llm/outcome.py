"""The one classification of a provider's :class:`~judgekit.llm.reply.Reply` into an outcome.

Kinds (``Outcome.kind``) and their reasons (a closed set, ``REASONS``; docs/providers.md has
the table of what each means and what a rerun does with it):

* ``answer``: text to validate against the schema (``llm/structured.py``); its failures are
  ``empty``, ``malformed_json``, ``schema`` (re-asked, then ``unscored``).
* ``refusal``: the model declined (``message.refusal``, finish reason ``refusal``): reason
  ``refusal``, ``unscored``, no re-ask.
* ``filtered``: the provider's filter stopped the answer (finish reason ``content_filter``;
  Gemini's ``safety``, ``recitation``, ``blocklist``, ``prohibited_content``, ``spii`` as
  litellm passes them on): reason ``content_filter``, ``unscored``, no re-ask.
* ``truncated``: the answer (or the reasoning before it) used the whole ``max_tokens``: reason
  ``truncated``; an unclosed ``<think>`` block with no answer after it: ``reasoning_unfinished``;
  ``unscored``, no re-ask (the same budget would cut it again).
* ``provider_error``: an error inside an HTTP 200 (``{"error": ...}``, no choices): transient,
  retried with back-off, then ``error`` (``--retry-errors`` calls it again).
* ``context_length``: the prompt does not fit the model (from a status and an error type/code
  first, then the message): reason ``context_length``, ``error``, never a stop of the run.

Finish reasons are compared case-folded, so ``SAFETY`` (Gemini's own spelling) and ``safety``
(litellm's) are one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from judgekit.llm.errors import EndpointError
from judgekit.llm.reply import ProviderError, Reply
from judgekit.llm.secrets import redact

Kind = Literal["answer", "refusal", "filtered", "truncated", "provider_error", "context_length"]
REASONS: tuple[str, ...] = (
    "empty", "malformed_json", "schema", "truncated", "reasoning_unfinished", "content_filter",
    "refusal", "provider_error", "context_length", "transient", "request",
)  # fmt: skip
FILTER_FINISHES = frozenset(
    {"content_filter", "safety", "recitation", "blocklist", "prohibited_content", "spii",
     "image_safety", "language"}
)  # fmt: skip
REFUSAL_FINISHES = frozenset({"refusal"})
_CONTEXT_TYPES = re.compile(
    r"context_length_exceeded|exceed_context_size|contextwindowexceeded|context_window",
    re.IGNORECASE,
)
CONTEXT_MESSAGE = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long"
    r"|longer than the maximum model length|exceeds the available context"
    r"|maximum model length|input is too long|n_ctx",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Outcome:
    """What a reply means: ``kind`` (module doc), ``reason`` (``reason: detail`` for every
    kind but ``answer``), the ``text`` to validate (answers), and ``note`` (where the answer
    was read from, when not from the content)."""

    kind: Kind
    reason: str | None
    text: str | None
    note: str | None = None


def is_context_error(error: ProviderError | None, status: int | None, message: str = "") -> bool:
    """True when a provider error (or an HTTP failure's ``message``) says the prompt does not
    fit: the error's type or code first (``context_length_exceeded``, llama.cpp's
    ``exceed_context_size_error``), then its message (vLLM's "longer than the maximum model
    length", llama.cpp's "exceeds the available context size"), for 400/413/422 or no status."""
    if error is not None:
        if _CONTEXT_TYPES.search(f"{error.type or ''} {error.code or ''}"):
            return True
        message = f"{message} {error.message}"
    return status in (None, 200, 400, 413, 422) and bool(CONTEXT_MESSAGE.search(message))


def _json_object_in(text: str | None) -> str | None:
    """The last JSON object that ends ``text`` (an answer a reasoning parser left there)."""
    if not text:
        return None
    tail = text.rstrip()
    if not tail.endswith("}"):
        return None
    start = tail.rfind("{")
    while start >= 0:
        try:
            json.loads(tail[start:])
            return tail[start:]
        except ValueError:
            start = tail.rfind("{", 0, start)
    return None


def classify(reply: Reply) -> Outcome:
    """The :class:`Outcome` of ``reply`` (the module doc's rules, in this order: provider
    error, refusal, filter, an answer with text, then what an empty answer means)."""
    error = reply.provider_error
    if error is not None:
        detail = f"{error.message}" + (f" (type {error.type})" if error.type else "")
        if is_context_error(error, reply.status_code):
            return Outcome("context_length", f"context_length: {detail}", None)
        return Outcome("provider_error", f"provider_error: {detail}", None)
    finish = (reply.finish_reason or "").casefold()
    if reply.refusal is not None or finish in REFUSAL_FINISHES:
        why = reply.refusal or reply.text or f"finish_reason={reply.finish_reason}"
        short = why if len(why) <= 280 else why[:280] + "..."  # the whole text is the raw
        return Outcome("refusal", f"refusal: {short}", reply.refusal or reply.text)
    if finish in FILTER_FINISHES:
        return Outcome(
            "filtered", f"content_filter: finish_reason={reply.finish_reason}", reply.text
        )
    text = reply.text
    spent = (
        "" if reply.reasoning_tokens is None else f", {reply.reasoning_tokens} of them reasoning"
    )
    if text is not None and text.strip():
        if finish == "length":
            return Outcome(
                "truncated", f"truncated: finish_reason=length (raise max_tokens{spent})", text
            )
        return Outcome("answer", None, text)
    if reply.extra.get("think_block") == "unclosed":
        return Outcome(
            "truncated",
            "reasoning_unfinished: a <think> block never closed and no answer followed"
            + (f" (finish_reason=length: raise max_tokens{spent})" if finish == "length" else ""),
            None,
        )
    if finish == "length":
        who = (
            "the reasoning used"
            if reply.reasoning or reply.reasoning_tokens
            else "the answer was cut at"
        )
        return Outcome(
            "truncated", f"truncated: {who} the whole max_tokens budget (raise max_tokens{spent})",
            None,
        )  # fmt: skip
    found = _json_object_in(reply.reasoning)
    if found is not None:  # content null, the answer left in the reasoning (vLLM parsers)
        return Outcome("answer", None, found, "answer read from the reasoning (content was empty)")
    return Outcome("answer", None, text)


def raise_provider_error(reply: Reply, where: str) -> None:
    """Raise the :class:`EndpointError` of a reply that carries no answer: an error inside an
    HTTP 200 or no choices (``server``: transient, retried with back-off), or one that says
    the prompt does not fit (``context_length``). Returns for every other reply.

    Raises:
        EndpointError: as above.
    """
    outcome = classify(reply)
    if outcome.kind not in ("provider_error", "context_length"):
        return
    kind = "context_length" if outcome.kind == "context_length" else "server"
    message = redact(f"HTTP {reply.status_code} from {where}: {outcome.reason}")[:300]
    raise EndpointError(message, status_code=reply.status_code, kind=kind)
