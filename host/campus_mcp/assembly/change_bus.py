"""Where a change to a ``campus://`` resource is published, and how it reaches every worker.

The listen streams (campus_mcp.mcp.subscriptions) hear changes on the process's bus, the MCP SDK's
pluggable ``SubscriptionBus``. A job or an importer publishes with :func:`publish_changes`:

- with ``CAMPUS_MCP_REDIS_URL`` set, :class:`RedisSubscriptionBus` publishes on a Redis channel,
  and each server process's relay (:meth:`RedisSubscriptionBus.relay`, run in the app's lifespan)
  hands what arrives to the streams open in that process, so a seat refresh run by one worker (or
  by ``campus-mcp worker``) reaches a student listening on another;
- without it, the SDK's ``InMemorySubscriptionBus``: the streams of this process only (one
  ``campus-mcp serve`` running the scheduler itself).

Only the URI crosses Redis, never who is listening or any answer: a reader reads the resource again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any

from campus_mcp.base.redis_client import redis_client
from campus_mcp.base.settings import Settings

if TYPE_CHECKING:
    # The SDK is imported where a bus is made, not here: a plugin's module that publishes is
    # imported by CLI commands too, which must start without the MCP SDK (tests/cli/test_cli_startup.py).
    from mcp.server.subscriptions import ServerEvent, SubscriptionBus

log = logging.getLogger(__name__)

CHANNEL = "campus-mcp:resource-changes"
# A Redis that does not answer costs a publishing job this long, never a hang.
REDIS_TIMEOUT_SECONDS = 2.0
# How long the relay waits before it subscribes again after losing Redis.
RELAY_RETRY_SECONDS = 1.0


class RedisSubscriptionBus:
    """A ``SubscriptionBus`` across processes: ``publish`` goes to Redis, ``subscribe`` is local,
    and :meth:`relay` brings Redis's messages to the local listeners."""

    def __init__(self, url: str) -> None:
        from mcp.server.subscriptions import InMemorySubscriptionBus

        self.url = url
        self.local = InMemorySubscriptionBus()

    async def publish(self, event: ServerEvent) -> None:
        from mcp.server.subscriptions import ResourceUpdated

        if not isinstance(event, ResourceUpdated):
            await self.local.publish(event)  # list changes follow a deploy, which every worker sees
            return
        await self.publish_uris([event.uri])

    async def publish_uris(self, uris: Iterable[str]) -> None:
        """One change message per URI, in one round trip."""

        # A client per batch: jobs publish once per run, from any event loop (a test's, the worker's).
        client = redis_client(self.url, timeout_seconds=REDIS_TIMEOUT_SECONDS)
        try:
            async with client.pipeline(transaction=False) as pipe:
                for uri in uris:
                    pipe.publish(CHANNEL, json.dumps({"uri": uri}))
                await pipe.execute()
        finally:
            await client.aclose()

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        return self.local.subscribe(listener)

    @contextlib.asynccontextmanager
    async def relay(self) -> AsyncIterator[None]:
        """Hand the changes published on Redis to this process's listeners until the block ends."""
        task = asyncio.create_task(self._relay_forever())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _relay_forever(self) -> None:
        from mcp.server.subscriptions import ResourceUpdated

        while True:
            # No read timeout here: the relay waits for messages as long as the server runs.
            client = redis_client(self.url, timeout_seconds=REDIS_TIMEOUT_SECONDS)
            try:
                pubsub = client.pubsub()
                await pubsub.subscribe(CHANNEL)
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=30.0)
                    if message is None:
                        continue
                    uri = _uri_of(message.get("data"))
                    if uri is not None:
                        await self.local.publish(ResourceUpdated(uri=uri))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # Redis went away: changes are missed until it is back (a reader re-reads anyway).
                log.warning("resource changes: Redis relay lost (%s); subscribing again", type(exc).__name__)
                await asyncio.sleep(RELAY_RETRY_SECONDS)
            finally:
                with contextlib.suppress(Exception):
                    await client.aclose()


def _uri_of(data: Any) -> str | None:
    try:
        decoded = json.loads(data)
    except (TypeError, ValueError):
        return None
    uri = decoded.get("uri") if isinstance(decoded, dict) else None
    return uri if isinstance(uri, str) and uri.startswith("campus://") else None


_buses: dict[str, SubscriptionBus] = {}


def change_bus(settings: Settings) -> SubscriptionBus:
    """This process's bus for ``settings``: Redis's when ``redis_url`` is set, else in process."""
    from mcp.server.subscriptions import InMemorySubscriptionBus

    url = settings.redis_url.get_secret_value()
    if url not in _buses:
        _buses[url] = RedisSubscriptionBus(url) if url else InMemorySubscriptionBus()
    return _buses[url]


async def publish_changes(settings: Settings, uris: Iterable[str]) -> int:
    """Tell the listeners of these resources that they changed; how many were published. A bus
    that fails is logged, never the publisher's failure: the data is stored either way."""
    from mcp.server.subscriptions import ResourceUpdated

    bus = change_bus(settings)
    unique = list(dict.fromkeys(uris))
    try:
        if isinstance(bus, RedisSubscriptionBus):
            await bus.publish_uris(unique)
        else:
            for uri in unique:
                await bus.publish(ResourceUpdated(uri=uri))
    except Exception as exc:
        log.warning("resource changes: could not publish %d change(s) (%s)", len(unique), type(exc).__name__)
        return 0
    return len(unique)
