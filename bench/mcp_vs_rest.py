"""Requests per second and latency of the same catalog question through ``/api/mcp`` (both wires),
its REST twin, and a FastMCP server calling the same query function on the same database.

One command, one run:

    .venv/bin/python bench/mcp_vs_rest.py                 # demo campus, 5 s per row, 8 connections
    .venv/bin/python bench/mcp_vs_rest.py --scale 67      # a 100,000-section campus (built once)
    .venv/bin/python bench/mcp_vs_rest.py --database-url postgresql+asyncpg://campus@127.0.0.1:55432/bench

It builds a SQLite demo campus (``campus-mcp demo --scale N``, skipped when the database exists;
with ``--database-url``, in that database, created when missing and skipped when it has sections),
makes a virtualenv with FastMCP (pinned, ``FASTMCP_VERSION``, and what it needs pinned in
bench/fastmcp-constraints.txt) under the work folder the first time, and starts three servers side
by side: ``campus-mcp serve`` with the answer cache off ("cold": every call runs the query) and on
("warm"), each one uvicorn worker, anonymous access, no scheduler, and the FastMCP twin (it has no
answer cache). It loads them with N connections, each sending the next request when the last
answer came back: with wrk when it is installed (``apt-get install wrk``;
``--load auto``, the default), else with httpx from this process (``--load httpx``). wrk is C and
reads an answer's bytes without parsing them; httpx costs this process CPU per request and per byte
received, on the cores the servers use, and an MCP answer is 17.2 KB (the answer twice, as
``structuredContent`` and as its text) against REST's 7.4 KB: its ratios are lower, most on
PostgreSQL, whose server takes a third share of the cores (MCP/FastMCP 1.33x there against wrk's
1.57x, 2026-12-02).

The rows are interleaved: ``--rounds`` rounds, each giving every row ``--seconds / --rounds``
seconds, each round starting at another row. A row's requests/s is the median of its rounds and its
latencies are those of all rounds (with wrk: the medians of each round's p50 and p95), so a change
of the machine's load during the run falls on every row alike instead of on the rows measured last.
The first answers of a row are checked whole (HTTP 200, JSON, no JSON-RPC or tool error). Under
load, httpx checks every answer by its status and first bytes (a full check when those differ), the
same on each path; wrk counts every answer that is not a 2xx or 3xx, and a row with any is refused.

Before the HTTP rows it times the query functions in this process (no HTTP, no MCP), the
in-process figures. Not a test: the figures go into the README and docs/performance.md. The load generator shares the 2 cores with the servers, so the
requests/s are lower than a separate load machine would see.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_sections import (
    WARM_LINE,
    WARM_TIMEOUT_S,
    build_campus,
    campus_env,
    command,
    demo_is_current,
    free_port,
    new_questions,
    served_env,
    speed_switches,
    stamp_demo,
)

# The version issue 16's table names; bench/fastmcp-constraints.txt pins what it installs with.
FASTMCP_VERSION = "4.2.3"
ROOT = Path(__file__).resolve().parents[1]
FASTMCP_CONSTRAINTS = ROOT / "bench" / "fastmcp-constraints.txt"
START_TIMEOUT_S = 300
WIRES = ("2025-11-25", "2026-07-28")

# The question of issue 16's table, then the kinds of bench/search_sections.py (in process).
SUBJECT_PAGE: dict[str, Any] = {"subject": "COMP", "limit": 25}
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
            # The same page on both paths: REST's default page is 25 reviews.
            "/api/v1/catalog/reviews?" + urlencode({"course": course, "limit": 10}),
        ),
        Question(
            "check_schedule",
            {"crns": crns[:3]},
            "/api/v1/catalog/schedule_check?" + urlencode([("crns", c) for c in crns[:3]]),
        ),
    ]


# -- the servers ---------------------------------------------------------------------------


def wait_until_up(process: subprocess.Popen[bytes], url: str, log: Path, ready: bytes | None) -> None:
    """Until the server answers ``url`` and, with ``ready``, has logged it: a campus server's
    warm-up reads the database after it answers (bench/search_sections.py's WARM_LINE)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}; see {log}")
        with contextlib.suppress(httpx.TransportError):
            httpx.get(url, timeout=2)
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"the server did not answer in {START_TIMEOUT_S}s; see {log}")
        time.sleep(0.3)
    deadline = time.monotonic() + WARM_TIMEOUT_S
    while ready is not None and ready not in log.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            print(f"    (no {ready.decode()!r} in {log} after {WARM_TIMEOUT_S}s: measuring anyway)")
            return
        time.sleep(0.3)


@contextlib.contextmanager
def running(
    args: list[str], env: dict[str, str], probe: str, log: Path, ready: bytes | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        process = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_until_up(process, probe, log, ready)
            yield process
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


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite ``--database-url`` names (relative to the working folder, as the campus
    reads it), or None for a PostgreSQL URL. Anything else is refused with what is served: a
    SQLite URL used to reach the PostgreSQL code, which left an empty file named ``postgres``."""
    from sqlalchemy import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        raise SystemExit(f"--database-url is not a database URL: {url!r}") from None
    if parsed.get_backend_name() == "postgresql":
        if not parsed.database:
            raise SystemExit("--database-url names no database: postgresql+asyncpg://user@host:port/<database>")
        return None
    if parsed.get_backend_name() != "sqlite":
        raise SystemExit(
            f"--database-url serves SQLite or PostgreSQL, not {parsed.get_backend_name()}: "
            "sqlite+aiosqlite:///<file> or postgresql+asyncpg://user@host:port/<database>"
        )
    if parsed.drivername != "sqlite+aiosqlite":
        raise SystemExit(
            f"--database-url: the campus reads SQLite through aiosqlite: sqlite+aiosqlite:///{parsed.database or '<file>'}"
        )
    if not parsed.database or parsed.database == ":memory:" or parsed.database.startswith("file::memory:"):
        # Every server of the run is a process of its own: an in-memory database is one process's.
        raise SystemExit("--database-url: the servers need a SQLite file they all open, not a database in memory")
    return Path(parsed.database)


def sqlite_has_sections(file: Path) -> bool:
    """Whether a SQLite file already holds a catalog (read only, so a missing file stays missing)."""
    import sqlite3

    if not file.exists():
        return False
    with contextlib.closing(sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)) as connection:
        try:
            return bool(connection.execute("SELECT count(*) FROM catalog_sections").fetchone()[0])
        except sqlite3.OperationalError:  # no tables yet
            return False


def load_demo(database: Path, url: str, scale: int) -> float:
    """``campus-mcp demo --scale N`` into ``url``; the seconds it took."""
    started = time.perf_counter()
    subprocess.run(
        [command("campus-mcp"), "demo", "--scale", str(scale)],
        env=target_env(database, url),
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def build_target(database: Path, url: str | None, scale: int) -> float | None:
    """``build_campus`` for either target; with ``url``, that database as given, built when it has no
    sections yet (on PostgreSQL created first when missing)."""
    if not url:
        seconds: float | None = build_campus(database, scale)
        return seconds
    file = sqlite_file(url)
    if file is not None:
        if sqlite_has_sections(file):
            return None
        file.parent.mkdir(parents=True, exist_ok=True)
        return load_demo(database, url, scale)
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
    return load_demo(database, url, scale)


def campus_server(
    env: dict[str, str], port: int, log: Path, *, cache: bool
) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]:
    env = dict(env)
    env["CAMPUS_MCP_CATALOG_ANSWER_CACHE_ENTRIES"] = "2048" if cache else "0"
    # The limits still count every request (their cost is measured), at numbers the load never reaches.
    env["CAMPUS_MCP_RATE_LIMIT_OVERRIDES"] = "api/address=10000000,catalog/semantic=10000000"
    args = [command("campus-mcp"), "serve", "--host", "127.0.0.1", "--port", str(port), "--no-prepare"]
    return running(args, env, f"http://127.0.0.1:{port}/healthz", log, ready=WARM_LINE)


def fastmcp_python(work: Path) -> Path:
    """The Python of the FastMCP virtualenv ``<work>/fastmcp-<version>``, made the first time:
    FastMCP and what it needs pinned (constraints.txt and bench/fastmcp-constraints.txt), the
    campus packages (this virtualenv's, editable) on its path after its own, so both servers run
    one copy of the query.

    A virtualenv there is never emptied or rebuilt: another run may be serving from it. It is
    built beside its place under a lock (a second run waits for the first's build) and moved there
    whole, so one that is there is complete; another version gets another folder."""
    venv = work / f"fastmcp-{FASTMCP_VERSION}"
    python = venv / "bin" / "python"
    work.mkdir(parents=True, exist_ok=True)
    with (work / f"fastmcp-{FASTMCP_VERSION}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not python.exists():
            print(f"installing fastmcp=={FASTMCP_VERSION} into {venv} (once)")
            building = work / f"fastmcp-{FASTMCP_VERSION}.building"
            shutil.rmtree(building, ignore_errors=True)  # a build cut off before its move; nobody runs it
            staged = building / "bin" / "python"
            subprocess.run([sys.executable, "-m", "venv", str(building)], check=True)
            pins = ["-c", str(ROOT / "constraints.txt"), "-c", str(FASTMCP_CONSTRAINTS)]
            subprocess.run(
                [str(staged), "-m", "pip", "install", "--quiet", *pins, f"fastmcp=={FASTMCP_VERSION}"], check=True
            )
            own = subprocess.run(
                [str(staged), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
            campus = sysconfig.get_paths()["purelib"]
            (Path(own) / "zz_campus_mcp.pth").write_text(f"import site; site.addsitedir({campus!r})\n")
            # A virtualenv finds its packages from its own folder (pyvenv.cfg beside bin/), so it
            # works moved; only the scripts pip wrote in bin/ name the old folder, and none is run.
            building.rename(venv)
    check = [str(python), "-c", "import fastmcp, campus_catalog; print(fastmcp.__version__)"]
    found = subprocess.run(check, capture_output=True, text=True)
    if found.returncode != 0 or found.stdout.strip() != FASTMCP_VERSION:
        raise SystemExit(
            f"{venv} is not a FastMCP {FASTMCP_VERSION} virtualenv ({found.stderr.strip()[-300:]}); remove it"
        )
    return python


def fastmcp_server(
    python: Path, env: dict[str, str], port: int, log: Path
) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]:
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
    response.json()


# An answer whose first bytes are those of the row's first answer (checked whole) says the same
# kind of thing: JSON-RPC puts "result" or "error" right after the id, REST's page its first keys.
SAME_START = 32
TOOL_ERROR = b'"isError":true'


@dataclass(frozen=True, eq=False)  # eq=False: a row is itself (hashed by identity), whatever it asks
class Target:
    """One row: a path of one server asked one question."""

    path: str  # "/api/mcp 2025-11-25", "REST twin", "FastMCP 2026-07-28"
    tool: str
    cache: str  # cold, warm, or "-" (FastMCP has no answer cache)
    origin: str
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None

    @property
    def mcp(self) -> bool:
        return self.body is not None

    def full_check(self, response: httpx.Response) -> None:
        (check_mcp if self.mcp else check_rest)(response)


def mcp_target(path: str, tool: str, cache: str, origin: str, url: str, question: Question, wire: str) -> Target:
    headers, body = mcp_request(question, wire)
    return Target(path, tool, cache, origin, "POST", url, headers, body)


def campus_targets(origin: str, asked: list[Question], cache: str) -> list[Target]:
    rows = []
    for question in asked:
        for wire in WIRES:
            rows.append(
                mcp_target(f"/api/mcp {wire}", question.tool, cache, origin, f"{origin}/api/mcp", question, wire)
            )
        rows.append(Target("REST twin", question.tool, cache, origin, "GET", origin + question.rest, {}, None))
    return rows


def fastmcp_targets(origin: str) -> list[Target]:
    question = Question("search_sections", SUBJECT_PAGE, "")
    return [
        mcp_target(f"FastMCP {wire}", question.tool, "-", origin, f"{origin}/mcp", question, wire) for wire in WIRES
    ]


@dataclass
class Row:
    path: str
    tool: str
    cache: str
    requests_per_s: float
    p50: float
    p95: float
    answer_bytes: int
    rounds: list[float]  # requests/s of each round
    # The server's CPU milliseconds per answer in each round (when measure() knows its process):
    # what the other processes on a shared machine move far less than requests/s.
    cpu_ms: list[float] = field(default_factory=list)


# wrk's Lua hook at the end of a run: the percentiles (us) and every kind of error, on one line.
WRK_DONE = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("campus: p50=%.3f p95=%.3f errors=%d\\n", latency:percentile(50) / 1000,
    latency:percentile(95) / 1000, e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def load_tool(asked: str) -> str:
    """The load generator to use: ``asked``, or for "auto" wrk when it is installed, else httpx."""
    if asked == "auto":
        return "wrk" if shutil.which("wrk") else "httpx"
    if asked == "wrk" and shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk); or run with --load httpx")
    return asked


def wrk_slice_problem(seconds: float, rounds: int) -> str | None:
    """Why wrk cannot give each row ``seconds / rounds`` per round: wrk's -d takes whole seconds
    only (``-d0.8s`` is refused with its usage text), so the slice must be a whole number of them."""
    per_round = seconds / rounds
    if per_round >= 1 and per_round == int(per_round):
        return None
    return (
        f"wrk measures whole seconds only, and --seconds {seconds:g} over --rounds {rounds} gives each row "
        f"{per_round:g} s a round: give --seconds a multiple of --rounds (--seconds {max(1, round(per_round)) * rounds}), "
        "or --load httpx"
    )


def lua_of(target: Target, folder: Path) -> Path:
    """The wrk script that sends ``target``'s request: its method, body and every header."""
    lines = [f"wrk.method = {json.dumps(target.method)}"]
    if target.body is not None:
        lines.append(f"wrk.body = {json.dumps(target.body.decode())}")
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in target.headers.items()]
    script = (
        folder / f"{re.sub(r'[^a-z0-9]+', '-', (target.path + ' ' + target.tool + ' ' + target.cache).lower())}.lua"
    )
    script.write_text("\n".join(lines) + WRK_DONE)
    return script


def run_wrk(target: Target, script: Path, seconds: float, connections: int) -> tuple[float, float, float]:
    """requests/s, p50 and p95 (ms) of one wrk run; SystemExit if any answer failed."""
    done = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "-s", str(script), target.url],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"wrk failed for {target.path} (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    rate = re.search(r"Requests/sec:\s+([\d.]+)", done.stdout)
    tail = re.search(r"campus: p50=([\d.]+) p95=([\d.]+) errors=(\d+)", done.stdout)
    if rate is None or tail is None:
        raise SystemExit(f"wrk said something else for {target.path}:\n{done.stdout}{done.stderr}")
    if int(tail.group(3)):
        raise SystemExit(f"{target.path}: {tail.group(3)} answers failed under load:\n{done.stdout}")
    return float(rate.group(1)), float(tail.group(1)), float(tail.group(2))


async def send(client: httpx.AsyncClient, target: Target) -> httpx.Response:
    return await client.request(target.method, target.url, content=target.body, headers=target.headers)


async def load_slice(
    client: httpx.AsyncClient, target: Target, start: bytes, seconds: float, connections: int
) -> tuple[float, list[float]]:
    """``connections`` clients, each sending the next request as soon as its answer is in, for
    ``seconds``: the requests per second and each request's latency (ms)."""
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            response = await send(client, target)
            latencies.append((time.perf_counter() - started) * 1000)
            content = response.content
            if response.status_code != 200 or not content.startswith(start) or (target.mcp and TOOL_ERROR in content):
                target.full_check(response)  # says what went wrong, or finds it was fine after all

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(connections)))
    return len(latencies) / (time.perf_counter() - began), latencies


async def measure(
    targets: list[Target],
    rounds: int,
    seconds: float,
    connections: int,
    load: str = "httpx",
    pids: Mapping[str, int] | None = None,
) -> list[Row]:
    """Every target, interleaved: ``rounds`` rounds of ``seconds / rounds`` each, round r starting
    at another target (the list turned by r/rounds of its length), loaded by ``load`` (wrk or httpx).
    ``pids`` (an origin's server process) adds each slice's server CPU per answer to its row."""
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    clients = {origin: httpx.AsyncClient(limits=limits, timeout=60) for origin in {t.origin for t in targets}}
    scratch = tempfile.TemporaryDirectory()
    scripts = {target: lua_of(target, Path(scratch.name)) for target in targets} if load == "wrk" else {}
    percentiles: dict[Target, list[tuple[float, float]]] = {t: [] for t in targets}
    try:
        starts: dict[Target, bytes] = {}
        sizes: dict[Target, int] = {}
        for target in targets:
            client = clients[target.origin]
            # Opens the connections and fills the warm server's cache; the first answer is checked whole.
            for response in await asyncio.gather(*(send(client, target) for _ in range(connections))):
                target.full_check(response)
            starts[target], sizes[target] = response.content[:SAME_START], len(response.content)
        rates: dict[Target, list[float]] = {t: [] for t in targets}
        latencies: dict[Target, list[float]] = {t: [] for t in targets}
        cpu_ms: dict[Target, list[float]] = {t: [] for t in targets}
        for number in range(rounds):
            turn = number * len(targets) // rounds
            for target in targets[turn:] + targets[:turn]:
                pid = (pids or {}).get(target.origin)
                cpu_before = cpu_seconds(pid) if pid else 0.0
                if load == "wrk":
                    rate, p50, p95 = run_wrk(target, scripts[target], seconds / rounds, connections)
                    percentiles[target].append((p50, p95))
                else:
                    rate, times = await load_slice(
                        clients[target.origin], target, starts[target], seconds / rounds, connections
                    )
                    latencies[target] += times
                rates[target].append(rate)
                if pid:
                    answers = rate * seconds / rounds
                    cpu_ms[target].append((cpu_seconds(pid) - cpu_before) * 1000 / answers)
            print(f"  round {number + 1}/{rounds} done, load average {os.getloadavg()[0]:.1f}")
    finally:
        for client in clients.values():
            await client.aclose()
        scratch.cleanup()
    rows = []
    for target in targets:
        if load == "wrk":
            p50 = statistics.median(p for p, _ in percentiles[target])
            p95 = statistics.median(p for _, p in percentiles[target])
        else:
            cuts = statistics.quantiles(latencies[target], n=100, method="inclusive")
            p50, p95 = cuts[49], cuts[94]
        rows.append(
            Row(
                target.path,
                target.tool,
                target.cache,
                statistics.median(rates[target]),
                p50,
                p95,
                sizes[target],
                rates[target],
                cpu_ms[target],
            )
        )
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
    from campus_mcp.base.db import make_engine, make_sessions

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
    print(
        f"{options.connections} connections, {options.seconds:g} s per row in {options.rounds} interleaved rounds "
        f"(requests/s: the median of the rounds, their range beside it), {engine}, one uvicorn worker"
    )
    switches = speed_switches()
    print(
        "speed-ups of the served campuses: "
        + (", ".join(f"{name}={value}" for name, value in sorted(switches.items())) or "as their defaults (all on)")
    )
    loader = f"wrk -t1 -c{options.connections}" if options.load == "wrk" else "httpx in this process"
    print(f"load: {loader}\n")
    print("In process, sections.search_sections alone (ms):")
    print("| question | p50 | p95 |\n| --- | --- | --- |")
    for name, (p50, p95) in inproc.items():
        print(f"| {name} | {p50:.1f} | {p95:.1f} |")
    print("\nOver HTTP:")
    print("| tool | path | answer cache | requests/s | rounds | p50 ms | p95 ms | bytes |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(
            f"| {row.tool} | {row.path} | {row.cache} | {row.requests_per_s:.1f} "
            f"| {min(row.rounds):.0f}-{max(row.rounds):.0f} | {row.p50:.1f} | {row.p95:.1f} | {row.answer_bytes:,} |"
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


# -- a student's own tools (issues 28 and 36): server CPU per answer, the access log on and off --

# A student's own data, read by an app (a personal access token), on both wires and REST: each call
# is recorded in the access log. The catalog rows above are nobody's data and record nothing.
# Every student read tool (issue 36, point 6), each with arguments that exist on the demo campus
# (``student_questions``: the busy times of the current fortnight, student 1's first friend).
STUDENT_TOOLS = (
    "my_courses",
    "my_busy_times",
    "my_finals",
    "list_friends",
    "friend_busy_times",
    "my_calendar_settings",
)
STUDENT_SCOPES = "schedule:read friends:read settings:read"
BENCH_TOKEN_NAME = "bench/mcp_vs_rest.py"
LOG_STATES = {"log on": "true", "log off": "false"}
# Issue 36's goals for a student read with the log on: server CPU per answer, and MCP's over REST's.
CPU_GOAL_MS = 5.0
MCP_OVER_REST_GOAL = 1.10


# A catalog answer measured beside them, for scale: a shared machine's load moves every figure of a
# run, and issue 36 asks a student read to cost no more than about twice a catalog answer.
CATALOG_FOR_SCALE = Question("search_sections", SUBJECT_PAGE, "/api/v1/catalog/sections?" + urlencode(SUBJECT_PAGE))


def student_questions(friend_id: int, monday: date) -> list[Question]:
    """The six student read tools as demo student 1 asks them, with their REST twins."""
    span = {"start_date": monday.isoformat(), "end_date": (monday + timedelta(days=13)).isoformat()}
    return [
        Question("my_courses", {}, "/api/v1/me/courses"),
        Question("my_busy_times", span, "/api/v1/me/busy_times?" + urlencode(span)),
        Question("my_finals", {}, "/api/v1/me/finals"),
        Question("list_friends", {}, "/api/v1/me/friends"),
        Question(
            "friend_busy_times",
            {"friend_id": friend_id, **span},
            f"/api/v1/me/friends/{friend_id}/busy_times?" + urlencode(span),
        ),
        Question("my_calendar_settings", {}, "/api/v1/me/calendar-settings"),
    ]


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of a process so far (Linux /proc; its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def student_campus_env(work: Path, url: str | None) -> dict[str, str]:
    """Every family (the schedule's tools need a student), sign-in required, the key in ``work``."""
    database = work / "demo-students.db"
    env = served_env()
    env.update(
        {
            "CAMPUS_MCP_DATABASE_URL": url or f"sqlite+aiosqlite:///{database}",
            "CAMPUS_MCP_SCHEDULER": "false",
            "CAMPUS_MCP_CONFIG": str(database.with_suffix(".absent.toml")),
            # One demo key for the servers and this process, which makes the token they check.
            "CAMPUS_MCP_VAR_DIR": str(work / "var-students"),
            "CAMPUS_MCP_RATE_LIMIT_OVERRIDES": "api/user=10000000,api/address=10000000",
        }
    )
    return env


async def student_token(env: dict[str, str]) -> str:
    """A personal access token of demo student 1 that reads the student tools (the bench's old ones deleted)."""
    os.environ.update(env)
    from campus_mcp import Settings
    from campus_mcp.base.db import make_engine, make_sessions
    from campus_mcp.oauth.personal_tokens import PersonalToken, PersonalTokens
    from sqlalchemy import delete

    settings = Settings()
    engine = make_engine(settings.database_url)
    try:
        sessions = make_sessions(engine)
        async with sessions() as session, session.begin():
            await session.execute(delete(PersonalToken).where(PersonalToken.name == BENCH_TOKEN_NAME))
        return await PersonalTokens(sessions, settings).create(1, name=BENCH_TOKEN_NAME, scope=STUDENT_SCOPES, days=7)
    finally:
        await engine.dispose()


async def access_log_in_process(env: dict[str, str], calls: int = 20_000) -> tuple[float, float]:
    """In this process, on the bench's database: microseconds one ``AccessLog.record`` takes (what an
    answer waits for), and milliseconds per 1,000 entries of the batched write (the writer's task,
    off the answers' path). The entries are deleted after."""
    os.environ.update(env)
    from campus_mcp import Settings
    from campus_mcp.base.db import make_engine, make_sessions
    from campus_mcp.students.access_journal import journal_folder
    from campus_mcp.students.access_log import AccessLog, StudentAccess
    from sqlalchemy import delete

    settings = Settings()
    engine = make_engine(settings.database_url)
    try:
        sessions = make_sessions(engine)
        log = AccessLog(sessions, journal_folder(settings.var_dir, settings.database_url))
        started = time.perf_counter()
        for _ in range(calls):
            log.record(1, app_kind="token", app_id=BENCH_TOKEN_NAME, door="bench", action="bench", outcome="ok")
        per_call_us = (time.perf_counter() - started) / calls * 1e6
        started = time.perf_counter()
        await log.close()  # cancels the writer's first sleep and writes every entry in one statement
        per_thousand_ms = (time.perf_counter() - started) / calls * 1000 * 1000
        async with sessions() as session, session.begin():
            await session.execute(delete(StudentAccess).where(StudentAccess.door == "bench"))
        return per_call_us, per_thousand_ms
    finally:
        await engine.dispose()


def student_targets(origin: str, label: str, token: str, asked: list[Question]) -> list[Target]:
    bearer = {"authorization": f"Bearer {token}"}
    rows = []
    for question in asked:
        for wire in WIRES:
            headers, body = mcp_request(question, wire)
            rows.append(
                Target(
                    f"/api/mcp {wire}",
                    question.tool,
                    label,
                    origin,
                    "POST",
                    f"{origin}/api/mcp",
                    headers | bearer,
                    body,
                )
            )
        rows.append(Target("REST twin", question.tool, label, origin, "GET", origin + question.rest, bearer, None))
    return rows


def first_friend(origin: str, token: str) -> int:
    """Demo student 1's first accepted friend, as list_friends' REST twin answers it."""
    answer = httpx.get(f"{origin}/api/v1/me/friends", headers={"authorization": f"Bearer {token}"}, timeout=60)
    answer.raise_for_status()
    friends = answer.json()["friends"]
    if not friends:
        raise SystemExit("demo student 1 has no friend to ask friend_busy_times about: reload the demo campus")
    return int(friends[0]["friend_id"])


def student_run(options: argparse.Namespace) -> None:
    """``--student``: every student read tool (or ``--student-tool``) as demo student 1 with a personal
    access token, on a server with the access log on and, unless ``--log on``, one with it off,
    interleaved in one run: each row's server CPU per answer, MCP's over REST's, and the log's cost."""
    work = options.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = student_campus_env(work, options.database_url)
    if options.database_url or not demo_is_current(work / "demo-students.db"):
        started = time.perf_counter()
        subprocess.run([command("campus-mcp"), "demo"], env=env, check=True, stdin=subprocess.DEVNULL)
        if not options.database_url:
            stamp_demo(work / "demo-students.db")
        print(f"every family's demo campus loaded in {time.perf_counter() - started:.0f} s")
    token = asyncio.run(student_token(env))
    record_us, write_ms = asyncio.run(access_log_in_process(env))
    load_at_start = os.getloadavg()
    monday = date.today() - timedelta(days=date.today().weekday())
    with contextlib.ExitStack() as servers:
        targets: list[Target] = []
        pids: dict[str, int] = {}
        origins: dict[str, int] = {}
        # --off-first: the log-off server starts first and its rows lead each round, so a run in
        # each order cancels what comes of the order alone (a control run shows ~5% by CPU).
        states = [(label, state) for label, state in LOG_STATES.items() if options.log in ("both", label[4:])]
        states = states[:: -1 if options.off_first else 1]
        asked: list[Question] | None = None
        for label, state in states:
            state = "true" if options.control else state
            port = free_port()
            args = [command("campus-mcp"), "serve", "--host", "127.0.0.1", "--port", str(port), "--no-prepare"]
            served = env | {"CAMPUS_MCP_STUDENT_ACCESS_LOG": state}
            log = work / f"mcp-vs-rest-student-{label.replace(' ', '-')}.log"
            process = servers.enter_context(
                running(args, served, f"http://127.0.0.1:{port}/healthz", log, ready=WARM_LINE)
            )
            origin = f"http://127.0.0.1:{port}"
            pids[label] = origins[origin] = process.pid
            if asked is None:
                asked = [
                    q
                    for q in student_questions(first_friend(origin, token), monday)
                    if not options.student_tool or q.tool in options.student_tool
                ] + [CATALOG_FOR_SCALE]
            targets += student_targets(origin, label, token, asked)
        cpu_before = {label: cpu_seconds(pid) for label, pid in pids.items()}
        rows = asyncio.run(
            measure(targets, options.rounds, options.seconds, options.connections, options.load, origins)
        )
        cpu = {label: cpu_seconds(pid) - cpu_before[label] for label, pid in pids.items()}
    student_report(rows, cpu, [label for label, _ in states], options, load_at_start, (record_us, write_ms))


def student_report(
    rows: list[Row],
    cpu: dict[str, float],
    labels: list[str],
    options: argparse.Namespace,
    load_at_start: tuple[float, float, float],
    in_process: tuple[float, float],
) -> None:
    engine = "PostgreSQL (asyncpg)" if options.database_url else "SQLite (aiosqlite)"
    print(f"\n{date.today()} · {platform.node() or 'this machine'} · {os.cpu_count()} cores · {engine}")
    print(
        "load average (1, 5, 15 min) at start {} and at end {}".format(
            *(" ".join(f"{x:.1f}" for x in la) for la in (load_at_start, os.getloadavg()))
        )
    )
    switches = speed_switches()
    print(
        "speed-ups of the served campuses: "
        + (", ".join(f"{name}={value}" for name, value in sorted(switches.items())) or "as their defaults (all on)")
    )
    loader = f"wrk -t1 -c{options.connections}" if options.load == "wrk" else "httpx in this process"
    print(
        f"one uvicorn worker per server, {options.connections} connections ({loader}); wires: MCP "
        f"{' and '.join(WIRES)}, and the REST twin; a personal access token of demo student 1"
    )
    if options.control:
        print("CONTROL RUN: both servers have the log on; every on/off below is the machine's noise alone")
    print(
        f"{options.seconds:g} s per row in {options.rounds} interleaved rounds; requests/s and CPU per answer "
        "the medians of the rounds\n"
    )
    print(
        "| tool | path | access log | requests/s | rounds | p50 ms | p95 ms | server CPU ms/answer |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- |"
    )
    for row in rows:
        print(
            f"| {row.tool} | {row.path} | {row.cache} | {row.requests_per_s:.1f} "
            f"| {min(row.rounds):.0f}-{max(row.rounds):.0f} | {row.p50:.1f} | {row.p95:.1f} "
            f"| {statistics.median(row.cpu_ms):.2f} |"
        )

    def cpu_of(tool: str, path: str, label: str) -> list[float]:
        return next(r.cpu_ms for r in rows if r.tool == tool and r.path == path and r.cache == label)

    tools = list(dict.fromkeys(r.tool for r in rows))
    shown = "log on" if "log on" in labels else labels[0]
    # The server's CPU per answer, slice by slice: the machine's other load moves a slice's wall
    # time, little its CPU. MCP over REST within each round (the two slices ran minutes apart at
    # most), then the median of the rounds.
    print(
        f"\nServer CPU per answer with the {shown} (median of the rounds; goal at most {CPU_GOAL_MS:g} ms), and "
        f"MCP's over its REST twin's (median of the rounds' own ratios; goal at most {MCP_OVER_REST_GOAL:.2f}):"
    )
    print(
        "| tool | "
        + " | ".join(f"MCP {w} ms" for w in WIRES)
        + " | REST ms | "
        + " | ".join(f"MCP/REST {w}" for w in WIRES)
        + " |"
    )
    print("| --- " * (2 * len(WIRES) + 2) + "|")
    for tool in tools:
        if tool == CATALOG_FOR_SCALE.tool:
            continue
        rest = cpu_of(tool, "REST twin", shown)
        per_wire = [cpu_of(tool, f"/api/mcp {w}", shown) for w in WIRES]
        ratios = [statistics.median(m / r for m, r in zip(mcp, rest, strict=True)) for mcp in per_wire]
        print(
            f"| {tool} | "
            + " | ".join(f"{statistics.median(m):.2f}" for m in per_wire)
            + f" | {statistics.median(rest):.2f} | "
            + " | ".join(f"{r:.3f}" for r in ratios)
            + " |"
        )
    catalog = statistics.median(cpu_of(CATALOG_FOR_SCALE.tool, f"/api/mcp {WIRES[0]}", shown))
    print(
        f"For scale, a catalog answer in the same run (search_sections, the answer cache on, {WIRES[0]}): "
        f"{catalog:.2f} ms; each student read over it: "
        + ", ".join(
            f"{tool} {statistics.median(cpu_of(tool, f'/api/mcp {WIRES[0]}', shown)) / catalog:.2f}"
            for tool in tools
            if tool != CATALOG_FOR_SCALE.tool
        )
    )
    if len(labels) == 2:
        print("\nThe access log's cost: CPU per answer on/off (median of the rounds' own ratios):")
        for tool in tools:
            line = []
            for path in (*(f"/api/mcp {wire}" for wire in WIRES), "REST twin"):
                each = [
                    on / off
                    for on, off in zip(cpu_of(tool, path, "log on"), cpu_of(tool, path, "log off"), strict=True)
                ]
                line.append(f"{path} {statistics.median(each):.3f}")
            print(f"  {tool}: " + ", ".join(line))
    # CPU time a server spent per answer, over the whole run (the warm-up's few answers included):
    # what the load of the other processes on a shared machine moves least.
    slice_s = options.seconds / options.rounds
    answers = {label: sum(sum(r.rounds) * slice_s for r in rows if r.cache == label) for label in labels}
    per_answer = {label: cpu[label] / answers[label] * 1000 for label in labels}
    print("  whole run, every tool together: " + ", ".join(f"{per_answer[label]:.2f} ms {label}" for label in labels))
    record_us, write_ms = in_process
    print(
        f"\nIn process: AccessLog.record {record_us:.2f} us a call (what an answer waits for); "
        f"the batched write {write_ms:.1f} ms per 1,000 entries (the writer's task, once a second)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=1, help="Demo scale (67: about 100,000 sections).")
    parser.add_argument("--seconds", type=float, default=5.0, help="Measured seconds per row, all rounds together.")
    parser.add_argument(
        "--rounds", type=int, default=5, help="Interleaved rounds (each row gets seconds/rounds in each)."
    )
    parser.add_argument("--connections", type=int, default=8, help="Concurrent connections of the load.")
    parser.add_argument(
        "--load",
        choices=("auto", "wrk", "httpx"),
        default="auto",
        help="The load generator: wrk, httpx from this process, or auto (wrk when installed).",
    )
    parser.add_argument("--runs", type=int, default=50, help="In-process runs per kind of question.")
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="Folder for databases, logs, venv.")
    parser.add_argument("--skip-fastmcp", action="store_true", help="Do not install or measure FastMCP.")
    parser.add_argument(
        "--database-url", help="Serve this database (PostgreSQL: created if missing) instead of a SQLite file."
    )
    parser.add_argument(
        "--student",
        action="store_true",
        help="Measure a student's own read tools instead: server CPU per answer, MCP/REST, the access log on and off.",
    )
    parser.add_argument(
        "--student-tool",
        action="append",
        choices=STUDENT_TOOLS,
        help="With --student: only this tool (repeatable; default every student read tool).",
    )
    parser.add_argument(
        "--log",
        choices=("both", "on", "off"),
        default="both",
        help="With --student: serve with the access log on and off (both), or one server only.",
    )
    parser.add_argument("--off-first", action="store_true", help="With --student: the log-off server and rows first.")
    parser.add_argument(
        "--control",
        action="store_true",
        help="With --student: both servers with the log on, so on/off shows what the machine's noise alone gives.",
    )
    options = parser.parse_args()
    options.load = load_tool(options.load)
    if options.load == "wrk" and (problem := wrk_slice_problem(options.seconds, options.rounds)):
        parser.error(problem)  # before anything is built or started
    if options.student:
        student_run(options)
        return
    options.load_at_start = os.getloadavg()
    work = options.work.resolve()
    database = work / f"demo-scale-{options.scale}.db"
    env = target_env(database, options.database_url)
    built = build_target(database, options.database_url, options.scale)
    print(f"scale {options.scale}: " + (f"demo loaded in {built:.0f} s" if built is not None else "existing database"))
    python = None if options.skip_fastmcp else fastmcp_python(work)

    inproc = asyncio.run(in_process(env, options.runs))
    with contextlib.ExitStack() as servers:
        origins: dict[str, str] = {}
        for cache in ("cold", "warm"):
            port = free_port()
            servers.enter_context(campus_server(env, port, work / f"mcp-vs-rest-{cache}.log", cache=cache == "warm"))
            origins[cache] = f"http://127.0.0.1:{port}"
        targets: list[Target] = []
        asked = questions(*asyncio.run(campus_samples(origins["cold"])))
        for cache, origin in origins.items():
            targets += campus_targets(origin, asked, cache)
        if python is not None:
            port = free_port()
            servers.enter_context(fastmcp_server(python, env, port, work / "fastmcp.log"))
            targets += fastmcp_targets(f"http://127.0.0.1:{port}")
        rows = asyncio.run(measure(targets, options.rounds, options.seconds, options.connections, options.load))
    report(rows, inproc, options.scale, options)


if __name__ == "__main__":
    main()
