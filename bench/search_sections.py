"""Latency of ``search_sections`` through ``/api/mcp``, on the default and on a scaled demo campus.

For each scale it builds a SQLite demo campus (``campus-mcp demo --scale N``, skipped when the
database already exists), starts ``campus-mcp serve`` (uvicorn) on a free loopback port with
anonymous access, and calls ``search_sections`` with the MCP SDK client over HTTP, one call at a
time, for several kinds of question. It prints p50 and p95 per kind and the ratio of the scaled
campus to the default one. Bounded: a fixed number of calls per kind, loopback only.

    .venv/bin/python bench/search_sections.py --scale 1 --scale 67 --calls 100 --work var/bench
    .venv/bin/python bench/search_sections.py --scale 67 --database-url postgresql+asyncpg://campus@127.0.0.1:55432/bench67

With ``--database-url`` (one scale) it serves that database instead, created and loaded when it
has no sections yet (``bench/mcp_vs_rest.py``'s ``build_target``). The answer cache is off: every
call runs the query (the warm-up calls would otherwise leave only cached answers to measure).

Not a test: speed is measured here and written into docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

# The kit's port pick (below the ephemeral range, which the benchmark's own clients draw from);
# the other benchmarks import it from here.
from campus_mcp.testing.oauth import free_port
from mcp import Client

QUESTIONS: dict[str, dict[str, Any]] = {
    "browse the term": {"limit": 25},
    "one subject": {"subject": "COMP", "limit": 25},
    "days and times": {"days": "TR", "begins_after": "10:00", "ends_before": "15:00", "open_only": True},
    "title words": {"q": "introduction programming", "limit": 25},
    # A surname (290 instructors of --scale 67, 495 sections of the term).
    "one instructor": {"instructor": "garcia", "limit": 25},
    "meaning, repeated": {"q": "a class about the stock market", "semantic": True, "limit": 10},
    # The server keeps recent questions' vectors: this row asks a new question each call (see
    # new_question), so every call embeds its words, as a student's first question does.
    "meaning, new": {"q": "", "semantic": True, "limit": 10},
}
WARMUP_CALLS = 5
NEW_TOPICS = (
    "databases",
    "watercolor painting",
    "robots",
    "bridges",
    "climate change",
    "ancient Rome",
    "marketing a startup",
    "writing poetry",
    "machine learning",
    "nutrition",
    "public speaking",
    "jazz history",
    "circuits",
    "game design",
    "the human brain",
    "ethics",
    "city planning",
    "accounting",
    "photography",
    "statistics",
    "film",
    "cyber security",
    "renewable energy",
    "music theory",
    "sculpture",
    "world religions",
    "linear algebra",
    "supply chains",
    "oceans",
    "genetics",
    "negotiation",
    "earthquakes",
    "social media",
    "astronomy",
    "3d printing",
    "theatre",
)
START_TIMEOUT_S = 300
# The server's warm-up (vector snapshots, the model) runs after it answers /healthz: 18 s at
# --scale 67, reading the database beside the calls. Measured before it ended, the first rows
# (browse, subject) took its time: p95 270-490 ms instead of ~40.
WARM_LINE = b"search by meaning is ready"
WARM_TIMEOUT_S = 180


def speed_switches() -> dict[str, str]:
    """The caller's speed-up switches: ``CAMPUS_MCP_SPEEDUPS`` and each mechanism's own."""
    from dataclasses import fields

    from campus_mcp.base.speedups import Switches

    names = {"CAMPUS_MCP_SPEEDUPS", *(f"CAMPUS_MCP_{switch.name.upper()}" for switch in fields(Switches))}
    return {name: value for name, value in os.environ.items() if name in names}


def served_env() -> dict[str, str]:
    """The environment a served campus starts from: the caller's, less its ``CAMPUS_MCP_``
    settings (a benchmark serves the same campus wherever it is run) but for the speed-up
    switches, which it must see: ``CAMPUS_MCP_SPEEDUPS=off bench/...`` measures the plain path.
    (The switches used to be left out too, and an "off" run's servers ran with every speed-up on.)"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    env.update(speed_switches())
    return env


def campus_env(database: Path) -> dict[str, str]:
    env = served_env()
    env.update(
        {
            "CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{database}",
            "CAMPUS_MCP_PLUGINS": "catalog",
            "CAMPUS_MCP_ANONYMOUS_ACCESS": "true",
            "CAMPUS_MCP_SCHEDULER": "false",
            "CAMPUS_MCP_CONFIG": str(database.with_suffix(".absent.toml")),
        }
    )
    return env


def cold_env(database: Path, url: str | None) -> dict[str, str]:
    """The served campus of a measurement: every call runs the query, no limit is reached."""
    env = campus_env(database)
    if url:
        env["CAMPUS_MCP_DATABASE_URL"] = url
    env["CAMPUS_MCP_CATALOG_ANSWER_CACHE_ENTRIES"] = "0"
    env["CAMPUS_MCP_RATE_LIMIT_OVERRIDES"] = "api/address=10000000,catalog/semantic=10000000"
    return env


def command(name: str) -> str:
    return str(Path(sys.executable).parent / name)


REPOSITORY = Path(__file__).resolve().parent.parent


def demo_stamp() -> str:
    """What a demo database is built from that changes its tables: the families and the names of
    every migration script of the host, the families and the examples."""
    folders = [REPOSITORY / "host" / "campus_mcp", *REPOSITORY.glob("plugins/*/*"), *REPOSITORY.glob("examples/*/*")]
    scripts = [p for folder in folders for p in (folder / "migrations" / "versions").glob("*.py")]
    return "\n".join(sorted(p.relative_to(REPOSITORY).as_posix() for p in scripts))


def demo_is_current(database: Path) -> bool:
    """Whether the demo database kept in the bench's folder was built from the code as it is. One
    built before a family or a migration came (a merge) lacks its tables, and its tools failed on
    it (``no such table``); such a database is removed, so the caller builds it again."""
    stamp = Path(f"{database}.stamp")
    if database.exists() and stamp.exists() and stamp.read_text() == demo_stamp():
        return True
    for suffix in ("", "-wal", "-shm", ".stamp"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    return False


def stamp_demo(database: Path) -> None:
    """Write what ``database`` was built from, for :func:`demo_is_current`."""
    Path(f"{database}.stamp").write_text(demo_stamp())


def build_campus(database: Path, scale: int) -> float | None:
    """Load the demo campus at ``scale``; the seconds it took, or None when it was already there."""
    if demo_is_current(database):
        return None
    database.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    subprocess.run(
        [command("campus-mcp"), "demo", "--scale", str(scale)],
        env=campus_env(database),
        check=True,
        stdin=subprocess.DEVNULL,
    )
    stamp_demo(database)
    return time.perf_counter() - started


def wait_until_answering(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Wait until the ``campus-mcp serve`` of ``process`` answers /healthz on ``port``; stop the
    benchmark, naming its log, when it exits or takes longer than START_TIMEOUT_S."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise SystemExit(f"campus-mcp serve exited with {process.returncode}; see {log}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise SystemExit(f"campus-mcp serve did not answer in {START_TIMEOUT_S}s; see {log}")
        time.sleep(0.3)


@contextlib.contextmanager
def serve(database: Path, log: Path, url: str | None = None) -> Iterator[str]:
    port = free_port()
    args = [command("campus-mcp"), "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            args, env=cold_env(database, url), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        try:
            wait_until_answering(process, port, log)
            deadline = time.monotonic() + WARM_TIMEOUT_S
            while WARM_LINE not in log.read_bytes():
                if process.poll() is not None or time.monotonic() > deadline:
                    print(f"    (no warm-up line in {log} after {WARM_TIMEOUT_S}s: measuring anyway)")
                    break
                time.sleep(0.5)
            yield f"http://127.0.0.1:{port}/api/mcp"
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def new_questions() -> Iterator[str]:
    """Questions never asked before in this run: each topic once, then again with a part number."""
    for number in itertools.count():
        for topic in NEW_TOPICS:
            yield f"a class about {topic}" + (f", part {number}" if number else "")


def asked(arguments: dict[str, Any], questions: Iterator[str] | None) -> dict[str, Any]:
    return {**arguments, "q": next(questions)} if questions is not None else arguments


async def measure(url: str, calls: int, names: list[str]) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {}
    async with Client(url, mode="legacy") as client:
        for name in names:
            arguments = QUESTIONS[name]
            questions = new_questions() if name == "meaning, new" else None
            for _ in range(WARMUP_CALLS):
                await client.call_tool("search_sections", asked(arguments, questions))
            times = []
            for _ in range(calls):
                arguments = asked(QUESTIONS[name], questions)
                started = time.perf_counter()
                result = await client.call_tool("search_sections", arguments)
                times.append((time.perf_counter() - started) * 1000)
                if result.is_error:
                    raise SystemExit(f"{name}: search_sections failed: {result.content}")
            sections = (result.structured_content or {}).get("total")
            print(f"    {name:16s} {calls} calls, total matches {sections}")
            timings[name] = times
    return timings


def percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, action="append", help="Demo scales to measure (default 1 and 67).")
    parser.add_argument("--calls", type=int, default=100, help="Measured calls per kind of question.")
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="Folder for the databases and logs.")
    parser.add_argument("--database-url", help="Serve this database (PostgreSQL: created if missing); one --scale.")
    parser.add_argument(
        "--question", action="append", choices=list(QUESTIONS), help="Measure only these kinds (default: every kind)."
    )
    options = parser.parse_args()
    names = options.question or list(QUESTIONS)
    scales = options.scale or [1, 67]
    if options.database_url and len(scales) != 1:
        parser.error("--database-url names one campus: give exactly one --scale (the scale it is built at).")
    options.work.mkdir(parents=True, exist_ok=True)
    results: dict[int, dict[str, list[float]]] = {}
    for scale in scales:
        database = (options.work / f"demo-scale-{scale}.db").resolve()
        if options.database_url:
            from mcp_vs_rest import build_target  # type: ignore[import-not-found]  # here: it imports this module

            built = build_target(database, options.database_url, scale)
        else:
            built = build_campus(database, scale)
        print(f"scale {scale}: " + (f"demo loaded in {built:.0f} s" if built is not None else "existing database"))
        with serve(database, options.work / f"serve-scale-{scale}.log", options.database_url) as url:
            results[scale] = asyncio.run(measure(url, options.calls, names))

    base = scales[0]
    print("\nsearch_sections through /api/mcp (ms, one client, sequential calls)")
    header = f"{'question':16s}" + "".join(f" | scale {s}: p50 / p95" for s in scales)
    if len(scales) > 1:
        header += "".join(f" | p50 ratio {s}/{base}" for s in scales[1:])
    print(header)
    for name in names:
        row = f"{name:16s}"
        for scale in scales:
            times = results[scale][name]
            row += f" | {percentile(times, 50):9.1f} / {percentile(times, 95):6.1f}"
        for scale in scales[1:]:
            row += f" | {percentile(results[scale][name], 50) / percentile(results[base][name], 50):14.1f}x"
        print(row)


if __name__ == "__main__":
    main()
