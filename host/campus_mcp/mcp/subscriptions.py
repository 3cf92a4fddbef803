"""``subscriptions/listen`` (2026-07-28): a student hears when a section or their schedule changes.

The SDK's ``ListenHandler`` serves each stream (the acknowledgment first, every frame stamped with
the subscription id, only the kinds asked for); this module decides what a stream may hear and for
how long, before handing it one:

- every URI must be a resource of the endpoint, and a private one (``campus://me/schedule/...``)
  needs the tool's scope, as a read of it would; the error says which URI and what to do;
- a resource built from public ones hears theirs (``ResourceTemplate.follows``): the schedule of a
  term hears the sections on it, and the student gets ``notifications/resources/updated`` for their
  own schedule URI. Nothing private crosses the bus: it carries section URIs only;
- bounded: at most ``listen_streams_per_student`` open streams per student (per address for an
  anonymous caller) in each worker, ``listen_uris_per_stream`` URIs each, and each stream closed
  gracefully (the listen result, so the client knows to listen again) after
  ``listen_max_seconds``. Keep-alives are the SDK's: an SSE comment every 15 seconds on a quiet
  stream, so a proxy's idle timeout does not cut it.

A stream does not survive its worker: the client sees it drop, listens again and reads again (the
protocol has no replay), which also picks up a schedule changed since the stream began.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, ServerEvent, SubscriptionBus
from mcp.shared.exceptions import MCPError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.assembly.registry import Registry
from campus_mcp.mcp.resources import CampusResources, followed_uris, read_error
from campus_mcp.plugin import offers
from campus_mcp.plugin.errors import CampusError, PermissionMissing
from campus_mcp.plugin.principal import Principal, current_principal
from campus_mcp.plugin.tool_context import ToolContext


class ResourceServer(Protocol):
    """What a listen handler uses of the server it serves (:class:`campus_mcp.mcp.server.CampusServer`)."""

    @property
    def registry(self) -> Registry: ...

    @property
    def resources(self) -> CampusResources: ...

    @property
    def offers(self) -> offers.Offers: ...

    @property
    def sessions(self) -> async_sessionmaker[AsyncSession]: ...

    def tool_context(
        self, ctx: ServerRequestContext[Any, Any] | None, principal: Principal, plugin: str = ""
    ) -> ToolContext: ...


log = logging.getLogger(__name__)

# Events a stream may have waiting before it is ended (a client that stopped reading).
BUFFERED_EVENTS = 64
# The shortest wait between two rounds of offer checks on a listen stream.
MIN_OFFER_WAIT_SECONDS = 0.05
# Open streams by student, per deployment (its registry) in this process: one count for all the
# endpoints, so a student cannot open the limit on each of /api/mcp, /api/mcp/toolboxes ...
_open_streams: dict[int, collections.Counter[str]] = {}


class FollowingBus:
    """One stream's view of the bus: a change to a followed URI arrives as the URI the client
    asked for (``campus://sections/202710/40213`` as ``campus://me/schedule/202710``)."""

    def __init__(self, bus: SubscriptionBus, routes: Mapping[str, frozenset[str]]) -> None:
        self.bus = bus
        self.routes = routes

    async def publish(self, event: ServerEvent) -> None:
        await self.bus.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        def routed(event: ServerEvent) -> None:
            if not isinstance(event, ResourceUpdated):
                listener(event)
                return
            for asked in sorted(self.routes.get(event.uri, ())):
                listener(ResourceUpdated(uri=asked))

        return self.bus.subscribe(routed)


def _listener_key(ctx: ServerRequestContext[Any, Any], principal: Principal) -> str:
    if principal.user_id is not None:
        return f"student:{principal.user_id}"
    client = getattr(ctx.request, "client", None)
    return f"address:{getattr(client, 'host', None) or 'unknown'}"


class CampusListen:
    """The ``subscriptions/listen`` handler of one endpoint (one per :class:`CampusServer`)."""

    def __init__(self, server: ResourceServer, bus: SubscriptionBus) -> None:
        settings = server.registry.settings
        self.server = server
        self.bus = bus
        self.streams_per_student = settings.listen_streams_per_student
        self.uris_per_stream = settings.listen_uris_per_stream
        self.lifetime_seconds = float(settings.listen_max_seconds)
        self.open = _open_streams.setdefault(id(server.registry), collections.Counter())

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        principal = current_principal.get()
        routes = await self._routes(ctx, principal, list(params.notifications.resource_subscriptions or ()))
        key = _listener_key(ctx, principal)
        if self.open[key] >= self.streams_per_student:
            raise MCPError(
                types.INVALID_REQUEST,
                f"You already have {self.open[key]} listen streams open, the most this server keeps for one "
                "student. Close one (or listen to several resources on one stream) and listen again.",
            )
        self.open[key] += 1
        handler = ListenHandler(
            FollowingBus(self.bus, routes), max_subscriptions=1, max_buffered_events=BUFFERED_EVENTS
        )
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._close_after, handler)
                wanted = params.notifications
                if self.server.offers.checked and (wanted.tools_list_changed or wanted.prompts_list_changed):
                    group.start_soon(self._watch_offers)
                result = await handler(ctx, params)
                group.cancel_scope.cancel()
            return result
        finally:
            self.open[key] -= 1
            if self.open[key] <= 0:
                del self.open[key]

    async def _watch_offers(self) -> None:
        # Data that arrives from another process (an import) changes no state here: while a client
        # listens for list changes, ask the offer checks again as often as they may change, so it
        # hears tools/list_changed (campus_mcp.plugin.offers) without listing first.
        while True:
            await anyio.sleep(max(offers.RECHECK_SECONDS, MIN_OFFER_WAIT_SECONDS))
            try:
                await self.server.offers.refresh(self.server.sessions)
            except Exception:  # a database gone for a moment: the next round asks again
                log.warning("the offer checks failed; asking again in %s s", offers.RECHECK_SECONDS, exc_info=True)

    async def _close_after(self, handler: ListenHandler) -> None:
        # The graceful end: the client gets the listen result and knows to listen again.
        await anyio.sleep(self.lifetime_seconds)
        handler.close()

    async def _routes(
        self, ctx: ServerRequestContext[Any, Any], principal: Principal, wanted: list[str]
    ) -> dict[str, frozenset[str]]:
        """Published URI -> the asked URIs it changes, after checking every asked URI."""
        if len(wanted) > self.uris_per_stream:
            raise MCPError(
                types.INVALID_PARAMS,
                f"A listen stream takes at most {self.uris_per_stream} resources; this one asked for {len(wanted)}. "
                "Listen to fewer (a student's schedule follows all of its sections at once).",
            )
        resources = self.server.resources
        routes: dict[str, set[str]] = collections.defaultdict(set)
        for uri in wanted:
            found = resources.find(uri)
            if found is None:
                raise resources.unknown(uri)
            try:
                resources.may_follow(found, principal)
                context = self.server.tool_context(ctx, principal, found.served.tool.plugin)
                for followed in await followed_uris(found, context):
                    routes[followed].add(uri)
            except PermissionMissing as exc:
                raise MCPError(types.INVALID_PARAMS, f"Cannot listen to {uri}: {exc.message}") from None
            except CampusError as exc:
                raise read_error(exc, found.arguments) from None
        return {published: frozenset(asked) for published, asked in routes.items()}
