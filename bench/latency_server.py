"""A minimal fixed-latency OpenAI-compatible server for benchmarks.

Run it as::

    python bench/latency_server.py --port 0 --port-file F --latency 0.02

It binds 127.0.0.1, writes the chosen port to ``F`` (atomically) and serves

* ``GET /v1/models`` and ``GET /health``;
* ``POST /v1/chat/completions`` (non-streaming): after ``--latency`` seconds it returns a proper
  ``chat.completion`` whose content is valid JSON for the schema the client asked for
  (``response_format`` ``json_schema`` / ``json_object`` + ``schema``, vLLM's ``guided_json``,
  llama.cpp's ``json_schema``, or a forced function tool), or an echo of the last user message
  when no schema was asked for. Answers are precomputed once per schema, and nothing is logged.

This module is also the shared home of the answer logic that ``tests/fault_server.py`` imports:
:func:`schema_instance` (a deterministic instance of a JSON schema), :func:`output_spec`,
:func:`correct_content`, :func:`chat_completion` and :func:`message_hash`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import json
import math
import os
import random
import signal
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

__all__ = [
    "OutputSpec",
    "SchemaError",
    "chat_completion",
    "correct_content",
    "error_body",
    "last_user_text",
    "make_app",
    "message_hash",
    "output_spec",
    "prompt_tokens",
    "run_cli_server",
    "schema_instance",
    "start_runner",
    "write_port_file",
]

DEFAULT_MODEL = "bench-model"

# --------------------------------------------------------------------------------------------
# Deterministic instances of JSON schemas
# --------------------------------------------------------------------------------------------

_WORDS = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliett",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
)


class SchemaError(ValueError):
    """The schema cannot be instantiated (``false``, a remote ``$ref``, empty ranges...)."""


def schema_instance(schema: Any, seed: int | str = 0, *, max_depth: int = 8) -> Any:
    """Return a deterministic JSON value that is valid for ``schema``.

    Supported: ``type`` (single or list), ``object`` (``properties``, ``required``,
    ``additionalProperties``, ``minProperties``), ``array`` (``items``, ``prefixItems``,
    ``minItems``, ``maxItems``, ``uniqueItems`` best effort), ``string`` (``minLength``,
    ``maxLength``, common ``format`` values), ``integer`` / ``number`` (inclusive and exclusive
    bounds, ``multipleOf``), ``boolean``, ``null``, ``enum``, ``const``, local ``$ref`` (``$defs``
    and ``definitions``, as pydantic emits them, recursion included), ``allOf`` (merged),
    ``anyOf`` / ``oneOf`` (a non-null branch is preferred). ``pattern`` and ``contains`` are not
    honoured. Optional properties are filled in up to ``max_depth``; deeper, only required
    properties, ``minItems`` elements and ``null`` branches are produced, so recursive models end.

    The same ``(schema, seed)`` always gives the same value, in any process.
    """
    return _SchemaGen(schema, random.Random(seed), max_depth).gen(schema, 0)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class _SchemaGen:
    def __init__(self, root: Any, rng: random.Random, max_depth: int) -> None:
        self.root = root
        self.rng = rng
        self.max_depth = max_depth

    # -- helpers ------------------------------------------------------------------------------

    def resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise SchemaError(f"only local $ref is supported, got {ref!r}")
        node = self.root
        pointer = ref[1:]
        if pointer:
            for raw in pointer.lstrip("/").split("/"):
                part = raw.replace("~1", "/").replace("~0", "~")
                try:
                    node = node[int(part)] if isinstance(node, list) else node[part]
                except (KeyError, IndexError, ValueError, TypeError) as exc:
                    raise SchemaError(f"unresolvable $ref {ref!r}") from exc
        return node

    def deref(self, schema: Any) -> Any:
        seen = 0
        while isinstance(schema, dict) and "$ref" in schema:
            target = self.resolve(schema["$ref"])
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **rest} if rest and isinstance(target, dict) else target
            seen += 1
            if seen > 64:
                raise SchemaError("$ref cycle without structure")
        return schema

    def is_null(self, schema: Any) -> bool:
        schema = self.deref(schema)
        if not isinstance(schema, dict):
            return False
        if schema.get("type") == "null" or schema.get("type") == ["null"]:
            return True
        if "const" in schema and schema["const"] is None:
            return True
        return schema.get("enum") == [None]

    def merge_all_of(self, schema: dict) -> dict:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for sub in schema["allOf"]:
            sub = self.deref(sub)
            if sub is True or sub == {}:
                continue
            if not isinstance(sub, dict):
                raise SchemaError("allOf with a false schema")
            if "allOf" in sub:
                sub = self.merge_all_of(sub)
            for key, value in sub.items():
                if key == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **value}
                elif key == "required":
                    merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
                else:
                    merged.setdefault(key, value)
        return merged

    # -- generation ---------------------------------------------------------------------------

    def gen(self, schema: Any, depth: int) -> Any:
        if schema is True or schema is None:
            return self.words(1, 2)
        if schema is False:
            raise SchemaError("no value is valid for the schema `false`")
        if not isinstance(schema, dict):
            raise SchemaError(f"not a schema: {schema!r}")
        if "$ref" in schema:
            return self.gen(self.deref(schema), depth)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            if not schema["enum"]:
                raise SchemaError("empty enum")
            return self.rng.choice(schema["enum"])
        if "allOf" in schema:
            return self.gen(self.merge_all_of(schema), depth)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = schema[key]
                non_null = [o for o in options if not self.is_null(o)]
                if not non_null or (depth >= self.max_depth and len(non_null) < len(options)):
                    return None
                rest = {k: v for k, v in schema.items() if k not in (key, "default")}
                choice = self.rng.choice(non_null)
                if rest.get("type") is not None or rest.get("properties"):
                    choice = {"allOf": [rest, choice]}
                return self.gen(choice, depth)

        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            if not kinds:
                return None
            kind = kinds[0] if len(kinds) == 1 else self.rng.choice(kinds)
        if kind is None:
            kind = self.infer_type(schema)
        if kind == "object":
            return self.gen_object(schema, depth)
        if kind == "array":
            return self.gen_array(schema, depth)
        if kind == "string":
            return self.gen_string(schema)
        if kind == "integer":
            return self.gen_integer(schema)
        if kind == "number":
            return self.gen_number(schema)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        if kind == "any":
            return self.words(1, 2)
        raise SchemaError(f"unknown type {kind!r}")

    @staticmethod
    def infer_type(schema: dict) -> str:
        if any(k in schema for k in ("properties", "required", "additionalProperties")):
            return "object"
        if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
            return "array"
        if any(k in schema for k in ("minLength", "maxLength", "format", "pattern")):
            return "string"
        if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "multipleOf")):
            return "number"
        return "any"

    def words(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(self.rng.randint(lo, hi)))

    def gen_object(self, schema: dict, depth: int) -> dict:
        props = schema.get("properties") or {}
        required = schema.get("required") or []
        deep = depth >= self.max_depth
        out: dict[str, Any] = {}
        for name, sub in props.items():
            if deep and name not in required:
                continue
            out[name] = self.gen(sub, depth + 1)
        extra = schema.get("additionalProperties", True)
        extra_schema = extra if isinstance(extra, dict) else {}
        for name in required:
            if name not in out:
                out[name] = self.gen(extra_schema, depth + 1)
        counter = itertools.count()
        while len(out) < schema.get("minProperties", 0):
            if extra is False:
                raise SchemaError("minProperties needs more properties than are allowed")
            out[f"key_{next(counter)}"] = self.gen(extra_schema, depth + 1)
        return out

    def gen_array(self, schema: dict, depth: int) -> list:
        items = schema.get("items", {})
        prefix = schema.get("prefixItems") or []
        if isinstance(items, list):  # draft 4-7 tuple form
            prefix, items = items, schema.get("additionalItems", {})
        lo = int(schema.get("minItems", 0))
        hi = schema.get("maxItems")
        if items is False:
            hi = len(prefix) if hi is None else min(int(hi), len(prefix))
        if hi is not None and int(hi) < lo:
            raise SchemaError("maxItems < minItems")
        if depth >= self.max_depth:
            n = lo
        else:
            hi_eff = int(hi) if hi is not None else max(lo, 3)
            n = self.rng.randint(max(lo, min(hi_eff, 1)), hi_eff)
        unique = bool(schema.get("uniqueItems"))
        out: list[Any] = []
        seen: set[str] = set()
        for i in range(n):
            sub = prefix[i] if i < len(prefix) else items
            value = self.gen(sub, depth + 1)
            if unique:
                key = json.dumps(value, sort_keys=True)
                for _ in range(16):
                    if key not in seen:
                        break
                    value = self.gen(sub, depth + 1)
                    key = json.dumps(value, sort_keys=True)
                seen.add(key)
            out.append(value)
        return out

    def gen_string(self, schema: dict) -> str:
        rng = self.rng
        fmt = schema.get("format")
        if fmt == "date-time":
            s = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T12:00:00Z"
        elif fmt == "date":
            s = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        elif fmt == "time":
            s = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z"
        elif fmt == "email":
            s = f"{rng.choice(_WORDS)}@example.com"
        elif fmt in ("uri", "url", "iri"):
            s = f"https://example.com/{rng.choice(_WORDS)}"
        elif fmt == "uuid":
            s = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        elif fmt == "ipv4":
            s = f"10.0.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        else:
            s = self.words(1, 3)
        lo = int(schema.get("minLength", 0))
        hi = schema.get("maxLength")
        while len(s) < lo:
            s += " " + rng.choice(_WORDS)
        if hi is not None:
            if int(hi) < lo:
                raise SchemaError("maxLength < minLength")
            s = s[: int(hi)]
        return s

    @staticmethod
    def bounds(schema: dict) -> tuple[float | None, bool, float | None, bool]:
        lo, lo_ex = schema.get("minimum"), False
        hi, hi_ex = schema.get("maximum"), False
        ex_lo, ex_hi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if ex_lo is True:  # draft 4: a flag on "minimum"
            lo_ex = True
        elif _is_number(ex_lo) and (lo is None or ex_lo >= lo):
            lo, lo_ex = ex_lo, True
        if ex_hi is True:
            hi_ex = True
        elif _is_number(ex_hi) and (hi is None or ex_hi <= hi):
            hi, hi_ex = ex_hi, True
        return lo, lo_ex, hi, hi_ex

    def gen_integer(self, schema: dict) -> int:
        lo_f, lo_ex, hi_f, hi_ex = self.bounds(schema)
        lo = None if lo_f is None else (math.floor(lo_f) + 1 if lo_ex else math.ceil(lo_f))
        hi = None if hi_f is None else (math.ceil(hi_f) - 1 if hi_ex else math.floor(hi_f))
        if lo is None and hi is None:
            lo, hi = 0, 100
        elif hi is None:
            hi = lo + 100
        elif lo is None:
            lo = hi - 100
        if lo > hi:
            raise SchemaError("empty integer range")
        step = schema.get("multipleOf")
        if step:
            kmin, kmax = math.ceil(lo / step), math.floor(hi / step)
            if kmin > kmax:
                raise SchemaError("no multiple of multipleOf in range")
            return int(self.rng.randint(kmin, kmax) * step)
        return self.rng.randint(lo, hi)

    def gen_number(self, schema: dict) -> float | int:
        lo, lo_ex, hi, hi_ex = self.bounds(schema)
        if lo is None and hi is None:
            lo, hi = 0.0, 100.0
        elif hi is None:
            hi = lo + 100.0
        elif lo is None:
            lo = hi - 100.0
        if lo > hi or (lo == hi and (lo_ex or hi_ex)):
            raise SchemaError("empty number range")
        step = schema.get("multipleOf")
        if step:
            kmin, kmax = math.ceil(lo / step), math.floor(hi / step)
            if lo_ex and kmin * step <= lo:
                kmin += 1
            if hi_ex and kmax * step >= hi:
                kmax -= 1
            if kmin > kmax:
                raise SchemaError("no multiple of multipleOf in range")
            k = self.rng.randint(kmin, kmax)
            if isinstance(step, int):
                return k * step
            decimals = max(0, -math.floor(math.log10(abs(step)))) + 6
            return round(k * step, decimals)
        value = round(self.rng.uniform(lo, hi), 2)
        if value < lo or value > hi or (lo_ex and value == lo) or (hi_ex and value == hi):
            value = (lo + hi) / 2
        return value


# --------------------------------------------------------------------------------------------
# Request parsing and response building (shared with tests/fault_server.py)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutputSpec:
    """What a chat request asks the answer to look like.

    ``mode`` is ``"text"`` (no schema), ``"json"`` (``response_format`` and friends; ``schema``
    may be ``None`` for a bare ``json_object``) or ``"tool"`` (the answer is the arguments of
    a call to ``tool_name``, whose parameters schema is ``schema``).
    """

    mode: str
    schema: dict | None = None
    tool_name: str | None = None

    def cache_key(self) -> str:
        # Key order is kept: it decides the generated instance, and it is stable per client.
        return json.dumps([self.mode, self.tool_name, self.schema])


_TEXT = OutputSpec("text")


def output_spec(request: dict) -> OutputSpec:
    """Read the requested output format from an OpenAI-style chat request."""
    tools = request.get("tools")
    choice = request.get("tool_choice")
    if tools and choice != "none":
        functions = [t.get("function") or {} for t in tools if isinstance(t, dict)]
        chosen = functions[0] if functions else {}
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            chosen = next((f for f in functions if f.get("name") == name), chosen)
        return OutputSpec("tool", chosen.get("parameters") or {}, chosen.get("name"))
    fmt = request.get("response_format")
    if isinstance(fmt, dict):
        kind = fmt.get("type")
        if kind == "json_schema":
            spec = fmt.get("json_schema") or {}
            schema = spec.get("schema", spec.get("schema_"))
            return OutputSpec("json", schema if isinstance(schema, dict) else None)
        if kind == "json_object":
            schema = fmt.get("schema")
            return OutputSpec("json", schema if isinstance(schema, dict) else None)
    for key in ("guided_json", "json_schema"):  # vLLM / llama.cpp extensions
        schema = request.get(key)
        if isinstance(schema, str):
            with contextlib.suppress(ValueError):
                schema = json.loads(schema)
        if isinstance(schema, dict):
            return OutputSpec("json", schema)
    return _TEXT


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return "" if content is None else str(content)


def last_user_text(messages: Any) -> str:
    """The text of the last ``user`` message (content string or list of text parts)."""
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, dict) and message.get("role") == "user":
                return _text_of(message.get("content"))
    return ""


def message_hash(messages: Any) -> str:
    """A stable 16-hex-digit hash of a request's ``messages`` (canonical JSON, sha256)."""
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def correct_content(request: dict, seed: int | str = 0, spec: OutputSpec | None = None) -> str:
    """The content of a correct answer: a schema instance as JSON, or an echo of the user."""
    spec = spec or output_spec(request)
    if spec.mode == "text":
        return "echo: " + last_user_text(request.get("messages"))
    if spec.schema is None:
        return "{}"
    return json.dumps(schema_instance(spec.schema, seed), ensure_ascii=False)


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def prompt_tokens(request: dict) -> int:
    messages = request.get("messages")
    if not isinstance(messages, list):
        return 1
    return sum(_approx_tokens(_text_of(m.get("content"))) for m in messages if isinstance(m, dict))


_ids = itertools.count(1)


def chat_completion(
    content: str,
    *,
    model: str,
    spec: OutputSpec = _TEXT,
    finish_reason: str = "stop",
    prompt_tokens: int = 1,
    completion_tokens: int | None = None,
    id: str | None = None,
) -> dict:
    """A ``chat.completion`` object; in tool mode ``content`` becomes the call's arguments."""
    if spec.mode == "tool":
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{next(_ids)}",
                    "type": "function",
                    "function": {"name": spec.tool_name or "tool", "arguments": content},
                }
            ],
        }
        if finish_reason == "stop":
            finish_reason = "tool_calls"
    else:
        message = {"role": "assistant", "content": content}
    completion = _approx_tokens(content) if completion_tokens is None else completion_tokens
    return {
        "id": id or f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
        },
    }


def error_body(message: str, type: str, code: str | None = None) -> dict:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": type, "param": None, "code": code}}


def models_body(model: str) -> dict:
    return {
        "object": "list",
        "data": [{"id": model, "object": "model", "created": 0, "owned_by": "judgekit-tests"}],
    }


# --------------------------------------------------------------------------------------------
# The benchmark server
# --------------------------------------------------------------------------------------------


def make_app(latency: float = 0.0, model: str = DEFAULT_MODEL) -> web.Application:
    """The fixed-latency app: one cached answer per (schema, model), nothing logged."""
    cache: dict[str, str] = {}
    models = web.json_response(models_body(model))
    models_text = models.text
    dumps = json.dumps

    async def handle_models(request: web.Request) -> web.Response:
        return web.Response(text=models_text, content_type="application/json")

    async def handle_health(request: web.Request) -> web.Response:
        return web.Response(text='{"status":"ok"}', content_type="application/json")

    async def handle_chat(request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
            if not isinstance(body, dict):
                raise ValueError("request body must be a JSON object")
            spec = output_spec(body)
            if spec.mode == "text":
                content = correct_content(body, 0, spec)
            else:
                key = spec.cache_key()
                content = cache.get(key)
                if content is None:
                    content = cache[key] = correct_content(body, 0, spec)
        except (ValueError, SchemaError) as exc:
            return web.Response(
                status=400,
                text=dumps(error_body(str(exc), "invalid_request_error")),
                content_type="application/json",
            )
        if latency > 0:
            await asyncio.sleep(latency)
        reply = chat_completion(
            content,
            model=body.get("model") or model,
            spec=spec,
            prompt_tokens=prompt_tokens(body),
        )
        return web.Response(text=dumps(reply), content_type="application/json")

    app = web.Application(client_max_size=64 * 1024 * 1024)
    for prefix in ("/v1", ""):
        app.router.add_get(prefix + "/models", handle_models)
        app.router.add_post(prefix + "/chat/completions", handle_chat)
    app.router.add_get("/health", handle_health)
    return app


def write_port_file(path: str | os.PathLike[str], port: int) -> None:
    """Write ``port`` to ``path`` atomically (readers never see a partial file)."""
    path = Path(path)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(f"{port}\n")
    os.replace(tmp, path)


async def start_runner(
    app: web.Application, host: str = "127.0.0.1", port: int = 0, shutdown_timeout: float = 0.5
) -> tuple[web.AppRunner, int]:
    """Start serving ``app`` (no access log); return the runner and the bound port.

    ``runner.cleanup()`` stops it; handlers still running after ``shutdown_timeout`` seconds
    are cancelled.
    """
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=shutdown_timeout)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port, backlog=1024)
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner, runner.addresses[0][1]


async def run_cli_server(
    app: web.Application,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    port_file: str | None = None,
    shutdown_timeout: float = 0.5,
    on_started: Callable[[int], Awaitable[None] | None] | None = None,
) -> None:
    """Serve ``app`` until SIGINT/SIGTERM; write the bound port to ``port_file``."""
    runner, bound = await start_runner(app, host, port, shutdown_timeout)
    if port_file:
        write_port_file(port_file, bound)
    if on_started is not None:
        result = on_started(bound)
        if result is not None:
            await result
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--port-file", help="write the bound port to this file")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    args = parser.parse_args(argv)
    loop_factory = None
    try:  # uvloop, where installed, roughly doubles the throughput; never required
        import uvloop  # type: ignore[import-not-found]

        loop_factory = uvloop.new_event_loop
    except ImportError:
        pass
    app = make_app(args.latency, args.model)
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(run_cli_server(app, host=args.host, port=args.port, port_file=args.port_file))


if __name__ == "__main__":
    main()
