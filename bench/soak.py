"""Soak: ``campus-mcp serve --workers 2`` and one ``campus-mcp worker`` (the scheduler) on
PostgreSQL and Redis, under a bounded mix of anonymous and signed-in calls for several minutes.

One command (issue 15, point 5):

    .venv/bin/python bench/soak.py                 # 5 minutes per phase, after a warm-up
    .venv/bin/python bench/soak.py --minutes 3     # the README's figures
    .venv/bin/python bench/soak.py --quick         # a smoke run: 30 s phases

It starts a private PostgreSQL (``scripts/postgres.sh``) and a ``redis-server`` on loopback in a
temporary folder (or uses ``--database-url`` / ``--redis-url``), then runs two phases on the same
database and port: ``serve --workers 1``, then ``serve --workers 2``, each beside the one
``campus-mcp worker`` that holds the scheduler lock (the serve processes have
``CAMPUS_MCP_SCHEDULER=false``, as the README's deployment section advises). The first start
migrates the database and loads the demo campus; every process shares one
``CAMPUS_MCP_SECRET_KEY`` made for the run.

The load comes from this process (httpx on loopback, so it shares the cores with the servers):

- ``--concurrency`` anonymous clients, each sending its next request when the last answer is in:
  catalog questions (searches, a section, a course, reviews, a schedule check, a search by
  meaning) drawn from a seeded generator, as an MCP ``tools/call`` on the 2025-11-25 wire, on the
  2026-07-28 wire, or as the REST twin, a third each;
- ``--students`` signed-in students, each at one request a second (60 a minute, under the real
  ``api/user`` limit of 100): their own tools over MCP with an OAuth access token (what
  ``campus-mcp token`` issues) and the REST twins with a personal access token;
- one more student who sends four catalog requests a second with its tokens and so must be
  refused: its 429s (REST) and rate-limited tool errors (MCP) are counted apart, as expected
  refusals.

Every answer is checked (HTTP status, JSON-RPC error, tool error); anything but 200 and a clean
result is an error of its kind. The per-address limits that a single loopback address would hit
(``api/address``, ``catalog/semantic``) are raised with ``CAMPUS_MCP_RATE_LIMIT_OVERRIDES`` so the
anonymous load stays countable: every request is still counted in Redis. The student limit keeps
its real value.

For each phase it prints requests/s, p50/p95/p99 per kind of call, errors by kind, the RSS of
each server worker process (and of the scheduler) when the measured period starts (after the
warm-up) and when it ends, and the growth; at the end, the ratio of two workers to one. It exits
1 on any unexpected error, a worker that restarted, a traceback in a server log, no refusal for
the student over the limit, or memory growth of 10% or more in any worker.

Not a test: the figures go into the README's "Soak" section.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_sections import command, free_port

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 300
STOP_TIMEOUT_S = 60
WIRES = ("2025-11-25", "2026-07-28")
STUDENT_INTERVAL_S = 1.0  # 60 a minute: under api/user's 100, with room for a slow answer's catch-up
FLOOD_INTERVAL_S = 0.25  # 240 a minute: well over api/user's 100
PACED_IN_FLIGHT = 2  # a paced student's open requests at most; a tick past that is skipped (counted)
FLOOD_IN_FLIGHT = 8  # enough for the one over the limit to pass 100 a minute even with slow answers
MAX_GROWTH = 0.10
MEMORY_SAMPLE_S = 15.0
# The student tools asked for (scope, tool, arguments, REST path and query).
STUDENT_SCOPES = ("schedule:read", "settings:read", "friends:read")


# -- the services ---------------------------------------------------------------------------


@contextlib.contextmanager
def private_postgres() -> Iterator[str]:
    """scripts/postgres.sh on a free loopback port, in a folder of its own directly under /tmp:
    as root the server runs as the postgres user, who must reach the folder (the script hands
    it over) but not the rest of this run's files."""
    folder = Path(tempfile.mkdtemp(prefix="campus-soak-pg-", dir="/tmp"))
    port = free_port()
    script = str(ROOT / "scripts" / "postgres.sh")
    try:
        started = subprocess.run(["bash", script, "start", str(folder), str(port)], capture_output=True, text=True)
        if started.returncode != 0:
            raise SystemExit(f"scripts/postgres.sh could not start PostgreSQL:\n{started.stderr}")
        yield started.stdout.strip()
    finally:
        subprocess.run(["bash", script, "stop", str(folder)], check=False, capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def private_redis(folder: Path) -> Iterator[str]:
    """A redis-server on a free loopback port, no persistence."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server), or pass --redis-url")
    folder.mkdir(parents=True)
    port = free_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    with (folder / "redis.log").open("wb") as out:
        process = subprocess.Popen(args, cwd=folder, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            import socket

            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"redis-server did not start; see {folder / 'redis.log'}")
            time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def campus_env(database_url: str, redis_url: str, port: int, work: Path, students: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    env.update(
        {
            "CAMPUS_MCP_DATABASE_URL": database_url,
            "CAMPUS_MCP_REDIS_URL": redis_url,
            "CAMPUS_MCP_SECRET_KEY": secrets.token_urlsafe(48),
            "CAMPUS_MCP_HOST": "127.0.0.1",
            "CAMPUS_MCP_PORT": str(port),
            "CAMPUS_MCP_ANONYMOUS_ACCESS": "true",
            "CAMPUS_MCP_DEMO_STUDENTS": str(students + 1),
            "CAMPUS_MCP_VAR_DIR": str(work / "var"),
            "CAMPUS_MCP_CONFIG": str(work / "absent.toml"),
            # One loopback address stands for every anonymous client: its own limits are raised
            # out of reach (still counted in Redis); api/user keeps the real 100 a minute.
            "CAMPUS_MCP_RATE_LIMIT_OVERRIDES": "api/address=100000000,catalog/semantic=100000000",
        }
    )
    return env


class Server:
    """One started process with its log; stopped with SIGTERM (then SIGKILL) on leaving."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        self._out = log.open("wb")
        self.process = subprocess.Popen(
            args, env=env, stdout=self._out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._out.close()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextlib.contextmanager
def serving(env: dict[str, str], workers: int, log: Path, *, prepare: bool) -> Iterator[Server]:
    args = [command("campus-mcp"), "serve", "--workers", str(workers)]
    if not prepare:
        args.append("--no-prepare")
    server = Server(args, {**env, "CAMPUS_MCP_SCHEDULER": "false"}, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        # uvicorn logs this once per worker process: all of them serve before the load starts.
        while server.log_text().count("Application startup complete") < workers:
            if server.process.poll() is not None:
                raise SystemExit(f"campus-mcp serve exited with {server.process.returncode}; see {log}")
            if time.monotonic() > deadline:
                raise SystemExit(f"campus-mcp serve did not start {workers} worker(s) in {START_TIMEOUT_S}s; see {log}")
            time.sleep(0.5)
        yield server
    finally:
        server.stop()


def start_scheduler(env: dict[str, str], log: Path, stack: contextlib.ExitStack) -> Server:
    """``campus-mcp worker``, once the database has its tables; it waits until it holds the lock."""
    server = Server([command("campus-mcp"), "worker"], env, log)
    stack.callback(server.stop)
    deadline = time.monotonic() + START_TIMEOUT_S
    while "is the scheduler now" not in server.log_text():
        if server.process.poll() is not None:
            raise SystemExit(f"campus-mcp worker exited with {server.process.returncode}; see {log}")
        if time.monotonic() > deadline:
            raise SystemExit(f"campus-mcp worker did not become the scheduler in {START_TIMEOUT_S}s; see {log}")
        time.sleep(0.5)
    return server


# -- memory ---------------------------------------------------------------------------------


def rss_mib(pid: int) -> float | None:
    """Resident memory of one process (psutil if installed, else /proc/PID/status VmRSS)."""
    try:
        import psutil  # type: ignore[import-untyped]

        return float(psutil.Process(pid).memory_info().rss) / 2**20
    except ImportError:
        pass
    except Exception:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(p) for p in (task / "children").read_text().split()]
    return found


def worker_pids(server: Server, workers: int) -> list[int]:
    """The processes that answer requests: serve itself with one worker, else uvicorn's spawned
    worker processes (not its supervisor, not multiprocessing's resource tracker)."""
    if workers == 1:
        return [server.process.pid]
    pids = []
    for pid in children(server.process.pid):
        with contextlib.suppress(OSError):
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                pids.append(pid)
    return sorted(pids)


# -- tokens and samples ---------------------------------------------------------------------


@dataclass(frozen=True)
class Student:
    username: str
    oauth_token: str  # /api/mcp
    personal_token: str  # the REST twins


async def mint_tokens(env: dict[str, str], usernames: list[str]) -> tuple[list[Student], list[str]]:
    """An OAuth access token (as ``campus-mcp token`` issues) and a personal access token per
    student, with the student read scopes this campus has; and those scopes."""
    os.environ.update(env)
    from campus_mcp.assembly.deployment import open_deployment
    from campus_mcp.base.settings import Settings
    from campus_mcp.oauth.accounts import student_by_username
    from campus_mcp.oauth.personal_tokens import PersonalTokens
    from campus_mcp.oauth.token_cli import issue

    settings = Settings()
    made = []
    async with open_deployment(settings, migrate=False) as deployment:
        scopes = [s for s in STUDENT_SCOPES if s in deployment.registry.scopes]
        personal = PersonalTokens(deployment.sessions, settings)
        for name in usernames:
            oauth, granted = await issue(deployment, name, scopes, 24 * 60)
            async with deployment.session() as session:
                student = await student_by_username(session, name)
            assert student is not None
            pat = await personal.create(student.id, name="soak", scope=granted, days=7)
            made.append(Student(name, oauth, pat))
    return made, scopes


@dataclass(frozen=True)
class Call:
    """One question, asked as an MCP tools/call (either wire) or as its REST twin."""

    kind: str
    tool: str
    arguments: dict[str, Any]
    rest: str  # path and query of the REST twin


def anonymous_calls(crns: list[str], courses: list[str], subjects: list[str], rng: random.Random) -> list[Call]:
    """A bounded, seeded set of catalog questions: the same list for every phase."""
    calls = []
    for subject in subjects[:12]:
        arguments = {"subject": subject, "limit": 25}
        calls.append(Call("search", "search_sections", arguments, "/api/v1/catalog/sections?" + urlencode(arguments)))
    for words in ("introduction programming", "organic chemistry", "linear algebra", "world history"):
        arguments = {"q": words, "limit": 25}
        calls.append(Call("search", "search_sections", arguments, "/api/v1/catalog/sections?" + urlencode(arguments)))
    times = {"days": "TR", "begins_after": "10:00", "ends_before": "15:00", "open_only": True}
    calls.append(
        Call(
            "search", "search_sections", times, "/api/v1/catalog/sections?" + urlencode({**times, "open_only": "true"})
        )
    )
    for crn in rng.sample(crns, min(40, len(crns))):
        calls.append(Call("section", "get_section", {"crn": crn}, f"/api/v1/catalog/sections/{crn}"))
    for code in rng.sample(courses, min(20, len(courses))):
        calls.append(Call("course", "get_course", {"code": code}, "/api/v1/catalog/courses/" + quote(code)))
        arguments = {"course": code, "limit": 10}
        calls.append(Call("reviews", "search_reviews", arguments, "/api/v1/catalog/reviews?" + urlencode(arguments)))
    for _ in range(10):
        picked = rng.sample(crns, 3)
        calls.append(
            Call(
                "schedule check",
                "check_schedule",
                {"crns": picked},
                "/api/v1/catalog/schedule_check?" + urlencode([("crns", c) for c in picked]),
            )
        )
    for question in ("a class about the stock market", "learning to paint", "how computers think"):
        arguments = {"q": question, "semantic": True, "limit": 10}
        calls.append(
            Call(
                "meaning",
                "search_sections",
                arguments,
                "/api/v1/catalog/sections?" + urlencode({**arguments, "semantic": "true"}),
            )
        )
    return calls


# The student over the limit asks cheap catalog questions with its tokens: they count against the
# student all the same, and a slow personal tool would keep it under the limit on a busy machine.
FLOOD_CALLS = [
    Call("flood", "list_terms", {}, "/api/v1/catalog/terms"),
    Call("flood", "list_subjects", {}, "/api/v1/catalog/subjects"),
]


def student_calls(scopes: list[str]) -> list[Call]:
    today = date.today()
    week = {"start_date": today.isoformat(), "end_date": (today + timedelta(days=6)).isoformat()}
    wanted = [
        ("schedule:read", Call("student", "my_courses", {}, "/api/v1/me/courses")),
        ("schedule:read", Call("student", "my_finals", {}, "/api/v1/me/finals")),
        ("schedule:read", Call("student", "my_busy_times", week, "/api/v1/me/busy_times?" + urlencode(week))),
        ("settings:read", Call("student", "my_calendar_settings", {}, "/api/v1/me/calendar-settings")),
        ("friends:read", Call("student", "list_friends", {}, "/api/v1/me/friends")),
    ]
    return [call for scope, call in wanted if scope in scopes]


async def campus_samples(origin: str) -> tuple[list[str], list[str], list[str]]:
    """CRNs, course codes and subject codes of the demo campus, read anonymously over REST."""
    async with httpx.AsyncClient(timeout=60) as client:
        subjects_answer = (await client.get(f"{origin}/api/v1/catalog/subjects")).json()
        listed = subjects_answer.get("subjects", subjects_answer) if isinstance(subjects_answer, dict) else []
        subjects = [s["code"] for s in listed if isinstance(s, dict) and "code" in s]
        crns: list[str] = []
        courses: list[str] = []
        for subject in subjects[:12]:
            page = (await client.get(f"{origin}/api/v1/catalog/sections", params={"subject": subject})).json()
            for section in page.get("sections", []):
                if not section.get("cancelled"):
                    crns.append(section["crn"])
                    code = section.get("course_code")
                    if code and code not in courses:
                        courses.append(code)
    if len(crns) < 3 or not courses or not subjects:
        raise SystemExit(f"the demo campus answered too few sections to ask about ({len(crns)} CRNs)")
    return crns, courses, subjects


# -- the load -------------------------------------------------------------------------------


def mcp_request(call: Call, wire: str, token: str | None) -> tuple[dict[str, str], bytes]:
    """The request an MCP client sends for one tools/call on ``wire`` (the endpoint is stateless)."""
    params: dict[str, Any] = {"name": call.tool, "arguments": call.arguments}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": wire,
    }
    if wire >= "2026-07-28":
        headers.update({"mcp-method": "tools/call", "mcp-name": call.tool})
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": wire,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    if token:
        headers["authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return headers, json.dumps(body).encode()


def rpc_answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer, sent as JSON or as one server-sent event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:"):
                answer: dict[str, Any] = json.loads(line[5:])
                return answer
        return {}
    answer = response.json()
    return answer if isinstance(answer, dict) else {}


RATE_LIMITED = "rate limited"


def outcome(response: httpx.Response, wire: str | None) -> str:
    """``ok``, ``rate limited``, or the kind of error."""
    if response.status_code == 429:
        return RATE_LIMITED if "retry-after" in response.headers else "429 without Retry-After"
    if response.status_code != 200:
        return f"HTTP {response.status_code}"
    if wire is None:
        return "ok"
    try:
        answer = rpc_answer(response)
    except ValueError:
        return "MCP answer not JSON"
    if "error" in answer:
        return f"JSON-RPC error {answer['error'].get('code')}"
    result = answer.get("result") or {}
    if result.get("isError"):
        text = " ".join(str(part.get("text", "")) for part in result.get("content", []) if isinstance(part, dict))
        return (
            RATE_LIMITED if text.startswith("Rate limited") else f"tool error ({result.get('content', [{}])[0]})"[:160]
        )
    return "ok" if "result" in answer else "MCP answer without result"


@dataclass
class Tally:
    """What one phase's clients saw."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)
    flood: Counter[str] = field(default_factory=Counter)
    ok: int = 0
    anonymous_ok: int = 0
    behind: int = 0  # paced requests not sent: PACED_IN_FLIGHT of that student were still open
    recording: bool = False

    def note(self, row: str, started: float, result: str, *, anonymous: bool, flood: bool = False) -> None:
        if not self.recording:
            if result != "ok" and not (flood and result == RATE_LIMITED):
                self.errors[f"{result} (warm-up)"] += 1
            return
        if flood:
            self.flood[result] += 1
            if result not in ("ok", RATE_LIMITED):
                self.errors[f"{row}: {result}"] += 1
            return
        if result != "ok":
            self.errors[f"{row}: {result}"] += 1
            return
        self.ok += 1
        self.anonymous_ok += anonymous
        self.latencies.setdefault(row, []).append((time.perf_counter() - started) * 1000)


async def send(client: httpx.AsyncClient, origin: str, call: Call, way: str, token: str | None) -> tuple[str, str]:
    """Ask ``call`` one way (a wire, or ``REST``); the row it is counted in and its outcome."""
    try:
        if way == "REST":
            headers = {"authorization": f"Bearer {token}"} if token else {}
            response = await client.get(origin + call.rest, headers=headers)
            return f"REST {call.kind}", outcome(response, None)
        headers, body = mcp_request(call, way, token)
        response = await client.post(f"{origin}/api/mcp", content=body, headers=headers)
        return f"MCP {way} {call.kind}", outcome(response, way)
    except httpx.HTTPError as exc:
        return f"{way} {call.kind}", f"transport {type(exc).__name__}"


async def run_load(
    origin: str,
    anonymous: list[Call],
    own: list[Call],
    students: list[Student],
    flooder: Student,
    options: argparse.Namespace,
    on_start: Any,
    on_end: Any,
) -> tuple[Tally, float]:
    """Warm up, then measure for the phase's seconds; ``on_start`` runs when measuring begins
    and ``on_end`` when it ends, both still under the load."""
    tally = Tally()
    clients = options.concurrency + len(students) + 1
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    stop = asyncio.Event()
    ways = ("REST", *WIRES)

    async def anonymous_client(number: int, client: httpx.AsyncClient) -> None:
        rng = random.Random(options.seed * 1000 + number)
        while not stop.is_set():
            call = rng.choice(anonymous)
            started = time.perf_counter()
            row, result = await send(client, origin, call, rng.choice(ways), None)
            tally.note(row, started, result, anonymous=True)

    async def paced(
        student: Student, calls: list[Call], interval: float, client: httpx.AsyncClient, flood: bool
    ) -> None:
        # On a clock, not after each answer (a slow answer must not slow the student below its
        # rate, or the one over the limit under it), with at most PACED_IN_FLIGHT requests open.
        rng = random.Random(f"{options.seed}-{student.username}")
        open_requests: set[asyncio.Task[None]] = set()

        async def one(call: Call, way: str) -> None:
            token = student.personal_token if way == "REST" else student.oauth_token
            started = time.perf_counter()
            row, result = await send(client, origin, call, way, token)
            tally.note(f"student {row}", started, result, anonymous=False, flood=flood)

        next_at = time.perf_counter() + rng.random() * interval
        while not stop.is_set():
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            next_at += interval
            call, way = rng.choice(calls), rng.choice(ways)
            if len(open_requests) >= (FLOOD_IN_FLIGHT if flood else PACED_IN_FLIGHT):
                tally.behind += tally.recording
                continue
            task = asyncio.create_task(one(call, way))
            open_requests.add(task)
            task.add_done_callback(open_requests.discard)
        await asyncio.gather(*open_requests)

    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        tasks = [asyncio.create_task(anonymous_client(n, client)) for n in range(options.concurrency)]
        tasks += [asyncio.create_task(paced(s, own, STUDENT_INTERVAL_S, client, False)) for s in students]
        tasks.append(asyncio.create_task(paced(flooder, FLOOD_CALLS, FLOOD_INTERVAL_S, client, True)))
        await asyncio.sleep(options.warmup)
        on_start()
        tally.recording = True
        began = time.perf_counter()
        await asyncio.sleep(options.seconds)
        tally.recording = False
        elapsed = time.perf_counter() - began
        on_end()
        stop.set()
        await asyncio.gather(*tasks)
    return tally, elapsed


# -- one phase ------------------------------------------------------------------------------


@dataclass
class Phase:
    workers: int
    tally: Tally
    seconds: float
    memory: dict[str, tuple[float, float, float]]  # process -> start, peak, end (MiB)
    problems: list[str]

    @property
    def rate(self) -> float:
        return self.tally.ok / self.seconds

    @property
    def anonymous_rate(self) -> float:
        return self.tally.anonymous_ok / self.seconds


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def run_phase(
    env: dict[str, str],
    workers: int,
    work: Path,
    stack: contextlib.ExitStack,
    setup: Any,
    options: argparse.Namespace,
) -> Phase:
    print(f"\n== {workers} worker(s): campus-mcp serve --workers {workers}", flush=True)
    log = work / f"serve-{workers}.log"
    first = "scheduler" not in options.processes
    with serving(env, workers, log, prepare=first) as server:
        if first:
            # The first serve has migrated the database and loaded the demo campus; the one
            # scheduler of the run joins now and stays for every phase.
            options.processes["scheduler"] = start_scheduler(env, work / "worker.log", stack)
        scheduler: Server = options.processes["scheduler"]
        origin = f"http://127.0.0.1:{env['CAMPUS_MCP_PORT']}"
        anonymous, own, students, flooder = setup(origin)
        pids = worker_pids(server, workers)
        if len(pids) != workers:
            raise SystemExit(f"found {len(pids)} worker processes of serve, not {workers}; see {log}")
        names = {pid: f"worker {n + 1}" for n, pid in enumerate(pids)}
        names[scheduler.process.pid] = "scheduler (campus-mcp worker)"
        samples: dict[int, list[float]] = {pid: [] for pid in names}

        def sample() -> None:
            for pid in names:
                value = rss_mib(pid)
                if value is not None:
                    samples[pid].append(value)

        async def phase() -> tuple[Tally, float]:
            measuring = asyncio.Event()
            done = asyncio.Event()

            async def sampler() -> None:
                # The start sample when measuring begins (after the warm-up, under load), then
                # every MEMORY_SAMPLE_S for the peak, and the end sample just before the load stops.
                await measuring.wait()
                while not done.is_set():
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(done.wait(), MEMORY_SAMPLE_S)
                    if not done.is_set():
                        sample()

            task = asyncio.create_task(sampler())

            def started() -> None:
                sample()
                measuring.set()

            def ending() -> None:
                sample()
                done.set()

            result = await run_load(origin, anonymous, own, students, flooder, options, started, ending)
            await task
            return result

        print(
            f"   warm-up {options.warmup:g} s, then {options.seconds:g} s measured: {options.concurrency} anonymous "
            f"clients, {len(students)} students at 1/s, 1 student at 4/s (over the limit)",
            flush=True,
        )
        tally, elapsed = asyncio.run(phase())
        problems = []
        now = worker_pids(server, workers)
        if now != pids:
            problems.append(f"serve's worker processes changed during the phase: {pids} -> {now}")
        if server.process.poll() is not None or scheduler.process.poll() is not None:
            problems.append("a server process exited during the phase")
    memory = {names[pid]: (v[0], max(v), v[-1]) for pid, v in samples.items() if v}
    for path in (log, scheduler.log):
        if "Traceback" in path.read_text(errors="replace"):
            problems.append(f"a traceback in {path}")
    return Phase(workers, tally, elapsed, memory, problems)


def report_phase(phase: Phase) -> list[str]:
    """Print one phase; the reasons it fails, if any."""
    tally = phase.tally
    print(
        f"\n{phase.workers} worker(s): {tally.ok} answers in {phase.seconds:.0f} s = {phase.rate:.1f} req/s "
        f"(anonymous {phase.anonymous_rate:.1f} req/s)"
    )
    every = [v for values in tally.latencies.values() for v in values]
    print("| calls | count | p50 ms | p95 ms | p99 ms |\n| --- | --- | --- | --- | --- |")
    for row in sorted(tally.latencies):
        values = tally.latencies[row]
        print(
            f"| {row} | {len(values)} | {percentile(values, 50):.1f} | {percentile(values, 95):.1f} | "
            f"{percentile(values, 99):.1f} |"
        )
    print(
        f"| all | {len(every)} | {percentile(every, 50):.1f} | {percentile(every, 95):.1f} | {percentile(every, 99):.1f} |"
    )
    failures = list(phase.problems)
    errors = sum(tally.errors.values())
    print(f"errors: {errors}" + "".join(f"\n  {count} x {kind}" for kind, count in tally.errors.most_common()))
    if errors:
        failures.append(f"{errors} unexpected error(s)")
    if tally.behind:
        print(f"paced requests not sent (the student already had {PACED_IN_FLIGHT} open): {tally.behind}")
    refused = tally.flood[RATE_LIMITED]
    print(f"student over the limit: {tally.flood['ok']} answered, {refused} refused (429 or rate-limited tool error)")
    if refused == 0:
        failures.append("the student over the limit was never refused")
    print("| process | RSS at start (MiB) | peak | end | growth |\n| --- | --- | --- | --- | --- |")
    for name, (start, peak, end) in phase.memory.items():
        growth = (end - start) / start
        print(f"| {name} | {start:.1f} | {peak:.1f} | {end:.1f} | {growth * 100:+.1f}% |")
        if growth >= MAX_GROWTH:
            failures.append(f"{name}'s memory grew {growth * 100:.1f}% (limit {MAX_GROWTH * 100:.0f}%)")
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=5.0, help="Measured minutes per phase (default 5).")
    parser.add_argument("--warmup", type=float, default=None, help="Seconds of load before measuring (default 45).")
    parser.add_argument("--quick", action="store_true", help="A smoke run: 30 s phases after a 15 s warm-up.")
    parser.add_argument("--concurrency", type=int, default=8, help="Anonymous clients (default 8).")
    parser.add_argument("--students", type=int, default=4, help="Signed-in students at 1 request/s (default 4).")
    parser.add_argument("--seed", type=int, default=15, help="Seed of the request mix.")
    parser.add_argument("--database-url", default="", help="Use this PostgreSQL (a throwaway database).")
    parser.add_argument("--redis-url", default="", help="Use this Redis instead of starting one.")
    parser.add_argument("--work", type=Path, default=None, help="Folder for logs (default: a temporary one).")
    options = parser.parse_args()
    options.seconds = 30.0 if options.quick else options.minutes * 60
    if options.warmup is None:
        options.warmup = 15.0 if options.quick else 45.0

    with contextlib.ExitStack() as stack:
        temporary = Path(tempfile.mkdtemp(prefix="campus-soak-", dir="/tmp"))
        stack.callback(shutil.rmtree, temporary, True)
        work = (options.work or temporary / "logs").resolve()
        work.mkdir(parents=True, exist_ok=True)
        database_url = options.database_url or stack.enter_context(private_postgres())
        if not database_url.startswith("postgresql"):
            raise SystemExit("--database-url: the soak runs on PostgreSQL (postgresql+asyncpg://...)")
        redis_url = options.redis_url or stack.enter_context(private_redis(temporary / "redis"))
        env = campus_env(database_url, redis_url, free_port(), work, options.students)
        print(
            f"{date.today()} · {platform.node() or 'this machine'} · {os.cpu_count()} cores · load average "
            f"{os.getloadavg()[0]:.1f} · PostgreSQL and Redis on loopback · logs in {work}",
            flush=True,
        )
        names = [f"student{n}" for n in range(1, options.students + 2)]
        state: dict[str, Any] = {}

        def setup(origin: str) -> tuple[list[Call], list[Call], list[Student], Student]:
            # Once, after the first start has migrated the database and loaded the demo campus.
            if not state:
                made, scopes = asyncio.run(mint_tokens(env, names))
                rng = random.Random(options.seed)
                state["anonymous"] = anonymous_calls(*asyncio.run(campus_samples(origin)), rng)
                state["own"] = student_calls(scopes)
                state["students"], state["flooder"] = made[:-1], made[-1]
                print(
                    f"   {len(state['anonymous'])} catalog questions; student tools {', '.join(c.tool for c in state['own'])} "
                    f"for {', '.join(s.username for s in made)}",
                    flush=True,
                )
            return state["anonymous"], state["own"], state["students"], state["flooder"]

        phases: list[Phase] = []
        failures: list[str] = []
        options.processes = {}
        for workers in (1, 2):
            phases.append(run_phase(env, workers, work, stack, setup, options))
            failures += [f"{workers} worker(s): {f}" for f in report_phase(phases[-1])]

        one, two = phases
        print(
            f"\ntwo workers / one: {two.rate / one.rate:.2f}x all answers ({one.rate:.1f} -> {two.rate:.1f} req/s), "
            f"{two.anonymous_rate / one.anonymous_rate:.2f}x anonymous ({one.anonymous_rate:.1f} -> "
            f"{two.anonymous_rate:.1f} req/s); load average now {os.getloadavg()[0]:.1f}"
        )
        if failures:
            print("\nFAILED:\n  " + "\n  ".join(failures))
            sys.exit(1)
        print("\nOK: no unexpected error, every worker's memory grew less than 10%.")


if __name__ == "__main__":
    main()
