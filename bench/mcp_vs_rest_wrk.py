"""search_sections' rows of ``bench/mcp_vs_rest.py``, loaded by wrk instead of httpx.

    apt-get install wrk      # Debian's package; not needed by the tests or CI
    .venv/bin/python bench/mcp_vs_rest_wrk.py --rounds 3 --seconds 4

``mcp_vs_rest.py`` loads the servers from its own Python process with httpx, on the same two
cores. That client costs CPU per request and per byte received, and an MCP answer is 17.2 KB (the
answer twice, as ``structuredContent`` and as its text) against REST's 7.4 KB: the client's own
cost falls unevenly on the rows. wrk, the load tool of issue 16's first table, is C and reads an
answer's bytes without parsing them, so its figures are closer to what the servers can do.

The same servers and the same measurement as ``mcp_vs_rest.py --load wrk`` (its functions), for
search_sections' rows only: the demo campus it built under ``--work`` (run it once first; or with
``--database-url``, the database it loaded), ``campus-mcp serve`` with the answer cache off, and
the FastMCP 4.2.3 twin. The first answers of each row are checked whole with httpx (HTTP 200, JSON,
no JSON-RPC or tool error); wrk then counts every answer that is not a 2xx or 3xx, and a row with
any is refused. The rows are interleaved: each round runs every row once, each round starting at
another row; a row's requests/s is the median of its rounds, p50 and p95 the medians of wrk's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from pathlib import Path

import mcp_vs_rest as bench  # this folder's: the servers, the questions, the checks
from search_sections import free_port

# The wrk scripts are mcp_vs_rest.py's own (its --load wrk).
lua_of = bench.lua_of


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
    bench.load_tool("wrk")  # says how to get wrk when it is missing
    if problem := bench.wrk_slice_problem(options.seconds * options.rounds, options.rounds):
        parser.error(problem)
    work = options.work.resolve()
    database = work / "demo-scale-1.db"
    if options.database_url is None and not database.exists():
        raise SystemExit(f"no demo campus at {database}: run bench/mcp_vs_rest.py once first")
    env = bench.target_env(database, options.database_url)
    python = bench.fastmcp_python(work)
    load_at_start = os.getloadavg()
    with contextlib.ExitStack() as servers:
        port, twin_port = free_port(), free_port()
        servers.enter_context(bench.campus_server(env, port, work / "wrk-cold.log", cache=False))
        servers.enter_context(bench.fastmcp_server(python, env, twin_port, work / "wrk-fastmcp.log"))
        origin = f"http://127.0.0.1:{port}"
        asked = bench.questions(*asyncio.run(bench.campus_samples(origin)))
        targets = [t for t in bench.campus_targets(origin, asked, "cold") if t.tool == "search_sections"]
        targets += bench.fastmcp_targets(f"http://127.0.0.1:{twin_port}")
        # mcp_vs_rest.py's own rounds, each row given --seconds in each.
        rows = asyncio.run(
            bench.measure(targets, options.rounds, options.seconds * options.rounds, options.connections, "wrk")
        )
    loads = " and ".join(" ".join(f"{x:.1f}" for x in load) for load in (load_at_start, os.getloadavg()))
    engine = "PostgreSQL" if options.database_url else "SQLite"
    print(
        f"search_sections {bench.SUBJECT_PAGE}, {engine}, cold, wrk -t1 -c{options.connections}, {options.rounds} rounds"
    )
    print(f"of {options.seconds:g} s per row; load average (1, 5, 15 min) at start and at end: {loads}\n")
    print("| path | requests/s | rounds | p50 ms | p95 ms |\n| --- | ---: | --- | ---: | ---: |")
    for row in rows:
        print(
            f"| {row.path} | {row.requests_per_s:.1f} | {min(row.rounds):.0f}-{max(row.rounds):.0f} "
            f"| {row.p50:.1f} | {row.p95:.1f} |"
        )
    print()
    median = {row.path: row.requests_per_s for row in rows}
    for wire in bench.WIRES:
        ours = median[f"/api/mcp {wire}"]
        print(
            f"{wire}: MCP/REST {ours / median['REST twin']:.2f}x (goal 0.8x), "
            f"MCP/FastMCP {ours / median[f'FastMCP {wire}']:.2f}x (goal 1.5x)"
        )


if __name__ == "__main__":
    main()
