"""Deterministic instances of JSON schemas, for the loopback servers' correct answers.

:func:`schema_instance` gives the same valid value for the same ``(schema, seed)`` in any
process; ``bench/chat_answers.py`` builds the servers' answers from it (``bench/latency_server.py``
and ``tests/fault_server.py``).
"""

from __future__ import annotations

import itertools
import json
import math
import random
import uuid
from typing import Any

__all__ = ["SchemaError", "schema_instance"]

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
