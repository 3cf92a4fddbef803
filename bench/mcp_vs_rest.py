"""Requests per second and latency of the same catalog question through ``/api/mcp`` (both wires),
its REST twin, and a FastMCP server calling the same query function on the same database.

One command, one run:

    .venv/bin/python bench/mcp_vs_rest.py                 # demo campus, 5 s per row, 8 connections
    .venv/bin/python bench/mcp_vs_rest.py --scale 67      # a 100,000-section campus (built once)
    .venv/bin/python bench/mcp_vs_rest.py --database-url postgresql+asyncpg://campus@127.0.0.1:55432/bench

It builds a SQLite demo campus (``campus-mcp demo --scale N``, skipped when the database exists;
with ``--database-url``, in that database, created when missing and skipped when it has sections),
makes a virtualenv with FastMCP (pinned, ``FASTMCP_VERSION``) under the work folder the first
time, and then, for the answer cache off ("cold": every call runs the query) and on ("warm"),
starts ``campus-mcp serve`` (one uvicorn worker, anonymous access, no scheduler) and loads it
from this process: an httpx client with N connections, each sending the next request when the
last answer came back, for a fixed time per row. Every request is checked (HTTP 200, no
JSON-RPC or tool error). FastMCP is measured once (it has no answer cache).

Before the HTTP rows it times the query functions in this process (no HTTP, no MCP), the
figures of issue 16's first goal. Not a test: the figures go into the README and
docs/search-and-benchmarks.md. There is no ``wrk`` on the project's machines; the load
generator shares the 2 cores with the server, so the requests/s are lower than a separate load
machine would see, the same for every path.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_sections import build_campus, campus_env, command, free_port, new_questions

FASTMCP_VERSION = "4.1.6"
ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 300
WIRES = ("2025-11-25", "2026-07-28")

# The question of issue 16's table, then the kinds of bench/search_sections.py (in process).
SUBJECT_PAGE = {"subject": "COMP", "limit": 25}
SEARCH_KINDS: dict[str, dict[str, Any]] = {
    "browse": {"limit": 25},
    "subject": SUBJECT_PAGE,
    "title words": {"q": "introduction programming", "limit": 25},
    "days and times": {"days": "TR", "begins_after": "10:00", "ends_before": "15:00", "open_only": True},
    "meaning": {"q": "a class about the stock market", "semantic": True, "limit": 10},
}


@dataclass(frozen=True)
class Question:
    tool: str
    arguments: dict[str, Any]
    rest: str  # path and query of the REST twin


def questions(crns: list[str], course: str) -> list[Question]:
    """The tools of issue 16's goals, with arguments that exist on the campus measured."""
    return [
        Question("search_sections", SUBJECT_PAGE, "/api/v1/catalog/sections?" + urlencode(SUBJECT_PAGE)),
        Question("get_section", {"crn": crns[0]}, f"/api/v1/catalog/sections/{crns[0]}"),
        Question("get_course", {"code": course}, "/api/v1/catalog/courses/" + course.replace(" ", "%20")),
        Question(
            "search_reviews",
            {"course": course, "limit": 10},
            "/api/v1/catalog/reviews?" + urlencode({"course": course}),
        ),
        Question(
            "check_schedule",
            {"crns": crns[:3]},
            "/api/v1/catalog/schedule_check?" + urlencode([("crns", c) for c in crns[:3]]),
        ),
    ]


# -- the servers ---------------------------------------------------------------------------


def wait_until_up(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}; see {log}")
        with contextlib.suppress(httpx.TransportError):
            httpx.get(url, timeout=2)
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"the server did not answer in {START_TIMEOUT_S}s; see {log}")
        time.sleep(0.3)


@contextlib.contextmanager
def running(args: list[str], env: dict[str, str], probe: str, log: Path) -> Iterator[None]:
    with log.open("wb") as out:
        process = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_until_up(process, probe, log)
            yield
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def target_env(database: Path, url: str | None) -> dict[str, str]:
    """The environment of a campus process: the SQLite file, or the ``--database-url``."""
    env: dict[str, str] = campus_env(database)
    if url:
        env["CAMPUS_MCP_DATABASE_URL"] = url
    return env


def build_target(database: Path, url: str | None, scale: int) -> float | None:
    """``build_campus`` for either target; on a server database, created when missing and built
    when it has no sections yet."""
    if not url:
        seconds: float | None = build_campus(database, scale)
        return seconds
    from sqlalchemy import make_url, text
    from sqlalchemy.ext.asyncio import create_async_engine

    async def has_sections() -> bool:
        name = make_url(url).database
        server = create_async_engine(make_url(url).set(database="postgres"), isolation_level="AUTOCOMMIT")
        async with server.connect() as connection:
            exists = await connection.scalar(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name})
            if not exists:
                await connection.execute(text(f'CREATE DATABASE "{name}"'))
        await server.dispose()
        engine = create_async_engine(url)
        try:
            async with engine.connect() as connection:
                return bool(await connection.scalar(text("SELECT count(*) FROM catalog_sections")))
        except Exception:  # no tables yet
            return False
        finally:
            await engine.dispose()

    if asyncio.run(has_sections()):
        return None
    started = time.perf_counter()
    subprocess.run(
        [command("campus-mcp"), "demo", "--scale", str(scale)],
        env=target_env(database, url),
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def campus_server(env: dict[str, str], port: int, log: Path, *, cache: bool) -> contextlib.AbstractContextManager[None]:
    env = dict(env)
    env["CAMPUS_MCP_CATALOG_ANSWER_CACHE_ENTRIES"] = "2048" if cache else "0"
    # The limits still count every request (their cost is measured), at numbers the load never reaches.
    env["CAMPUS_MCP_RATE_LIMIT_OVERRIDES"] = "api/address=10000000,catalog/semantic=10000000"
    args = [command("campus-mcp"), "serve", "--host", "127.0.0.1", "--port", str(port), "--no-prepare"]
    return running(args, env, f"http://127.0.0.1:{port}/healthz", log)


def fastmcp_python(venv: Path) -> Path:
    """The FastMCP virtualenv's Python, made on first use: FastMCP pinned, the campus packages
    (this virtualenv's, editable) on its path after its own, so both use one copy of the query."""
    python = venv / "bin" / "python"
    check = [str(python), "-c", f"import fastmcp, sys; sys.exit(fastmcp.__version__ != {FASTMCP_VERSION!r})"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    print(f"installing fastmcp=={FASTMCP_VERSION} into {venv} (once)")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "-c",
            str(ROOT / "constraints.txt"),
            f"fastmcp=={FASTMCP_VERSION}",
        ],
        check=True,
    )
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    campus = sysconfig.get_paths()["purelib"]
    (Path(own) / "zz_campus_mcp.pth").write_text(f"import site; site.addsitedir({campus!r})\n")
    return python


def fastmcp_server(python: Path, env: dict[str, str], port: int, log: Path) -> contextlib.AbstractContextManager[None]:
    args = [str(python), str(ROOT / "bench" / "fastmcp_twin.py"), "--port", str(port)]
    return running(args, env, f"http://127.0.0.1:{port}/mcp", log)


# -- the load ------------------------------------------------------------------------------


def mcp_request(question: Question, wire: str) -> tuple[dict[str, str], bytes]:
    """The request an MCP client sends for one tools/call on ``wire``, as the SDK sends it."""
    params: dict[str, Any] = {"name": question.tool, "arguments": question.arguments}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": wire,
    }
    if wire >= "2026-07-28":
        # The 2026 wire carries its envelope in each request instead of an initialize.
        headers.update({"mcp-method": "tools/call", "mcp-name": question.tool})
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": wire,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return headers, json.dumps(body).encode()


def check_mcp(response: httpx.Response) -> None:
    if response.status_code != 200:
        raise SystemExit(f"HTTP {response.status_code}: {response.text[:300]}")
    answer = response.json()
    if "error" in answer or answer["result"].get("isError"):
        raise SystemExit(f"the call failed: {response.text[:300]}")


def check_rest(response: httpx.Response) -> None:
    if response.status_code != 200:
        raise SystemExit(f"HTTP {response.status_code}: {response.text[:300]}")


@dataclass
class Row:
    path: str
    tool: str
    cache: str
    requests_per_s: float
    p50: float
    p95: float
    answer_bytes: int


async def load(
    name: str, tool: str, cache: str, send: Any, check: Any, seconds: float, connections: int, warmup: int
) -> Row:
    """``connections`` clients, each sending the next request as soon as its answer is in."""
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        size = 0
        for _ in range(warmup):
            response = await send(client)
            check(response)
            size = len(response.content)
        latencies: list[float] = []
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                response = await send(client)
                latencies.append((time.perf_counter() - started) * 1000)
                check(response)

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        elapsed = time.perf_counter() - began
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return Row(name, tool, cache, len(latencies) / elapsed, cuts[49], cuts[94], size)


async def measure_campus(origin: str, asked: list[Question], cache: str, seconds: float, connections: int) -> list[Row]:
    rows: list[Row] = []
    for question in asked:
        for wire in WIRES:
            headers, body = mcp_request(question, wire)

            async def send_mcp(client: httpx.AsyncClient, headers: dict[str, str] = headers, body: bytes = body) -> Any:
                return await client.post(f"{origin}/api/mcp", content=body, headers=headers)

            rows.append(
                await load(f"/api/mcp {wire}", question.tool, cache, send_mcp, check_mcp, seconds, connections, 10)
            )
        rest_url = origin + question.rest

        async def send_rest(client: httpx.AsyncClient, url: str = rest_url) -> Any:
            return await client.get(url)

        rows.append(await load("REST twin", question.tool, cache, send_rest, check_rest, seconds, connections, 10))
        for row in rows[-3:]:
            print(
                f"  {cache:4s} {row.tool:16s} {row.path:22s} {row.requests_per_s:7.1f} req/s  p50 {row.p50:6.1f}  p95 {row.p95:6.1f} ms"
            )
    return rows


async def measure_fastmcp(origin: str, seconds: float, connections: int) -> list[Row]:
    rows = []
    question = Question("search_sections", SUBJECT_PAGE, "")
    for wire in WIRES:
        headers, body = mcp_request(question, wire)

        async def send(client: httpx.AsyncClient, headers: dict[str, str] = headers, body: bytes = body) -> Any:
            return await client.post(f"{origin}/mcp", content=body, headers=headers)

        row = await load(f"FastMCP {wire}", question.tool, "-", send, check_mcp, seconds, connections, 10)
        print(f"  FastMCP {wire}: {row.requests_per_s:7.1f} req/s  p50 {row.p50:6.1f}  p95 {row.p95:6.1f} ms")
        rows.append(row)
    return rows


async def campus_samples(origin: str) -> tuple[list[str], str]:
    """CRNs and a course code to ask about: the first sections of the subject page."""
    async with httpx.AsyncClient(timeout=60) as client:
        page = (await client.get(f"{origin}/api/v1/catalog/sections", params=SUBJECT_PAGE)).json()
    crns = [s["crn"] for s in page["sections"] if not s["cancelled"]]
    return crns, page["sections"][0]["course_code"]


# -- in process ----------------------------------------------------------------------------


async def in_process(env: dict[str, str], runs: int) -> dict[str, tuple[float, float]]:
    """p50 and p95 (ms) of ``sections.search_sections`` alone, per kind of question."""
    os.environ.update(env)
    from campus_catalog.catalog_settings import CatalogSettings
    from campus_catalog.queries import sections
    from campus_catalog.schemas import SectionSearch
    from campus_mcp import Settings
    from campus_mcp.db import make_engine, make_sessions

    settings = Settings()
    engine = make_engine(settings.database_url)
    sessions = make_sessions(engine)
    figures: dict[str, tuple[float, float]] = {}
    kinds = {f"{name}, a repeated question" if name == "meaning" else name: a for name, a in SEARCH_KINDS.items()}
    for name, arguments in [*kinds.items(), ("meaning, a new question each call", SEARCH_KINDS["meaning"])]:
        # The server keeps recent questions' vectors: a question never asked before embeds its words.
        unasked = new_questions()
        times: list[float] = []
        for _ in range(runs + 5):
            asked = {**arguments, "q": next(unasked)} if name.endswith("new question each call") else arguments
            query = SectionSearch.model_validate(asked)
            started = time.perf_counter()
            async with sessions() as session:
                await sections.search_sections(session, query, settings, CatalogSettings())
            times.append((time.perf_counter() - started) * 1000)
        cuts = statistics.quantiles(times[5:], n=100, method="inclusive")
        figures[name] = (cuts[49], cuts[94])
    await engine.dispose()
    return figures


# -- the report ----------------------------------------------------------------------------


def report(rows: list[Row], inproc: dict[str, tuple[float, float]], scale: int, options: argparse.Namespace) -> None:
    print(f"\n{date.today()} · {platform.node() or 'this machine'} · {os.cpu_count()} cores · scale {scale}")
    engine = "PostgreSQL (asyncpg)" if options.database_url else "SQLite (aiosqlite)"
    loads = (options.load_at_start, os.getloadavg())
    print(
        "load average (1, 5, 15 min) at start {} and at end {}".format(
            *(" ".join(f"{x:.1f}" for x in la) for la in loads)
        )
    )
    print(f"{options.connections} connections, {options.seconds:g} s per row, {engine}, one uvicorn worker\n")
    print("In process, sections.search_sections alone (ms):")
    print("| question | p50 | p95 |\n| --- | --- | --- |")
    for name, (p50, p95) in inproc.items():
        print(f"| {name} | {p50:.1f} | {p95:.1f} |")
    print("\nOver HTTP:")
    print("| tool | path | answer cache | requests/s | p50 ms | p95 ms | bytes |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(
            f"| {row.tool} | {row.path} | {row.cache} | {row.requests_per_s:.1f} | {row.p50:.1f} | {row.p95:.1f} "
            f"| {row.answer_bytes:,} |"
        )

    def rate(path: str, tool: str = "search_sections", cache: str = "cold") -> float:
        found = [r.requests_per_s for r in rows if r.path == path and r.tool == tool and r.cache in (cache, "-")]
        return found[0] if found else float("nan")

    print("\nRatios of requests/s (goal: MCP >= 0.8x REST and >= 1.5x FastMCP; other tools within 2x):")
    for cache in ("cold", "warm"):
        for wire in WIRES:
            mcp = rate(f"/api/mcp {wire}", cache=cache)
            line = f"  {cache}, {wire}: MCP/REST {mcp / rate('REST twin', cache=cache):.2f}x"
            if not options.skip_fastmcp:
                line += f", MCP/FastMCP {mcp / rate(f'FastMCP {wire}'):.2f}x"
            print(line)
    for tool in ("get_section", "get_course", "search_reviews", "check_schedule"):
        search = rate(f"/api/mcp {WIRES[0]}")
        print(f"  cold, {WIRES[0]}: search_sections/{tool} {search / rate(f'/api/mcp {WIRES[0]}', tool):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=1, help="Demo scale (67: about 100,000 sections).")
    parser.add_argument("--seconds", type=float, default=5.0, help="Measured seconds per row.")
    parser.add_argument("--connections", type=int, default=8, help="Concurrent connections of the load.")
    parser.add_argument("--runs", type=int, default=50, help="In-process runs per kind of question.")
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="Folder for databases, logs, venv.")
    parser.add_argument("--skip-fastmcp", action="store_true", help="Do not install or measure FastMCP.")
    parser.add_argument(
        "--database-url", help="Serve this database (PostgreSQL: created if missing) instead of a SQLite file."
    )
    options = parser.parse_args()
    options.load_at_start = os.getloadavg()
    work = options.work.resolve()
    database = work / f"demo-scale-{options.scale}.db"
    env = target_env(database, options.database_url)
    built = build_target(database, options.database_url, options.scale)
    print(f"scale {options.scale}: " + (f"demo loaded in {built:.0f} s" if built is not None else "existing database"))
    python = None if options.skip_fastmcp else fastmcp_python(work / "fastmcp-venv")

    inproc = asyncio.run(in_process(env, options.runs))
    rows: list[Row] = []
    asked: list[Question] = []
    for cache in ("cold", "warm"):
        port = free_port()
        with campus_server(env, port, work / f"mcp-vs-rest-{cache}.log", cache=cache == "warm"):
            origin = f"http://127.0.0.1:{port}"
            if not asked:
                asked = questions(*asyncio.run(campus_samples(origin)))
            rows += asyncio.run(measure_campus(origin, asked, cache, options.seconds, options.connections))
    if python is not None:
        port = free_port()
        with fastmcp_server(python, env, port, work / "fastmcp.log"):
            rows += asyncio.run(measure_fastmcp(f"http://127.0.0.1:{port}", options.seconds, options.connections))
    report(rows, inproc, options.scale, options)


if __name__ == "__main__":
    main()
