"""The generation parameters a route takes, asked of litellm: what judgekit really sends.

Reasoning API models refuse some parameters (OpenAI's o-series and gpt-5 take no
``temperature`` but 1, nor ``top_p``). For a route called through litellm (hosted APIs),
:func:`sent_params` asks litellm which OpenAI parameters the route supports
(``litellm.get_supported_openai_params``) and whether it takes each value
(``litellm.utils.get_optional_params`` raising ``UnsupportedParamsError``), and leaves out
those it does not: the provider's default applies. ``temperature: null`` in a config means the
same (not sent). What is sent is what the signature, the records and the cache key hold.
OpenAI-compatible servers (vLLM, llama.cpp, the embedded model) take every parameter.

Thinking models (:func:`thinking_rule`). A Claude model asked to think (``extra: {thinking:
{type: enabled | adaptive}}`` or ``extra: {reasoning_effort: low | medium | high}``, on the
``anthropic/``, ``bedrock/``, ``vertex_ai/`` routes; litellm passes both to Anthropic, docs
"Thinking / Reasoning Content") gets Anthropic's rules for extended thinking (Anthropic docs,
"Building with extended thinking", feature compatibility): ``temperature`` 1 (the only value
it takes with thinking), ``top_p`` only between 0.95 and 1, no ``top_k``, no forced
``tool_choice`` (thinking takes ``tool_choice`` ``auto`` or ``none`` only), and
``max_tokens`` above ``thinking.budget_tokens``. Any route whose litellm model entry says
``supports_tool_choice: false`` or ``supports_forced_tool_use: false`` (deepseek-reasoner,
some Claude models) gets no forced tool call either. Without a forced tool call the automatic
strategy (``structured_output: auto``) is ``prompt`` (the schema in the prompt, the answer
validated as ever); ``structured_output: tools`` on such a route is a preflight problem.
Preflight prints the rule applied, one line per route (:func:`params_note`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgekit.llm.spec import ModelSpec

_CHECKED = ("temperature", "top_p", "seed", "max_tokens")
_CLAUDE_PROVIDERS = ("anthropic", "bedrock", "vertex_ai")
_THINKING_TEMPERATURE = 1.0  # Anthropic: temperature may only be 1 with thinking
_THINKING_TOP_P = (0.95, 1.0)  # Anthropic: top_p between 0.95 and 1 with thinking


@lru_cache(maxsize=256)
def _takes(model: str, provider: str, name: str, value: Any) -> bool:
    """Whether litellm says the route ``provider/model`` takes ``name=value``."""
    import litellm
    from litellm.utils import get_optional_params

    try:
        supported = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider)
    except Exception:  # a route litellm does not know: it is not judged here
        return True
    if supported is not None and name not in supported:
        return False
    try:
        get_optional_params(model=model, custom_llm_provider=provider, **{name: value})
    except litellm.UnsupportedParamsError:
        return False
    except Exception:  # litellm could not tell: send it, the provider has the last word
        return True
    return True


@lru_cache(maxsize=256)
def _no_forced_tool(model: str, provider: str) -> bool:
    """Whether litellm's model entry says the route takes no (forced) ``tool_choice``."""
    import litellm

    try:
        info = litellm.get_model_info(model=model, custom_llm_provider=provider)
    except Exception:  # a route litellm does not know: nothing is known against it
        return False
    entry = litellm.model_cost.get(model) or litellm.model_cost.get(f"{provider}/{model}") or {}
    flags = (info.get("supports_tool_choice"), entry.get("supports_forced_tool_use"))
    return any(flag is False for flag in flags)


def thinking_rule(spec: ModelSpec) -> str | None:
    """``"thinking"`` when ``spec`` asks a Claude model to think (module doc), else None.

    Only the config is read (``extra``'s ``thinking`` and ``reasoning_effort``): a pure function.
    """
    if spec.is_openai_compatible_server or spec.provider not in _CLAUDE_PROVIDERS:
        return None
    if spec.provider != "anthropic" and "claude" not in spec.model_id.lower():
        return None
    thinking, effort = spec.extra.get("thinking"), spec.extra.get("reasoning_effort")
    if thinking is True or (isinstance(thinking, dict) and thinking.get("type") != "disabled"):
        return "thinking"
    if isinstance(effort, str) and effort != "none":
        return "thinking"
    return None


def forced_tool_refused(spec: ModelSpec) -> str | None:
    """Why ``spec``'s route refuses a forced tool call (module doc), or None when it takes one."""
    if spec.is_openai_compatible_server:
        return None
    if thinking_rule(spec):
        return "Anthropic takes no forced tool_choice with extended thinking"
    if spec.structured_output in ("tools", "auto") and _no_forced_tool(
        spec.model_id, spec.provider
    ):
        return "litellm's model entry says the route takes no forced tool_choice"
    return None


def _thinking_params(spec: ModelSpec) -> dict[str, Any]:
    """``spec.params()`` with the thinking rule applied (module doc)."""
    params = spec.params()
    if not thinking_rule(spec):
        return params
    if "temperature" in params:
        params["temperature"] = _THINKING_TEMPERATURE
    top_p = params.get("top_p")
    if top_p is not None and not _THINKING_TOP_P[0] <= float(top_p) <= _THINKING_TOP_P[1]:
        del params["top_p"]
    params.pop("top_k", None)
    return params


def dropped_params(spec: ModelSpec) -> tuple[str, ...]:
    """The parameters of ``spec.params()`` (the thinking rule applied) that ``spec``'s route
    does not take (module doc); empty for OpenAI-compatible servers and routes litellm does
    not know."""
    if spec.is_openai_compatible_server:
        return ()
    params = _thinking_params(spec)
    return tuple(
        name
        for name in _CHECKED
        if name in params and not _takes(spec.model_id, spec.provider, name, params[name])
    )


def sent_params(spec: ModelSpec) -> dict[str, Any]:
    """``spec.params()`` with the thinking rule applied, without the :func:`dropped_params`:
    what a request carries."""
    if spec.is_openai_compatible_server:
        return spec.params()
    dropped = dropped_params(spec)
    return {k: v for k, v in _thinking_params(spec).items() if k not in dropped}


def thinking_problem(spec: ModelSpec, role: str) -> str | None:
    """One line when ``spec`` cannot run as configured under the module doc's rules
    (``structured_output: tools`` on a route that refuses a forced tool call; ``max_tokens``
    not above ``thinking.budget_tokens``); None when it can."""
    refused = forced_tool_refused(spec)
    if refused and spec.structured_output == "tools":
        return (
            f"{role} ({spec.model}): structured_output: tools forces a tool call, and {refused}; "
            f"set {role}.structured_output: prompt (or auto)"
        )
    thinking = spec.extra.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
    if thinking_rule(spec) and isinstance(budget, int) and spec.max_tokens <= budget:
        return (
            f"{role} ({spec.model}): max_tokens {spec.max_tokens} must be above "
            f"thinking.budget_tokens {budget} (Anthropic); raise {role}.max_tokens"
        )
    return None


def params_note(spec: ModelSpec, role: str) -> str | None:
    """One line saying the rule applied to ``spec`` (thinking, no forced tool call) and what is
    not sent (None when everything configured is sent as it is)."""
    parts = []
    if thinking_rule(spec):
        asked, sent = spec.params(), _thinking_params(spec)
        rules = ["temperature not sent (the provider's default)"]
        if "temperature" in sent:
            was = asked["temperature"]
            rules = [f"temperature={sent['temperature']!r}" + (f" (not {was!r})" * (was != 1))]
        gone = [k for k in ("top_p", "top_k") if k in asked and k not in sent]
        rules += [f"not sent {k}={asked[k]!r}" for k in gone]
        parts.append("extended thinking (Anthropic's rules): " + ", ".join(rules))
    refused = forced_tool_refused(spec)
    if refused and spec.structured_output == "auto" and spec.strategy() == "prompt":
        parts.append(f"no forced tool call ({refused}): structured_output auto -> prompt")
    dropped = dropped_params(spec)
    if dropped:
        params = _thinking_params(spec)
        shown = ", ".join(f"{name}={params[name]!r}" for name in dropped)
        parts.append(f"not sent, the route does not take them (litellm): {shown}; "
                     "the provider's default applies")  # fmt: skip
    return f"{role} ({spec.model}): " + "; ".join(parts) if parts else None
