"""What one call costs the server: the SQL statements it runs and the source files it enters,
for every tool, on both protocol versions of ``/api/mcp`` and on its REST twin.

    .venv/bin/python bench/call_cost.py                        # every tool, SQLite demo campus
    .venv/bin/python bench/call_cost.py --tool my_courses --show   # one tool, each statement and file
    .venv/bin/python bench/call_cost.py --json > cost.json     # for machines
    .venv/bin/python bench/call_cost.py --database-url postgresql+asyncpg://campus@127.0.0.1:55432/cost

The campus (every family, the demo data) is served in this process by uvicorn, on a thread of its
own with its own event loop; the calls come from this process's main thread over loopback HTTP,
with an OAuth access token of demo student 1 holding every scope (what ``campus-mcp token``
issues), or none for a tool whose example is anonymous. Each tool is called with its first demo
example (``register_tool_examples``), twice to warm up (imports done, caches of the process
filled), then once measured:

- **statements**: every SQL statement the engine sends during the call (SQLAlchemy's
  ``before_cursor_execute`` on the deployment's engine), counted only for the call's own request
  (a context variable set by an ASGI wrapper around the app, which the call's tasks and
  SQLAlchemy's greenlets inherit), so the access log's batched writer or a refresh worker running
  meanwhile is not counted. Statements a task started by the call makes after the answer went
  out are counted apart ("after").
- **files entered**: the distinct source files whose code ran for the call, on the server's
  event loop (``sys.setprofile`` on the server's thread: every function called or coroutine
  resumed), by the same context variable: the host (``host/campus_mcp``), the plugins
  (``plugins/``, ``examples/``), and apart the dependencies (site-packages) and the standard
  library. The database driver's own thread (aiosqlite) is not counted.

A write tool is measured as a student confirms it: on 2026-07-28 with form elicitation declared,
round 1 (the question) and round 2 (the answer, accepted); on 2025-11-25 the chat's code (round 1
answers a question and a code, round 2 brings the code). Its warm-up is the same rounds
declined (round 1 only on 2025-11-25), so nothing changes before the measured call; the REST twin
applies at once. Between the measured wires of a write tool the SQLite database is put back as it
was (SQLite's backup), so each wire makes the same change; on PostgreSQL a write tool is measured
on 2026-07-28 only (said in the output).

The profiler slows every call several times over: figures of time are not taken here (see
bench/mcp_vs_rest.py). Not a test: the figures go into the README and docs/performance.md, and the
tests that hold the statement counts call the served app (tests/mcp/test_call_statements.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import contextvars
import dataclasses
import json
import os
import platform
import re
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_sections import command, demo_is_current, free_port, served_env, speed_switches, stamp_demo

ROOT = Path(__file__).resolve().parents[1]
WIRES = ("2025-11-25", "2026-07-28")
REST = "REST"
ASKS_SINCE = "2026-07-28"
WARM_UPS = 2
# A task the call started may write after its answer went out (none does today): waited for this long.
AFTER_S = 0.3
HOST_ROOT = str(ROOT / "host" / "campus_mcp") + os.sep
PLUGIN_ROOTS = (str(ROOT / "plugins") + os.sep, str(ROOT / "examples") + os.sep)
STDLIB = sysconfig.get_paths()["stdlib"] + os.sep
TOKEN_NAME = "bench/call_cost.py"
STUDENT = "student1"
CODE = re.compile(r'"confirmation": "([^"]+)"')


# -- what one call did -----------------------------------------------------------------------


@dataclasses.dataclass
class Recording:
    """What the server did for one request: its statements and the files its code ran in."""

    statements: list[str] = dataclasses.field(default_factory=list)
    files: set[str] = dataclasses.field(default_factory=set)
    after: list[str] = dataclasses.field(default_factory=list)
    finished: threading.Event = dataclasses.field(default_factory=threading.Event)


CALL: contextvars.ContextVar[Recording | None] = contextvars.ContextVar("call_cost_recording", default=None)


class Tracer:
    """Wraps the app: the next request after :meth:`arm` is recorded (statements and files)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._armed: Recording | None = None
        self._lock = threading.Lock()

    def arm(self) -> Recording:
        recording = Recording()
        with self._lock:
            self._armed = recording
        return recording

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        recording = None
        if scope["type"] == "http":
            with self._lock:
                recording, self._armed = self._armed, None
        if recording is None:
            await self.app(scope, receive, send)
            return
        token = CALL.set(recording)
        try:
            await self.app(scope, receive, send)
        finally:
            CALL.reset(token)
            recording.finished.set()

    @staticmethod
    def profile(frame: Any, event: str, _arg: Any) -> None:
        if event == "call":
            recording = CALL.get()
            if recording is not None:
                recording.files.add(frame.f_code.co_filename)

    @staticmethod
    def statement(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        recording = CALL.get()
        if recording is not None:
            (recording.after if recording.finished.is_set() else recording.statements).append(statement)


def kind_of_file(name: str) -> str:
    if name.startswith(HOST_ROOT):
        return "host"
    if name.startswith(PLUGIN_ROOTS):
        return "plugin"
    if name.startswith(STDLIB) and "site-packages" not in name:
        return "stdlib"
    if name.startswith("<"):  # <frozen ...>, <string> (code made at run time: dataclasses, SQLAlchemy)
        return "generated"
    return "dependency"


def shown_file(name: str) -> str:
    for root, label in ((HOST_ROOT, "host/campus_mcp/"), *((r, "") for r in PLUGIN_ROOTS)):
        if name.startswith(root):
            return label + name[len(root) :]
    site = name.find("site-packages" + os.sep)
    return name[site + len("site-packages") + 1 :] if site >= 0 else name.removeprefix(STDLIB)


@dataclasses.dataclass
class Measured:
    tool: str
    wire: str
    round: str  # "call", or "question" and "confirmed" for a write's two rounds
    status: str  # "ok", or what went wrong
    statements: list[str]
    after: list[str]
    files: dict[str, list[str]]  # kind -> files

    def count(self, *kinds: str) -> int:
        return sum(len(self.files.get(kind, [])) for kind in kinds)

    @property
    def path(self) -> str:
        """Which way answered: the REST twin, the SDK's transport, or the short way of a read."""
        if self.wire == REST:
            return "REST"
        # The SDK's runner answers what the short way (speedups/fast_call.py) declines.
        return "SDK" if "mcp/server/runner.py" in self.files.get("dependency", []) else "fast"


def measured(tool: str, wire: str, round_: str, status: str, recording: Recording) -> Measured:
    files: dict[str, list[str]] = {}
    for name in recording.files:
        files.setdefault(kind_of_file(name), []).append(shown_file(name))
    return Measured(
        tool,
        wire,
        round_,
        status,
        list(recording.statements),
        list(recording.after),
        {k: sorted(v) for k, v in sorted(files.items())},
    )


# -- the served campus -----------------------------------------------------------------------


def campus_environment(work: Path, url: str | None, port: int) -> dict[str, str]:
    """Every family, the demo students, sign-in required, served on ``port``; the caller's speed-up
    switches and none of its other CAMPUS_MCP_ settings (bench/search_sections.py's served_env)."""
    env = served_env()
    env.update(
        {
            "CAMPUS_MCP_DATABASE_URL": url or f"sqlite+aiosqlite:///{work / 'call-cost.db'}",
            "CAMPUS_MCP_SCHEDULER": "false",
            "CAMPUS_MCP_CONFIG": str(work / "call-cost.absent.toml"),
            "CAMPUS_MCP_VAR_DIR": str(work / "var-call-cost"),
            "CAMPUS_MCP_PORT": str(port),
            "CAMPUS_MCP_RATE_LIMIT_OVERRIDES": "api/user=10000000,api/address=10000000",
        }
    )
    return env


def build_demo(work: Path, env: dict[str, str], url: str | None) -> str:
    """The demo campus to measure: for SQLite a fresh copy of a demo database built once (the
    writes of a run stay in its copy); for PostgreSQL the database given, loaded when empty."""
    if url:
        subprocess.run([command("campus-mcp"), "demo"], env=env, check=True, stdin=subprocess.DEVNULL)
        return "the database given, demo loaded"
    built = work / "call-cost-demo.db"
    note = "existing demo database"
    if not demo_is_current(built):
        work.mkdir(parents=True, exist_ok=True)
        building = work / "call-cost-demo.building.db"
        building.unlink(missing_ok=True)
        started = time.perf_counter()
        subprocess.run(
            [command("campus-mcp"), "demo"],
            env=env | {"CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{building}"},
            check=True,
            stdin=subprocess.DEVNULL,
        )
        with contextlib.closing(sqlite3.connect(building)) as connection:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        building.rename(built)
        stamp_demo(built)
        note = f"demo loaded in {time.perf_counter() - started:.0f} s"
    run = work / "call-cost.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{run}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(built, run)
    return note


@contextlib.contextmanager
def served(app: Any, port: int) -> Iterator[None]:
    """``app`` under uvicorn on 127.0.0.1:``port``, on a thread with its own event loop, profiled."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    failed: list[BaseException] = []

    def run() -> None:
        sys.setprofile(Tracer.profile)
        try:
            server.run()
        except BaseException as exc:  # said below, in the main thread
            failed.append(exc)

    thread = threading.Thread(target=run, name="served-campus", daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if failed or not thread.is_alive():
            raise SystemExit(f"the campus did not start: {failed[0] if failed else 'its thread ended'}")
        if time.monotonic() > deadline:
            raise SystemExit("the campus did not start in 120 s")
        time.sleep(0.05)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=30)


# -- the calls --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Call:
    tool: str
    arguments: dict[str, Any]
    writes: bool
    user: str | None
    rest: tuple[str, str] | None  # the REST twin's method and path template


def mcp_body(call: Call, wire: str, extra: Mapping[str, Any] | None = None) -> tuple[dict[str, str], bytes]:
    params: dict[str, Any] = {"name": call.tool, "arguments": call.arguments}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": wire,
    }
    if wire >= ASKS_SINCE:
        headers.update({"mcp-method": "tools/call", "mcp-name": call.tool})
        capabilities = {"elicitation": {"form": {}}} if call.writes else {}
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": wire,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        }
    params.update(extra or {})
    return headers, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()


def rest_request(call: Call) -> tuple[str, str, bytes | None]:
    assert call.rest is not None
    method, template = call.rest
    arguments = dict(call.arguments)
    path = re.sub(r"\{(\w+)\}", lambda m: quote(str(arguments.pop(m.group(1))), safe=""), template)
    if method in ("GET", "DELETE"):
        pairs = [(k, v) for k, vs in arguments.items() for v in (vs if isinstance(vs, list) else [vs])]
        return method, path + ("?" + urlencode(pairs) if pairs else ""), None
    return method, path, json.dumps(arguments).encode()


class Caller:
    def __init__(self, client: httpx.Client, tracer: Tracer, tokens: Mapping[str | None, str]) -> None:
        self.client = client
        self.tracer = tracer
        self.tokens = tokens

    def _auth(self, call: Call, wire: str) -> dict[str, str]:
        # The REST API takes a personal access token; /api/mcp an app's OAuth token. An anonymous
        # example (a catalog question) is asked by student 1's app too: a signed-in app asks it so.
        token = self.tokens[f"{call.user or STUDENT}/{'personal' if wire == REST else 'oauth'}"]
        return {"authorization": f"Bearer {token}"}

    def send(
        self, call: Call, wire: str, extra: Mapping[str, Any] | None = None, *, record: bool
    ) -> tuple[httpx.Response, Recording | None]:
        recording = self.tracer.arm() if record else None
        if wire == REST:
            method, path, body = rest_request(call)
            headers = self._auth(call, wire) | ({"content-type": "application/json"} if body is not None else {})
            response = self.client.request(method, path, content=body, headers=headers)
        else:
            headers, body = mcp_body(call, wire, extra)
            response = self.client.post("/api/mcp", content=body, headers=headers | self._auth(call, wire))
        if recording is not None:
            if not recording.finished.wait(60):
                raise SystemExit(f"{call.tool} on {wire}: the server never finished the call")
            time.sleep(AFTER_S)
        return response, recording


def status_of(response: httpx.Response, wire: str, *, in_chat: bool = False) -> str:
    if wire == REST:
        return "ok" if response.is_success else f"HTTP {response.status_code}: {response.text[:160]}"
    if response.status_code != 200:
        return f"HTTP {response.status_code}: {response.text[:160]}"
    answer = response.json()
    if "error" in answer:
        return f"JSON-RPC error: {json.dumps(answer['error'])[:160]}"
    if in_chat and CODE.search(response.text.replace('\\"', '"')):
        return "ok"  # the question and its code, shown in the chat (an error result: nothing changed)
    if answer["result"].get("isError"):
        return f"tool error: {json.dumps(answer['result'].get('content'))[:160]}"
    return "ok"


def read_rounds(caller: Caller, call: Call, wire: str) -> list[Measured]:
    for _ in range(WARM_UPS):
        caller.send(call, wire, record=False)
    response, recording = caller.send(call, wire, record=True)
    assert recording is not None
    return [measured(call.tool, wire, "call", status_of(response, wire), recording)]


def _result(response: httpx.Response) -> dict[str, Any]:
    answer = response.json()
    result = answer.get("result")
    if not isinstance(result, dict):
        raise SystemExit(f"no result: {response.text[:300]}")
    return result


def _answered(result: Mapping[str, Any], accept: bool) -> dict[str, Any]:
    """Round 2's params of a 2026-07-28 question: each input request answered (the form's box
    ticked, or declined), and the sealed state handed back."""
    responses = {
        key: {"action": "accept", "content": {key: True}} if accept else {"action": "decline"}
        for key in result.get("inputRequests", {})
    }
    return {"inputResponses": responses, "requestState": result["requestState"]}


def write_rounds(caller: Caller, call: Call, wire: str) -> list[Measured]:
    if wire == REST:
        response, recording = caller.send(call, wire, record=True)
        assert recording is not None
        return [measured(call.tool, wire, "call", status_of(response, wire), recording)]
    if wire >= ASKS_SINCE:
        for _ in range(WARM_UPS):
            first, _ = caller.send(call, wire, record=False)
            result = _result(first)
            if "requestState" in result:
                caller.send(call, wire, _answered(result, accept=False), record=False)
        first, asked = caller.send(call, wire, record=True)
        result = _result(first)
        assert asked is not None
        rows = [measured(call.tool, wire, "question", status_of(first, wire), asked)]
        if "requestState" not in result:
            rows[0].status = f"no question: {json.dumps(result)[:160]}"
            return rows
        second, confirmed = caller.send(call, wire, _answered(result, accept=True), record=True)
        assert confirmed is not None
        return [*rows, measured(call.tool, wire, "confirmed", status_of(second, wire), confirmed)]
    for _ in range(WARM_UPS):
        caller.send(call, wire, record=False)
    first, asked = caller.send(call, wire, record=True)
    assert asked is not None
    rows = [measured(call.tool, wire, "question", status_of(first, wire, in_chat=True), asked)]
    found = CODE.search(json.dumps(_result(first)).replace('\\"', '"'))
    if found is None:
        rows[0].status = f"no code: {first.text[:160]}"
        return rows
    coded = dataclasses.replace(call, arguments={**call.arguments, "confirmation": found.group(1)})
    second, confirmed = caller.send(coded, wire, record=True)
    assert confirmed is not None
    return [*rows, measured(call.tool, wire, "confirmed", status_of(second, wire), confirmed)]


# -- the run ----------------------------------------------------------------------------------


def calls_of(registry: Any) -> list[Call]:
    calls: list[Call] = []
    for name, tool in sorted(registry.tools.items(), key=lambda item: (item[1].plugin, item[0])):
        examples = [e for e in registry.tool_examples if e.tool == name and e.data == "demo"]
        if not examples:
            continue
        arguments = examples[0].arguments
        # The REST twin the example's arguments can call: every parameter of its path given.
        twin = next(
            (
                m
                for m in tool.mirrors
                if m.method != "DELETE" and set(re.findall(r"\{(\w+)\}", m.path)) <= set(arguments)
            ),
            None,
        )
        calls.append(
            Call(
                name,
                dict(examples[0].arguments),
                tool.writes,
                examples[0].user,
                (twin.method, twin.path) if twin is not None else None,
            )
        )
    return calls


async def prepare(registry: Any, database_url: str, tool: str) -> str | None:
    """The ``prepare`` of ``tool``'s first demo example (rows a write example needs), in a
    session of its own; what went wrong, if it did."""
    from campus_mcp.base.db import make_engine, make_sessions

    example = next(e for e in registry.tool_examples if e.tool == tool and e.data == "demo")
    if example.prepare is None:
        return None
    engine = make_engine(database_url)
    try:
        async with make_sessions(engine)() as session:
            await example.prepare(session)
    except Exception as exc:  # a PostgreSQL database prepared by an earlier run
        return f"{tool}: {type(exc).__name__}"
    finally:
        await engine.dispose()
    return None


async def issue_token(deployment: Any, username: str) -> str:
    from campus_mcp.oauth.token_cli import issue

    token, _scope = await issue(deployment, username, sorted(deployment.registry.scopes), 60)
    return token


def snapshot(database: Path) -> sqlite3.Connection:
    kept = sqlite3.connect(":memory:")
    with contextlib.closing(sqlite3.connect(database)) as source:
        source.backup(kept)
    return kept


def restore(kept: sqlite3.Connection, database: Path) -> None:
    with contextlib.closing(sqlite3.connect(database, timeout=30)) as target:
        kept.backup(target)


def run(options: argparse.Namespace) -> dict[str, Any]:
    work = options.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = campus_environment(work, options.database_url, port)
    demo_note = build_demo(work, env, options.database_url)
    os.environ.update(env)

    from campus_mcp import Settings
    from campus_mcp.assembly.registry import load_registry
    from campus_mcp.base.speedups import Switches
    from campus_mcp.web.app import create_app
    from sqlalchemy import event

    settings = Settings()
    registry = load_registry(settings)
    app = create_app(registry=registry, run_scheduler=False)
    deployment = app.state.deployment
    engine = deployment.engine
    failed_prepares: list[str] = []
    users = sorted({STUDENT, *(c.user for c in calls_of(registry) if c.user is not None)})
    tokens = asyncio.run(_tokens(settings, users))
    database = None if options.database_url else work / "call-cost.db"
    pristine = snapshot(database) if database is not None else None
    calls = [c for c in calls_of(registry) if not options.tool or c.tool in options.tool]
    unknown = set(options.tool or ()) - {c.tool for c in calls}
    if unknown:
        raise SystemExit(f"--tool: no tool with a demo example named {', '.join(sorted(unknown))}")
    tracer = Tracer(app)
    event.listen(engine.sync_engine, "before_cursor_execute", Tracer.statement)
    load_at_start = os.getloadavg()
    rows: list[Measured] = []
    with served(tracer, port), httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
        caller = Caller(client, tracer, tokens)
        for call in calls:
            wires = [*WIRES, REST] if call.rest is not None else list(WIRES)
            if call.writes and database is None:
                wires = [ASKS_SINCE]
            kept = None
            if call.writes:
                # A write's example runs on the demo campus as it was, with the rows its prepare adds
                # (each example is written for a campus of its own); each wire starts from there.
                if pristine is not None and database is not None:
                    restore(pristine, database)
                failed = asyncio.run(prepare(registry, settings.database_url, call.tool))
                if failed:
                    failed_prepares.append(failed)
                kept = snapshot(database) if database is not None else None
            for wire in wires:
                if kept is not None and database is not None:
                    restore(kept, database)
                rows += (write_rounds if call.writes else read_rounds)(caller, call, wire)
            if not options.json:
                print(f"  {call.tool} measured", file=sys.stderr)
    switches = Switches.of(settings)
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.node() or 'this machine'}, {os.cpu_count()} cores",
        "load_average": {"at_start": load_at_start, "at_end": os.getloadavg()},
        "python": platform.python_version(),
        "database": engine.dialect.name,
        "database_driver": f"{engine.dialect.driver} ({type(engine.dialect.dbapi).__name__})",
        "demo": demo_note,
        "speedup_switches_given": speed_switches(),
        "speedups": dataclasses.asdict(switches),
        "wires": [*WIRES, "REST twin"],
        "student_access_log": settings.student_access_log,
        "warm_ups": WARM_UPS,
        "prepare_failed": failed_prepares,
        "writes_on_every_wire": database is not None,
        "calls": [dataclasses.asdict(r) for r in rows],
    }


async def _tokens(settings: Any, users: list[str]) -> dict[str, str]:
    """For each user of an example: an OAuth access token (``user/oauth``, what an app holds) and a
    personal access token (``user/personal``, what the REST API takes), each with every scope."""
    from campus_mcp.assembly.deployment import open_deployment
    from campus_mcp.oauth.accounts import student_by_username
    from campus_mcp.oauth.personal_tokens import PersonalToken, PersonalTokens
    from sqlalchemy import delete

    tokens = {}
    async with open_deployment(settings, migrate=False) as deployment:
        scope = " ".join(sorted(deployment.registry.scopes))
        for user in users:
            tokens[f"{user}/oauth"] = await issue_token(deployment, user)
            async with deployment.session() as session:
                student = await student_by_username(session, user)
                assert student is not None, user
                await session.execute(delete(PersonalToken).where(PersonalToken.name == TOKEN_NAME))
                await session.commit()
            personal = PersonalTokens(deployment.sessions, settings)
            tokens[f"{user}/personal"] = await personal.create(student.id, name=TOKEN_NAME, scope=scope, days=7)
    return tokens


# -- the report -------------------------------------------------------------------------------


def report(figures: dict[str, Any], show: bool) -> None:
    print(f"\n{figures['date']} · {figures['machine']} · Python {figures['python']}")
    start, end = (" ".join(f"{x:.1f}" for x in figures["load_average"][k]) for k in ("at_start", "at_end"))
    print(f"load average (1, 5, 15 min) at start {start}, at end {end}")
    print(f"database: {figures['database']}, driver {figures['database_driver']}; {figures['demo']}")
    given = figures["speedup_switches_given"]
    print(
        "speed-ups: "
        + ", ".join(f"{k}={'on' if v else 'off'}" for k, v in figures["speedups"].items())
        + f" (switches given: {', '.join(f'{k}={v}' for k, v in sorted(given.items())) or 'none, the defaults'})"
    )
    print(
        f"wires: MCP {' and MCP '.join(WIRES)} over HTTP, and the REST twin; student access log "
        f"{'on' if figures['student_access_log'] else 'off'}; {figures['warm_ups']} warm-up calls before each measured one"
    )
    if not figures["writes_on_every_wire"]:
        print("writes measured on 2026-07-28 only (PostgreSQL: the database is not put back between wires)")
    if figures["prepare_failed"]:
        print(f"examples' prepare failed (rows already there?): {', '.join(figures['prepare_failed'])}")
    print(
        "\n| tool | wire | round | statements | files host+plugin | host | plugin | dependencies | stdlib | path |"
        "\n| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    )
    for raw in figures["calls"]:
        row = Measured(**raw)
        after = f" (+{len(row.after)} after)" if row.after else ""
        path = row.path
        status = "" if row.status == "ok" else f" **{row.status}**"
        print(
            f"| {row.tool} | {row.wire} | {row.round} | {len(row.statements)}{after} | {row.count('host', 'plugin')} "
            f"| {row.count('host')} | {row.count('plugin')} | {row.count('dependency', 'generated')} "
            f"| {row.count('stdlib')} | {path}{status} |"
        )
    goals(figures["calls"])
    if show:
        for raw in figures["calls"]:
            row = Measured(**raw)
            print(f"\n### {row.tool}, {row.wire}, {row.round}: {len(row.statements)} statements")
            for number, statement in enumerate(row.statements, 1):
                print(f"{number:3}. {' '.join(statement.split())[:220]}")
            for statement in row.after:
                print(f"  after. {' '.join(statement.split())[:220]}")
            for kind in ("host", "plugin"):
                print(f"{kind} files: {', '.join(row.files.get(kind, []))}")


# Issue 36's goals: my_courses at most 5 statements and 20 files (host and plugins) on /api/mcp; a
# confirmed update_calendar_settings at most 8 statements over its two rounds.
GOALS = {"my_courses": (5, 20), "update_calendar_settings": (8, None)}


def goals(calls: list[dict[str, Any]]) -> None:
    rows = [Measured(**raw) for raw in calls]
    lines = []
    for tool, (statements, files) in GOALS.items():
        for wire in WIRES:
            mine = [r for r in rows if r.tool == tool and r.wire == wire]
            if not mine:
                continue
            count = sum(len(r.statements) for r in mine)
            entered = max(r.count("host", "plugin") for r in mine)
            line = f"  {tool}, {wire}: {count} statements{' over its two rounds' if len(mine) > 1 else ''} (goal {statements})"
            if files is not None:
                line += f", {entered} files of the host and plugins (goal {files})"
            lines.append(line)
    if lines:
        print("\nIssue 36's goals:")
        print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", action="append", help="Only this tool (repeatable).")
    parser.add_argument("--show", action="store_true", help="Print each call's statements and files too.")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON only.")
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="Folder for the databases.")
    parser.add_argument("--database-url", help="Measure on this PostgreSQL database instead of a SQLite copy.")
    options = parser.parse_args()
    figures = run(options)
    if options.json:
        json.dump(figures, sys.stdout, indent=1)
        print()
    else:
        report(figures, options.show)


if __name__ == "__main__":
    main()
