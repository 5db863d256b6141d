"""The generation parameters a route takes, asked of litellm: what judgekit really sends.

Reasoning API models refuse some parameters (OpenAI's o-series and gpt-5 take no
``temperature`` but 1, nor ``top_p``). For a route called through litellm (hosted APIs),
:func:`sent_params` asks litellm which OpenAI parameters the route supports
(``litellm.get_supported_openai_params``) and whether it takes each value
(``litellm.utils.get_optional_params`` raising ``UnsupportedParamsError``), and leaves out
those it does not: the provider's default applies. ``temperature: null`` in a config means the
same (not sent). What is sent is what the signature, the records and the cache key hold.
OpenAI-compatible servers (vLLM, llama.cpp, the embedded model) take every parameter.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from judgekit.llm.spec import ModelSpec

_CHECKED = ("temperature", "top_p", "seed", "max_tokens")


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


def dropped_params(spec: ModelSpec) -> tuple[str, ...]:
    """The parameters of ``spec.params()`` that ``spec``'s route does not take (module doc);
    empty for OpenAI-compatible servers and routes litellm does not know."""
    if spec.is_openai_compatible_server:
        return ()
    params = spec.params()
    return tuple(
        name
        for name in _CHECKED
        if name in params and not _takes(spec.model_id, spec.provider, name, params[name])
    )


def sent_params(spec: ModelSpec) -> dict[str, Any]:
    """``spec.params()`` without the :func:`dropped_params`: what a request carries."""
    dropped = dropped_params(spec)
    return {k: v for k, v in spec.params().items() if k not in dropped}


def params_note(spec: ModelSpec, role: str) -> str | None:
    """One line saying what is not sent for ``spec`` (None when everything is)."""
    dropped = dropped_params(spec)
    if not dropped:
        return None
    shown = ", ".join(f"{name}={spec.params()[name]!r}" for name in dropped)
    return (
        f"{role} ({spec.model}): not sent, the route does not take them (litellm): {shown}; "
        "the provider's default applies"
    )
