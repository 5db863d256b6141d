"""Several endpoints for one spec, replicas (``deployments``) and ``fallbacks``: litellm's Router.

The Router holds the fleet: one model group per spec in the chain (the primary, then each
fallback), one deployment per endpoint, the routing strategy, per-deployment rpm/tpm weights,
cooldowns and the fallback order. Two ways to use it:

* ``transport: auto`` / ``aiohttp`` (default): the Router *picks* (``Router.select``: strategy
  and cooldowns) and judgekit's Sender makes the call on its fast transport; a failed call is
  reported back (``Router.health().record_failure``), so a failing endpoint is cooled down and
  the next picks avoid it. Each attempt walks the chain in order and uses the first group with
  a deployment available; on the last attempt a failure falls through to the next group.
  Judgekit's own limiter enforces each endpoint's in-flight, rpm and tpm limits.
* ``transport: litellm``: the whole call goes through ``Router.acompletion`` (its fallbacks,
  cooldowns and rpm/tpm accounting, every routing strategy), at litellm's per-call cost.
"""

from __future__ import annotations

from typing import Any

from judgekit.llm.backends import Sender
from judgekit.llm.endpoint import Completion, Endpoint, litellm_route, make_endpoint
from judgekit.llm.errors import EndpointError
from judgekit.llm.limits import EndpointLimiter
from judgekit.llm.outcome import raise_provider_error
from judgekit.llm.providers.litellm import (
    completion_of,
    endpoint_error,
    litellm_kwargs,
    reply_of,
)
from judgekit.llm.retry import CALL, is_transient
from judgekit.llm.spec import ModelSpec
from judgekit.llm.structured import InvalidAnswer, OutputFormat, output_format, with_hint


def chain_of(spec: ModelSpec) -> list[ModelSpec]:
    """The primary spec, then its fallbacks depth-first (a fallback's own fallbacks follow it)."""
    out = [spec]
    for fallback in spec.fallbacks:
        out.extend(chain_of(fallback))
    return out


class RoutedBackend:
    """A spec served by several endpoints through litellm's Router (see the module doc).

    Args:
        spec: the primary spec (its ``deployments`` and ``fallbacks`` form the fleet).
        sender: makes the calls (fast mode).
        api_bases: URL per spec route for endpoints known only at run time (embedded server).
    """

    def __init__(
        self,
        spec: ModelSpec,
        sender: Sender,
        api_bases: dict[str, str] | None = None,
        local_limiters: dict[str, EndpointLimiter] | None = None,
    ) -> None:
        from litellm import Router

        import judgekit.llm  # noqa: F401  (local price map before litellm loads)

        self.spec = spec
        self.sender = sender
        self.full = spec.transport == "litellm"
        self.groups: list[tuple[str, ModelSpec, dict[str, Endpoint]]] = []
        self.endpoints: dict[str, Endpoint] = {}
        model_list: list[dict[str, Any]] = []
        for i, member in enumerate(chain_of(spec)):
            group = f"g{i}:{member.model}"
            endpoints: dict[str, Endpoint] = {}
            for dep in member.endpoints():
                base = (api_bases or {}).get(member.model)
                ep = make_endpoint(member, dep, base, local_limiters, pause=False)
                while ep.id in self.endpoints:
                    ep.id += "'"
                self.endpoints[ep.id] = endpoints[ep.id] = ep
                params: dict[str, Any] = {
                    "model": litellm_route(member),
                    "api_base": ep.api_base,
                    "rpm": dep.rpm,
                    "tpm": dep.tpm,
                    "weight": dep.weight,
                }
                if self.full:
                    params["api_key"] = ep.api_key or "sk-none"
                model_list.append(
                    {
                        "model_name": group,
                        "litellm_params": {k: v for k, v in params.items() if v is not None},
                        "model_info": {"id": ep.id},
                    }
                )
            self.groups.append((group, member, endpoints))
        names = [g for g, _, _ in self.groups]
        self.router = Router(
            model_list=model_list,
            fallbacks=[{names[0]: names[1:]}] if len(names) > 1 else [],
            routing_strategy=spec.routing_strategy,
            cooldown_time=spec.cooldown_time,
            allowed_fails=spec.allowed_fails,
            num_retries=0,
            timeout=spec.timeout,
        )
        ceiling = sum(ep.limiter.ceiling for ep in self.endpoints.values())
        self.limiter = EndpointLimiter(ceiling, adaptive=spec.adaptive_concurrency)

    async def complete(
        self, messages: list[dict[str, Any]], fmt: OutputFormat, last_attempt: bool
    ) -> Completion:
        """One attempt on the first group with a deployment available (see the module doc).

        Raises:
            EndpointError: no deployment of any group is available (all cooling down).
            InvalidAnswer, or the transport's errors: as the Sender raises them.
        """
        if self.full:
            return await self._router_call(messages, fmt)
        error: BaseException | None = None
        for group, member, endpoints in self.groups:
            try:
                picked = await self.router.select(group)
            except Exception as exc:  # every deployment of the group is cooling down
                error = error or EndpointError(
                    f"no deployment of {member.model} available: {type(exc).__name__}",
                    kind="server",
                )
                continue
            ep = endpoints[picked["model_info"]["id"]]
            gfmt = fmt if member is self.spec else output_format(fmt.schema, member.strategy())
            try:
                return await self.sender.send(ep, messages, gfmt)
            except InvalidAnswer:
                raise
            except Exception as exc:
                if not is_transient(exc):
                    raise
                status = getattr(exc, "status_code", None) or 503
                self.router.health().record_failure(ep.id, exc, status)
                error = exc
                if not last_attempt:
                    raise
        assert error is not None
        raise error

    async def _router_call(self, messages: list[dict[str, Any]], fmt: OutputFormat) -> Completion:
        primary = next(iter(self.groups[0][2].values()))
        kwargs = litellm_kwargs(primary, fmt)
        for key in ("api_base", "api_key", "num_retries"):
            kwargs.pop(key, None)
        if fmt.strategy == "tools":
            kwargs.update(fmt.fields)
        await self.limiter.acquire()
        state = CALL.get()
        if state is not None:
            state.sent()
        ok = False
        try:
            response = await self.router.acompletion(
                model=self.groups[0][0], messages=with_hint(messages, fmt), **kwargs
            )
            ok = True
        except Exception as exc:
            raise endpoint_error(exc) from exc
        finally:
            self.limiter.release(ok=ok)
        hidden = getattr(response, "_hidden_params", None) or {}
        ep = self.endpoints.get(str(hidden.get("model_id")), primary)
        reply = reply_of(response)  # content or tool arguments, reasoning, refusal, errors
        raise_provider_error(reply, ep.id)
        return completion_of(response, reply, ep, None)
