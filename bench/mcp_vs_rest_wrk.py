"""search_sections' rows of ``bench/mcp_vs_rest.py``, loaded by wrk instead of httpx.

    apt-get install wrk      # Debian's package; not needed by the tests or CI
    .venv/bin/python bench/mcp_vs_rest_wrk.py --rounds 3 --seconds 4

``mcp_vs_rest.py`` loads the servers from its own Python process with httpx, on the same two
cores. That client costs CPU per request and per byte received, and an MCP answer is 17.2 KB (the
answer twice, as ``structuredContent`` and as its text) against REST's 7.4 KB: the client's own
cost falls unevenly on the rows. wrk, the load tool of issue 16's first table, is C and reads an
answer's bytes without parsing them, so its figures are closer to what the servers can do.

The same servers as ``mcp_vs_rest.py`` (its functions): the demo campus it built under ``--work``
(run it once first; or with ``--database-url``, the database it loaded), ``campus-mcp serve`` with the answer cache off, and the FastMCP 4.2.3 twin.
Each row's answer is checked whole once with httpx before the load (HTTP 200, JSON, no JSON-RPC or
tool error); wrk then counts every answer that is not a 2xx or 3xx, and a row with any is refused.
The rows are interleaved: each round runs every row once, each round starting at another row; a
row's requests/s is the median of its rounds. p50 and p95 are wrk's, from the last round.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import tempfile
from pathlib import Path

import httpx
import mcp_vs_rest as bench  # this folder's: the servers, the questions, the checks
from search_sections import free_port

# The wrk runner is mcp_vs_rest.py's own (its --load wrk): the same scripts and checks.
lua_of, run_wrk = bench.lua_of, bench.run_wrk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0, help="Seconds per row in each round.")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="mcp_vs_rest.py's work folder.")
    parser.add_argument(
        "--database-url", help="A database mcp_vs_rest.py loaded (PostgreSQL), instead of its SQLite file."
    )
    options = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install wrk")
    work = options.work.resolve()
    database = work / "demo-scale-1.db"
    if options.database_url is None and not database.exists():
        raise SystemExit(f"no demo campus at {database}: run bench/mcp_vs_rest.py once first")
    env = bench.target_env(database, options.database_url)
    python = bench.fastmcp_python(work)
    load_at_start = os.getloadavg()
    with contextlib.ExitStack() as servers, tempfile.TemporaryDirectory() as scratch:
        port, twin_port = free_port(), free_port()
        servers.enter_context(bench.campus_server(env, port, work / "wrk-cold.log", cache=False))
        servers.enter_context(bench.fastmcp_server(python, env, twin_port, work / "wrk-fastmcp.log"))
        origin = f"http://127.0.0.1:{port}"
        asked = bench.questions(*asyncio.run(bench.campus_samples(origin)))
        targets = [t for t in bench.campus_targets(origin, asked, "cold") if t.tool == "search_sections"]
        targets += bench.fastmcp_targets(f"http://127.0.0.1:{twin_port}")
        for target in targets:
            target.full_check(httpx.request(target.method, target.url, content=target.body, headers=target.headers))
        scripts = {target.path: lua_of(target, Path(scratch)) for target in targets}
        rates: dict[str, list[float]] = {target.path: [] for target in targets}
        latencies: dict[str, tuple[float, float]] = {}
        for round_number in range(options.rounds):
            start = round_number % len(targets)
            for target in targets[start:] + targets[:start]:
                rate, p50, p95 = run_wrk(target, scripts[target.path], options.seconds, options.connections)
                rates[target.path].append(rate)
                latencies[target.path] = (p50, p95)
    loads = " and ".join(" ".join(f"{x:.1f}" for x in load) for load in (load_at_start, os.getloadavg()))
    engine = "PostgreSQL" if options.database_url else "SQLite"
    print(
        f"search_sections {bench.SUBJECT_PAGE}, {engine}, cold, wrk -t1 -c{options.connections}, {options.rounds} rounds"
    )
    print(f"of {options.seconds:g} s per row; load average (1, 5, 15 min) at start and at end: {loads}\n")
    print("| path | requests/s | rounds | p50 ms | p95 ms |\n| --- | ---: | --- | ---: | ---: |")
    median = {path: statistics.median(found) for path, found in rates.items()}
    for path, found in rates.items():
        p50, p95 = latencies[path]
        print(f"| {path} | {median[path]:.1f} | {min(found):.0f}-{max(found):.0f} | {p50:.1f} | {p95:.1f} |")
    print()
    for wire in bench.WIRES:
        ours = median[f"/api/mcp {wire}"]
        print(
            f"{wire}: MCP/REST {ours / median['REST twin']:.2f}x (goal 0.8x), "
            f"MCP/FastMCP {ours / median[f'FastMCP {wire}']:.2f}x (goal 1.5x)"
        )


if __name__ == "__main__":
    main()
