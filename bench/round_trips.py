"""Round trips to the database per catalog call: PostgreSQL's wire, and aiosqlite's thread.

PostgreSQL: the database URL is served through a small TCP relay in this process that counts,
per call, the client's turns (the client sends, then waits for the server: one round trip) and
the protocol messages that make them up: ``Q`` a simple query (asyncpg's BEGIN, ROLLBACK, a
ping), ``P`` a prepare (a statement new to the connection), ``B`` a bound statement run.

    # in process, through the host's session path (the REST twin's ToolContext, Operation.call)
    .venv/bin/python bench/round_trips.py --database-url postgresql+asyncpg://campus@127.0.0.1:55432/bench67
    # the same calls over HTTP, through a served campus (campus-mcp serve), MCP and REST
    .venv/bin/python bench/round_trips.py --database-url postgresql+asyncpg://... --http
    # the in-process timings without the relay's hop (no counts)
    .venv/bin/python bench/round_trips.py --database-url postgresql+asyncpg://... --direct
    # SQLite: trips to aiosqlite's thread per call, in process
    .venv/bin/python bench/round_trips.py --database-url sqlite+aiosqlite:////tmp/s67/demo-scale-67.db

Reads only: the shared benchmark databases can be pointed at.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import concurrent.futures
import contextlib
import os
import statistics
import struct
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_sections import served_env

# The questions of bench/search_sections.py that the counts are for (no meaning: its model is
# not the database's business, and its first call loads the vectors).
QUESTIONS: dict[str, dict[str, Any]] = {
    "browse the term": {"limit": 25},
    "one subject": {"subject": "COMP", "limit": 25},
    "days and times": {"days": "TR", "begins_after": "10:00", "ends_before": "15:00", "open_only": True},
    "one instructor": {"instructor": "garcia", "limit": 25},
}
WARMUP_CALLS = 3
# The startup packet and the SSL request have no type byte; every later message has one.
_UNTYPED_CODES = (80877103, 80877104)  # SSLRequest, GSSENCRequest


class WireCount:
    """What the clients of the relay sent while ``label`` names what is being counted: turns and
    messages by type, per label."""

    def __init__(self) -> None:
        self.label: str | None = None
        self.turns: collections.Counter[str] = collections.Counter()
        self.messages: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)

    def add(self, kinds: list[str], *, turn: bool) -> None:
        if self.label is None:
            return
        self.messages[self.label].update(kinds)
        if turn:
            self.turns[self.label] += 1


class _ClientStream:
    """Splits what a client sends into PostgreSQL frontend messages (only their types are kept)."""

    def __init__(self) -> None:
        self.buffer = b""
        self.started = False

    def feed(self, data: bytes) -> list[str]:
        self.buffer += data
        found: list[str] = []
        while True:
            if not self.started:
                if len(self.buffer) < 8:
                    return found
                (length,) = struct.unpack("!i", self.buffer[:4])
                (code,) = struct.unpack("!i", self.buffer[4:8])
                if len(self.buffer) < length:
                    return found
                self.buffer = self.buffer[length:]
                self.started = code not in _UNTYPED_CODES
                continue
            if len(self.buffer) < 5:
                return found
            (length,) = struct.unpack("!i", self.buffer[1:5])
            if len(self.buffer) < 1 + length:
                return found
            found.append(chr(self.buffer[0]))
            self.buffer = self.buffer[1 + length :]


@contextlib.asynccontextmanager
async def relay(host: str, port: int, count: WireCount) -> AsyncIterator[int]:
    """A TCP relay to ``host:port`` on a free local port (yielded) that counts into ``count``."""

    async def pipe(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, on_data: Callable[[bytes], None]
    ) -> None:
        try:
            while data := await reader.read(65536):
                on_data(data)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def connected(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection(host, port)
        stream = _ClientStream()
        waiting = [False]  # the client has sent and not yet heard back

        def from_client(data: bytes) -> None:
            count.add(stream.feed(data), turn=not waiting[0])
            waiting[0] = True

        def from_server(_data: bytes) -> None:
            waiting[0] = False

        await asyncio.gather(
            pipe(client_reader, server_writer, from_client), pipe(server_reader, client_writer, from_server)
        )

    server = await asyncio.start_server(connected, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


@contextlib.contextmanager
def relay_in_thread(host: str, port: int, count: WireCount) -> Iterator[int]:
    """:func:`relay` on an event loop of its own thread: a served campus is waited for with
    blocking calls (bench/search_sections.py's ``serve``), which would stop a relay on this loop."""
    loop = asyncio.new_event_loop()
    ready: concurrent.futures.Future[int] = concurrent.futures.Future()
    stop = asyncio.Event()

    async def run() -> None:
        async with relay(host, port, count) as local_port:
            ready.set_result(local_port)
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(run(),), daemon=True)
    thread.start()
    try:
        yield ready.result(timeout=10)
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=10)


@contextlib.contextmanager
def sqlite_trips(count: WireCount) -> Iterator[None]:
    """Counts each function aiosqlite runs in its connection's thread (its ``_execute``; the
    host's one-trip adapter and the stock one both go through it) as one turn."""
    import aiosqlite

    real = aiosqlite.Connection._execute

    async def counted(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        count.add([getattr(fn, "__name__", "call")], turn=True)
        return await real(self, fn, *args, **kwargs)

    aiosqlite.Connection._execute = counted  # type: ignore[method-assign]
    try:
        yield
    finally:
        aiosqlite.Connection._execute = real  # type: ignore[method-assign]


def campus_environment(url: str) -> dict[str, str]:
    env = served_env()
    env.update(
        {
            "CAMPUS_MCP_DATABASE_URL": url,
            "CAMPUS_MCP_PLUGINS": "catalog",
            "CAMPUS_MCP_ANONYMOUS_ACCESS": "true",
            "CAMPUS_MCP_SCHEDULER": "false",
            "CAMPUS_MCP_CONFIG": "/nonexistent/campus-mcp.toml",
            "CAMPUS_MCP_CATALOG_ANSWER_CACHE_ENTRIES": "0",
            "CAMPUS_MCP_RATE_LIMIT_OVERRIDES": "api/address=10000000,catalog/semantic=10000000",
        }
    )
    return env


def report(label: str, count: WireCount, calls: int, times: list[float]) -> None:
    kinds = " ".join(f"{kind}={n / calls:g}" for kind, n in sorted(count.messages[label].items())) or "-"
    trips = f"{count.turns[label] / calls:g}" if label in count.turns else "- (not relayed)"
    print(f"| {label} | {trips} | {kinds} | {statistics.median(times):.1f} |")


async def measured(count: WireCount, label: str, times: dict[str, list[float]], call: Callable[[], Any]) -> None:
    count.label = label
    started = time.perf_counter()
    try:
        await call()
    finally:
        times[label].append((time.perf_counter() - started) * 1000)
        count.label = None


async def in_process(url: str, calls: int, count: WireCount) -> None:
    """``search_sections``'s query as the catalog's ``one_call`` runs it, in a session of the
    deployment's (a transaction: what every catalog call ran until the fifth round) and in a
    read-only one (``ToolContext.session(read_only=True)``), the two kinds of call taking turns,
    so that both see the same load."""
    os.environ.update(campus_environment(url))
    from campus_catalog.operations import BY_NAME
    from campus_catalog.schemas import SectionSearch
    from campus_mcp import Settings
    from campus_mcp.assembly.deployment import open_deployment
    from campus_mcp.plugin.principal import ANONYMOUS
    from campus_mcp.plugin.tool_context import ToolContext

    row = BY_NAME["search_sections"]
    async with open_deployment(Settings(), migrate=False) as deployment:
        context = ToolContext(
            principal=ANONYMOUS,
            settings=deployment.settings,
            sessions=deployment.sessions,
            plugin_settings=deployment.plugin_settings("catalog"),
        )
        for name, arguments in QUESTIONS.items():
            args = SectionSearch.model_validate(arguments)

            async def call(read_only: bool, args: Any = args) -> None:
                async with context.session(read_only=read_only) as session:
                    await row.query(session, args, context.settings, context.plugin_settings)

            for _ in range(WARMUP_CALLS):
                await call(False)
                await call(True)
            times: dict[str, list[float]] = collections.defaultdict(list)
            for _ in range(calls):
                for read_only in (False, True):
                    label = f"{name}, {'read-only session' if read_only else 'transaction'}"
                    await measured(count, label, times, lambda read_only=read_only: call(read_only))
            for label, found in times.items():
                report(label, count, calls, found)


async def over_http(url: str, calls: int, count: WireCount, work: Path) -> None:
    """The same questions to a served campus (bench/search_sections.py's server), by MCP and by
    REST: what the server's catalog calls cost as it runs them."""
    sys.path.insert(0, str(Path(__file__).parent))
    from mcp import Client
    from search_sections import serve  # type: ignore[import-not-found]

    with serve(work / "round-trips.db", work / "round-trips-serve.log", url) as mcp_url:
        base = mcp_url.removesuffix("/api/mcp")
        async with Client(mcp_url, mode="legacy") as client, httpx.AsyncClient(base_url=base) as rest:

            async def by_mcp(arguments: dict[str, Any]) -> None:
                result = await client.call_tool("search_sections", arguments)
                if result.is_error:
                    raise SystemExit(f"search_sections {arguments}: {result.content}")

            async def by_rest(arguments: dict[str, Any]) -> None:
                (await rest.get("/api/v1/catalog/sections", params=arguments)).raise_for_status()

            for name, arguments in QUESTIONS.items():
                for _ in range(WARMUP_CALLS):
                    await by_mcp(arguments)
                    await by_rest(arguments)
                times: dict[str, list[float]] = collections.defaultdict(list)
                for _ in range(calls):
                    await measured(count, f"{name}, /api/mcp", times, lambda arguments=arguments: by_mcp(arguments))
                    await measured(count, f"{name}, REST", times, lambda arguments=arguments: by_rest(arguments))
                for label, found in times.items():
                    report(label, count, calls, found)


async def main_async(options: argparse.Namespace) -> None:
    url: str = options.database_url
    count = WireCount()
    print(os.getloadavg(), "load average at start")
    header = "| search_sections | round trips per call | messages per call | p50 ms (through the relay) |"
    if url.startswith("sqlite"):
        with sqlite_trips(count):
            print(header.replace("round trips", "trips to aiosqlite's thread").replace("through the relay", "counted"))
            print("| --- | --- | --- | --- |")
            await in_process(url, options.calls, count)
        return
    if options.direct:
        # Timings without the relay in between (its hop adds to every round trip): no counts.
        print(header.replace("through the relay", "direct") + "\n| --- | --- | --- | --- |")
        await in_process(url, options.calls, count)
        print(os.getloadavg(), "load average at end")
        return
    from sqlalchemy.engine import make_url

    target = make_url(url)
    host, port = target.host or "127.0.0.1", target.port or 5432
    print(header + "\n| --- | --- | --- | --- |")
    if options.http:
        options.work.mkdir(parents=True, exist_ok=True)
        with relay_in_thread(host, port, count) as local_port:
            relayed = target.set(host="127.0.0.1", port=local_port).render_as_string(hide_password=False)
            await over_http(relayed, options.calls, count, options.work)
    else:
        async with relay(host, port, count) as local_port:
            relayed = target.set(host="127.0.0.1", port=local_port).render_as_string(hide_password=False)
            await in_process(relayed, options.calls, count)
    print(os.getloadavg(), "load average at end")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", required=True, help="The campus to read (PostgreSQL or SQLite).")
    parser.add_argument("--calls", type=int, default=20, help="Counted calls per question.")
    parser.add_argument("--http", action="store_true", help="Through a served campus instead of in process.")
    parser.add_argument("--direct", action="store_true", help="In process, timed without the relay (no counts).")
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="Folder for the server's log.")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
