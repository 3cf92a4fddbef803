"""``/healthz`` while ten anonymous GraphQL queries near the cost limit run at once (issue 30.4).

Builds the SQLite demo campus (``campus-mcp demo``, skipped when the database exists), starts
``campus-mcp serve`` on a free loopback port with anonymous access and the test's trusted proxy
(so a request names its address in X-Forwarded-For), then for each ``--in-flight`` value sends
``--rounds`` rounds of ten queries at once from one address, timing ``/healthz`` back to back
meanwhile. It prints the median and maximum of ``/healthz``, the queries answered and refused,
and the seconds a round took. Bounded: a few rounds, loopback only.

    .venv/bin/python bench/graphql_at_once.py --in-flight 10 --in-flight 2 --work var/bench

Not a test: the figures go into the report and docs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from search_sections import build_campus, campus_env, command, free_port, wait_until_answering

AT_ONCE = 10
# Near the cost limit (10,000): 75 sections, each with its course and ten of its sections.
QUERY = (
    "{ sections(limit: 75) { total sections { crn title course_code open_seats "
    "course { code title offered_sections(limit: 10) { total sections { crn title section_number "
    "meetings { days start end } course { code title } } } } } } }"
)


@contextlib.contextmanager
def served(database: Path, log: Path, in_flight: int) -> Iterator[str]:
    env = campus_env(database)
    env["CAMPUS_MCP_TRUSTED_PROXIES"] = "127.0.0.1"
    env["CAMPUS_MCP_CATALOG_GRAPHQL_IN_FLIGHT"] = str(in_flight)
    env["CAMPUS_MCP_CATALOG_ANSWER_CACHE_ENTRIES"] = "0"
    env["CAMPUS_MCP_RATE_LIMIT_OVERRIDES"] = "api/address=10000000"
    port = free_port()
    args = [command("campus-mcp"), "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_until_answering(process, port, log)
            time.sleep(5)  # the catalog's start-up work in the background
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            process.wait(timeout=30)


async def one_round(base: str) -> tuple[list[float], list[int], float]:
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        await client.get("/healthz")
        started = time.perf_counter()
        queries = asyncio.gather(
            *(
                client.post("/api/v1/graphql", json={"query": QUERY}, headers={"X-Forwarded-For": "198.51.100.7"})
                for _ in range(AT_ONCE)
            )
        )
        timings: list[float] = []
        while not queries.done() or not timings:
            before = time.perf_counter()
            await client.get("/healthz")
            timings.append(time.perf_counter() - before)
        answers = await queries
        return timings, [a.status_code for a in answers], time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--in-flight", type=int, action="append", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("var/bench"))
    options = parser.parse_args()
    database = (options.work / "graphql-at-once.sqlite").resolve()
    build_campus(database, 1)
    for in_flight in options.in_flight:
        with served(database, options.work / f"graphql-at-once-{in_flight}.log", in_flight) as base:
            timings: list[float] = []
            statuses: list[int] = []
            seconds: list[float] = []
            for _ in range(options.rounds):
                t, s, r = asyncio.run(one_round(base))
                timings += t
                statuses += s
                seconds.append(r)
        print(
            f"in_flight={in_flight}: /healthz median {statistics.median(timings) * 1000:.0f} ms, "
            f"max {max(timings) * 1000:.0f} ms ({len(timings)} checks); "
            f"{statuses.count(200)} answered, {statuses.count(429)} refused; "
            f"round {statistics.median(seconds):.2f} s (pid {os.getpid()})"
        )


if __name__ == "__main__":
    main()
