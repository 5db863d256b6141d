"""Preflight's schema probe: one short call finds a server that ignores the JSON schema.

Some OpenAI-compatible servers (proxies, older llama.cpp builds, gateways) accept
``response_format`` and ignore it: every answer of a run is then off the schema (issue 32: 0 of
2 items scored). For each route on a server whose strategy asks for a schema (``json_schema``,
``json_object``), preflight sends one chat request (``max_tokens`` 64, the header
``X-Judgekit-Probe: schema``) whose schema allows one answer only, ``{"probe": "ok"}``, and a
prompt that asks for something else ("Say hello"). A server that constrains its decoding must
answer that object; one whose complete answer is off that schema (prose, other JSON) ignores
the schema. What then happens (:func:`verdict`):

* ``structured_output: auto``: the route switches to the ``prompt`` strategy (the schema in
  the prompt, the answer validated and re-asked as ever; ``ModelSpec.mark_schema_ignored``),
  and preflight says so in one line;
* ``structured_output: json_schema`` / ``json_object`` set in the config: the run stops before
  its first task with one line (the config asked for a schema the server does not apply).

A probe that gets no complete answer (an HTTP error, a timeout, a reply cut by ``max_tokens``,
a refusal) says nothing: the run finds out as ever (``health.py``). Hosted APIs are not probed
(they apply ``json_schema``; a probe would be billed).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

import aiohttp
from pydantic import BaseModel, ConfigDict

from judgekit.llm.endpoint import chat_body, request_prefix
from judgekit.llm.reply import from_completion
from judgekit.llm.spec import ModelSpec
from judgekit.llm.structured import InvalidAnswer, output_format, read_reply

PROBE_HEADER = "X-Judgekit-Probe"
PROBE_MAX_TOKENS = 64
_MESSAGES = [{"role": "user", "content": "Say hello in one short sentence."}]
_SHOWN_CHARS = 80
_TIMEOUT_S = 60.0
_SCHEMA_STRATEGIES = ("json_schema", "json_object")


class SchemaProbe(BaseModel):
    """The probe's schema: one answer only, ``{"probe": "ok"}``."""

    model_config = ConfigDict(extra="forbid")
    probe: Literal["ok"]


@dataclass(frozen=True)
class Verdict:
    """What a probe found for one route: ``note`` (the route switched to ``prompt``) or
    ``problem`` (the run stops); at most one is set."""

    note: str | None = None
    problem: str | None = None


async def probe(
    session: aiohttp.ClientSession,
    url: str,
    spec: ModelSpec,
    headers: dict[str, str],
    timeout: float,
) -> str | None:
    """One probe of ``spec`` at the server ``url`` (its ``api_base``): the start of the answer
    when it is complete and off the probe's schema (the server ignores the schema), else None
    (it followed the schema, or no complete answer came)."""
    strategy = spec.strategy()
    fmt = output_format(SchemaProbe, strategy)
    probe_spec = spec.model_copy(update={"max_tokens": PROBE_MAX_TOKENS, "logprobs": False})
    body = chat_body(request_prefix(probe_spec, fmt), _MESSAGES, fmt)
    try:
        async with session.post(
            url + "/chat/completions",
            data=body,
            headers={**headers, "Content-Type": "application/json", PROBE_HEADER: "schema"},
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as response:
            if response.status != 200:
                return None
            data = await response.json(content_type=None)
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
        return None
    try:
        read_reply(from_completion(data), SchemaProbe)
    except InvalidAnswer as exc:
        if exc.reason.startswith(("malformed_json", "schema")) and exc.raw:
            return " ".join(exc.raw.split())[:_SHOWN_CHARS]
        return None  # empty, cut, refused: no verdict
    return None


async def probe_routes(
    session: aiohttp.ClientSession, routes: list[tuple[str, ModelSpec, str, dict[str, str]]]
) -> list[Verdict]:
    """Probe each ``(role, spec, url, headers)`` whose strategy asks for a schema, once per
    (spec, url), concurrently; the :func:`verdict` of each that ignores it."""
    todo: dict[tuple[int, str], tuple[str, ModelSpec, str, dict[str, str]]] = {}
    for role, spec, url, headers in routes:
        if spec.strategy() in _SCHEMA_STRATEGIES:
            todo.setdefault((id(spec), url), (role, spec, url, headers))
    jobs = [probe(session, url, spec, headers, min(spec.timeout, _TIMEOUT_S))
            for _, spec, url, headers in todo.values()]  # fmt: skip
    answers = await asyncio.gather(*jobs)
    return [
        verdict(role, spec, url, answer)
        for (role, spec, url, _), answer in zip(todo.values(), answers, strict=True)
        if answer is not None
    ]


def verdict(role: str, spec: ModelSpec, url: str, answer: str) -> Verdict:
    """The one line for a route whose probe got ``answer`` (module doc); an ``auto`` route is
    switched to the ``prompt`` strategy here (``spec.mark_schema_ignored``)."""
    asked = spec.strategy()
    found = (
        f"{role} ({spec.model}): the server at {url} ignores the JSON schema (preflight probe: "
        f'asked {asked} for {{"probe": "ok"}} only, it answered {answer!r})'
    )
    if spec.structured_output == "auto":
        spec.mark_schema_ignored()
        return Verdict(note=f"{found}; this run sends it the prompt strategy (the schema in the "
                       "prompt, answers validated as ever)")  # fmt: skip
    return Verdict(problem=f"{found}; set {role}.structured_output: prompt (or auto to switch "
                   "automatically)")  # fmt: skip
