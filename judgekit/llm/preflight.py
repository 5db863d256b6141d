"""Preflight: every model route of a run checked before its first task is sent.

For each role's model, each of its deployments and each fallback (depth-first), concurrently:

* **keys**: the variable named by ``api_key_env`` (or the ``api_key_file``) must hold a key; a
  litellm route without one is checked with litellm's own ``litellm.validate_environment``
  (``OPENAI_API_KEY`` for ``openai/...``, and so on). litellm is imported only when such a
  route exists.
* **OpenAI-compatible servers** (``hosted_vllm``, ``openai_compatible``, ``openai/`` with an
  ``api_base``): ``GET <api_base>/models`` once per server. A server that refuses connections
  is waited for (up to the spec's ``outage_s``, probed with back-off: a vLLM server takes
  minutes to load), then reported with the role and URL; a key the server refuses (401/403)
  is reported; a model name the server does not list is reported with the names it does
  serve (vLLM answers 404 to any other). llama.cpp servers answer whatever name is asked
  (``owned_by`` ``llamacpp``, or llama-cpp-python's ``me``), so their names are not checked.
* **parameters**: a route that does not take some of the generation parameters (o3-mini: no
  ``temperature`` but 1) is not sent them; a thinking model gets its provider's rules (Claude
  with extended thinking: temperature 1, no forced tool call, so ``structured_output: auto``
  is ``prompt``); one line per such route says what was applied (``PreflightResult.notes``,
  ``judgekit.llm.params``), and ``structured_output: tools`` on a route that refuses a forced
  tool call, or ``max_tokens`` not above ``thinking.budget_tokens``, is a problem.
* **the JSON schema** (``schema_probe.py``): each route on a server whose strategy asks for
  a schema gets one short chat request whose schema allows one answer only; a server that
  ignores the schema is said in one line and its ``auto`` route switched to the ``prompt``
  strategy, or, where the config set ``json_schema``/``json_object``, is a problem.
* **the embedded model** (``local/<name>``): llama-cpp-python and the model's package and file
  are installed (before its server is started).
* **log-probabilities** (``logprobs: true``) on a route called through litellm: a route that
  ``litellm.get_supported_openai_params`` says takes no ``logprobs`` is said in one line
  (``on_wait``) and scores hard labels; the run goes on.

Against healthy local servers the checks take a few milliseconds. Every problem is one line
naming the role (as a config path: ``judge``, ``generator.1``, ``judge.fallbacks.0``), the route
and what to change; they are raised together as one :class:`~judgekit.errors.JudgekitError`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import aiohttp

from judgekit.errors import JudgekitError
from judgekit.llm.endpoint import litellm_route
from judgekit.llm.local import check_installed
from judgekit.llm.params import params_note, thinking_problem
from judgekit.llm.schema_probe import probe_routes
from judgekit.llm.secrets import resolve_key
from judgekit.llm.spec import Deployment, ModelSpec

Roles = Mapping[str, ModelSpec | Sequence[ModelSpec] | None]
# servers that answer any model name (their one model): llama.cpp, llama-cpp-python
_ANY_NAME_OWNERS = frozenset({"llamacpp", "me"})
_PROBE_FIRST_S = 0.25
_PROBE_MAX_S = 5.0


@dataclass(frozen=True)
class Route:
    """One endpoint of one role's model: ``role`` is its config path (``judge.fallbacks.0``)."""

    role: str
    spec: ModelSpec
    deployment: Deployment

    @property
    def api_base(self) -> str | None:
        return self.deployment.api_base or self.spec.api_base

    @property
    def label(self) -> str:
        return f"{self.role} ({self.spec.model})"

    def key(self) -> str | None:
        """The API key (None when none is configured).

        Raises:
            JudgekitError: the configured variable is unset or the key file missing.
        """
        dep, spec = self.deployment, self.spec
        return resolve_key(
            dep.api_key_env or spec.api_key_env, dep.api_key_file or spec.api_key_file
        )

    @property
    def has_key_source(self) -> bool:
        dep, spec = self.deployment, self.spec
        return bool(dep.api_key_env or spec.api_key_env or dep.api_key_file or spec.api_key_file)

    @property
    def on_server(self) -> bool:
        """Whether ``GET <api_base>/models`` applies (an OpenAI-compatible server)."""
        if self.api_base is None or self.spec.is_local:
            return False
        return self.spec.is_openai_compatible_server or self.spec.provider == "openai"


@dataclass
class PreflightResult:
    """What was checked: ``routes`` (config paths), ``servers`` (URLs asked for their models),
    ``seconds`` the checks took (waits for a server included), and ``notes``: one line per
    route that is not sent some of its parameters (``judgekit.llm.params.params_note``)."""

    routes: list[str] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def routes_of(roles: Roles) -> list[Route]:
    """Every endpoint of every model in ``roles`` (role -> spec, list of specs, or None):
    each spec's deployments, then its fallbacks depth-first."""
    out: list[Route] = []

    def walk(path: str, spec: ModelSpec) -> None:
        deployments = spec.endpoints()
        for i, dep in enumerate(deployments):
            out.append(
                Route(f"{path}.deployments.{i}" if len(deployments) > 1 else path, spec, dep)
            )
        for j, fallback in enumerate(spec.fallbacks):
            walk(f"{path}.fallbacks.{j}", fallback)

    for role, value in roles.items():
        if isinstance(value, ModelSpec):
            walk(role, value)
        elif value is not None:
            for i, spec in enumerate(value):
                walk(f"{role}.{i}", spec)
    return out


def preflight(
    roles: Roles, *, timeout: float = 5.0, on_wait: Callable[[str], None] | None = None
) -> PreflightResult:
    """Check every route of ``roles`` (see the module doc) in a new event loop.

    Args:
        roles: role -> spec, list of specs or None (``RunConfig.model_roles()``).
        timeout: seconds one ``GET /models`` may take.
        on_wait: called with one line when a server is waited for (``outage_s``).

    Raises:
        JudgekitError: one line per problem found; nothing was sent.
    """
    return asyncio.run(apreflight(roles, timeout=timeout, on_wait=on_wait))


async def apreflight(
    roles: Roles, *, timeout: float = 5.0, on_wait: Callable[[str], None] | None = None
) -> PreflightResult:
    """:func:`preflight` in the running event loop."""
    started = time.monotonic()
    routes = routes_of(roles)
    problems: list[str] = []
    keys: dict[int, str | None] = {}
    for route in routes:
        problem = _local_problem(route) if route.spec.is_local else None
        problem = problem or thinking_problem(route.spec, route.role)
        try:
            keys[id(route)] = route.key()
        except JudgekitError as exc:
            problem = f"{route.label}: {exc}"
        if problem:
            problems.append(problem)
    litellm_routes = [r for r in routes if _needs_provider_key(r) and id(r) in keys]
    servers: dict[str, list[Route]] = {}
    for route in routes:
        if route.on_server and id(route) in keys:
            servers.setdefault(route.api_base.rstrip("/"), []).append(route)  # type: ignore[union-attr]
    probe_notes: list[str] = []
    async with aiohttp.ClientSession() as session:
        jobs = [
            _server_problems(session, url, rs, keys, timeout, on_wait)
            for url, rs in servers.items()
        ]
        if litellm_routes:
            jobs.append(asyncio.to_thread(_provider_key_problems, litellm_routes))
        for found in await asyncio.gather(*jobs):
            problems.extend(found)
        if not problems:  # servers that answer: one short call finds one ignoring the schema
            found = await probe_routes(session, _probed(routes, keys))
            problems.extend(v.problem for v in found if v.problem)
            probe_notes = [v.note for v in found if v.note]
    if problems:
        raise JudgekitError("\n".join(dict.fromkeys(problems)))
    asking = [r.spec for r in routes if r.spec.logprobs and not r.spec.uses_aiohttp()]
    if asking:  # litellm routes known to give no log-probabilities: hard labels, said once
        for line in await asyncio.to_thread(_without_logprobs, asking):
            if on_wait is not None:
                on_wait(line)
    notes = [n for r in routes if (n := params_note(r.spec, r.role)) is not None]
    notes.extend(probe_notes)
    return PreflightResult(
        [r.role for r in routes],
        list(servers),
        time.monotonic() - started,
        list(dict.fromkeys(notes)),
    )


def _probed(
    routes: list[Route], keys: dict[int, str | None]
) -> list[tuple[str, ModelSpec, str, dict[str, str]]]:
    """``(role, spec, url, headers)`` of each route on a server (``schema_probe.py``)."""
    out = []
    for route in routes:
        if route.on_server and route.api_base is not None and id(route) in keys:
            key = keys[id(route)]
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            out.append((route.role, route.spec, route.api_base.rstrip("/"), headers))
    return out


def _local_problem(route: Route) -> str | None:
    try:
        check_installed(route.spec.model_id)
    except JudgekitError as exc:
        return f"{route.label}: {exc}"
    return None


def _needs_provider_key(route: Route) -> bool:
    """A litellm route with no key configured: litellm's conventional variable applies."""
    spec = route.spec
    if route.has_key_source or spec.is_openai_compatible_server:
        return False
    return not (spec.uses_aiohttp() and route.api_base is not None)


def _provider_key_problems(routes: list[Route]) -> list[str]:
    import litellm

    problems = []
    for route in routes:
        found = litellm.validate_environment(
            model=litellm_route(route.spec), api_base=route.api_base
        )
        missing = [name for name in found.get("missing_keys") or [] if name]
        if missing:
            problems.append(
                f"{route.label}: {', '.join(missing)} is not set (litellm needs it for this "
                f"route); export it, or name the variable that holds the key with "
                f"{route.role}.api_key_env"
            )
    return problems


def _without_logprobs(specs: list[ModelSpec]) -> list[str]:
    """One line per spec whose litellm route takes no ``logprobs``; those specs stop asking
    for them (the run scores their labels hard: ``ModelSpec.scoring``)."""
    lines = []
    for spec in {id(s): s for s in specs}.values():
        line = logprobs_unsupported(spec, litellm_route(spec))
        if line is not None:
            spec.logprobs = False
            spec.mark_no_logprobs()
            lines.append(line)
    return lines


def logprobs_unsupported(spec: ModelSpec, route: str) -> str | None:
    """One line when litellm knows that ``spec``'s litellm ``route`` does not take
    ``logprobs`` (``litellm.get_supported_openai_params``); None when it does, when litellm
    cannot tell (the first answer will), or for routes not called through litellm.
    """
    if not spec.logprobs or spec.uses_aiohttp():
        return None
    import litellm

    try:
        provider = litellm.get_llm_provider(route)[1]
        params = litellm.get_supported_openai_params(model=route, custom_llm_provider=provider)
    except Exception:  # litellm does not know the route
        return None
    if params is None or "logprobs" in params:
        return None
    return (
        f"{spec.model}: this route takes no logprobs (litellm); the run scores hard labels "
        "(records without label_probs)"
    )


async def _server_problems(
    session: aiohttp.ClientSession,
    url: str,
    routes: list[Route],
    keys: dict[int, str | None],
    timeout: float,
    on_wait: Callable[[str], None] | None,
) -> list[str]:
    """The problems of the routes served at ``url`` (one ``GET /models``)."""
    first = routes[0]
    key = next((keys[id(r)] for r in routes if keys.get(id(r))), None)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    budget = max(r.spec.outage_s for r in routes)
    status, body, reason = await _get_models(session, url, headers, timeout)
    if status is None and budget > 0:
        if on_wait is not None:
            on_wait(
                f"{first.role}: no server at {url} yet ({reason}); waiting up to {budget:g} s "
                "for it (outage_s)"
            )
        status, body, reason = await _wait_for(session, url, headers, timeout, budget)
    if status is None:
        return [
            f"{first.label}: no server at {url} ({reason}); start it, or fix {first.role}.api_base"
        ]
    if status in (401, 403):
        return [
            f"{first.label}: the server at {url} refused the key (HTTP {status} on GET /models); "
            f"check {first.role}.api_key_env"
        ]
    if status != 200 or not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return []  # no model list to compare with (a server without /models): nothing to say
    entries = [m for m in body["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]
    served = [m["id"] for m in entries]
    if not entries or all(m.get("owned_by") in _ANY_NAME_OWNERS for m in entries):
        return []
    problems = []
    for route in routes:
        tagged = _default_tag_twin(route.spec.model_id, served)
        if tagged is not None:
            if on_wait is not None:
                name = route.spec.model_id
                on_wait(f"{route.label}: the server at {url} serves '{name}' as '{tagged}' "
                        f"(the default tag: one model); sending '{name}'")  # fmt: skip
            continue
        if route.spec.model_id not in served:
            names = ", ".join(repr(name) for name in served)
            problems.append(
                f"{route.label}: the server at {url} does not serve '{route.spec.model_id}'; "
                f"it serves {names} (set {route.role}.model to "
                f"{route.spec.provider}/<one of them>)"
            )
    return problems


def _default_tag_twin(name: str, served: list[str]) -> str | None:
    """The served name that is ``name`` with or without the default tag ``:latest`` (Ollama's
    ``llama3`` is ``llama3:latest``), where ``name`` itself is not served; else None."""
    if name in served:
        return None
    if name.endswith(":latest"):
        twin = name.removesuffix(":latest")
    elif ":" not in name:
        twin = f"{name}:latest"
    else:
        return None
    return twin if twin in served else None


async def _get_models(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str], timeout: float
) -> tuple[int | None, object, str]:
    """``(status, decoded body or None, reason)``; status None when no answer came."""
    try:
        async with session.get(
            url + "/models", headers=headers, timeout=aiohttp.ClientTimeout(total=timeout)
        ) as response:
            try:
                body = await response.json(content_type=None)
            except ValueError:
                body = None
            return response.status, body, ""
    except TimeoutError:
        return None, None, f"no answer within {timeout:g} s"
    except (aiohttp.ClientError, OSError) as exc:
        text = str(exc).split(": ", 1)[-1] if str(exc) else type(exc).__name__
        return None, None, f"connection failed: {text}"[:200]


async def _wait_for(
    session: aiohttp.ClientSession,
    url: str,
    headers: dict[str, str],
    timeout: float,
    budget: float,
) -> tuple[int | None, object, str]:
    """Probe ``url`` with back-off until it answers or ``budget`` seconds pass."""
    started, delay = time.monotonic(), _PROBE_FIRST_S
    status, body, reason = None, None, ""
    while (left := budget - (time.monotonic() - started)) > 0:
        await asyncio.sleep(min(delay, left))
        status, body, reason = await _get_models(session, url, headers, timeout)
        if status is not None:
            break
        delay = min(delay * 2, _PROBE_MAX_S)
    if status is None:
        reason += f"; waited {budget:g} s (outage_s)"
    return status, body, reason
