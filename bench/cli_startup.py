"""How long the ``campus-mcp`` command line takes to start: each command's wall time (the median of
``--runs`` runs) against ``python -c pass``, and the ratio, with the CPU time it spent.

    .venv/bin/python bench/cli_startup.py --work var/bench --runs 5

Each command runs as an operator runs it, a fresh process of the installed ``campus-mcp`` with
only the bench's settings (a SQLite file under ``--work`` that ``campus-mcp demo`` fills once,
no ``campus-mcp.toml``), so nothing is cached in a process between runs. The commands that need
no plugin (``--help``, ``plugins``) show what start-up costs by itself; ``jobs list`` and
``plugins --contributions`` load every enabled plugin. Prints a Markdown table for the README.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

CAMPUS_MCP = str(Path(sys.executable).with_name("campus-mcp"))

COMMANDS: list[tuple[str, list[str]]] = [
    ("python -c pass", [sys.executable, "-c", "pass"]),
    ("campus-mcp --help", [CAMPUS_MCP, "--help"]),
    ("campus-mcp plugins", [CAMPUS_MCP, "plugins"]),
    ("campus-mcp token --help", [CAMPUS_MCP, "token", "--help"]),
    ("campus-mcp serve --help", [CAMPUS_MCP, "serve", "--help"]),
    ("campus-mcp jobs list", [CAMPUS_MCP, "jobs", "list"]),
    ("campus-mcp plugins --contributions", [CAMPUS_MCP, "plugins", "--contributions"]),
]


def bench_environment(work: Path) -> dict[str, str]:
    # Only the bench's settings: a developer's CAMPUS_MCP_* (another database) must not leak in.
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    environment["CAMPUS_MCP_DATABASE_URL"] = f"sqlite+aiosqlite:///{work / 'cli-startup.db'}"
    environment["CAMPUS_MCP_CONFIG"] = str(work / "absent.toml")
    environment["CAMPUS_MCP_VAR_DIR"] = str(work / "var")
    environment["CAMPUS_MCP_SCHEDULER"] = "false"
    return environment


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Failed(Exception):
    """A command that did not succeed (say, one the version under test does not have yet)."""


def run_once(command: list[str], environment: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one run."""
    cpu = children_cpu()
    started = time.perf_counter()
    result = subprocess.run(command, env=environment, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise Failed(f"exit {result.returncode}: {result.stderr.strip().splitlines()[-1:]}")
    return wall, children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path("var/bench"), help="Folder for the demo database.")
    parser.add_argument("--runs", type=int, default=5, help="Runs per command (the median is shown).")
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    environment = bench_environment(work)
    if not (work / "cli-startup.db").exists():
        print("Loading the demo campus once (campus-mcp demo) ...", file=sys.stderr)
        run_once([CAMPUS_MCP, "demo"], environment, work)
    rows: list[tuple[str, float, float] | tuple[str, str]] = []
    for name, command in COMMANDS:
        try:
            run_once(command, environment, work)  # warm the file cache: every run then reads the same
            times = [run_once(command, environment, work) for _ in range(args.runs)]
        except Failed as exc:
            rows.append((name, str(exc)))
            print(f"{name}: {exc}", file=sys.stderr)
            continue
        rows.append((name, statistics.median(w for w, _ in times), statistics.median(c for _, c in times)))
        print(f"{name}: {rows[-1][1]:.2f} s", file=sys.stderr)
    baseline = rows[0][1]
    assert isinstance(baseline, float)
    print(f"\n{args.runs} runs each, median; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n")
    print("| command | wall (s) | CPU (s) | x `python -c pass` |")
    print("| --- | ---: | ---: | ---: |")
    for row in rows:
        if len(row) == 2:
            print(f"| `{row[0]}` | {row[1]} | | |")
        else:
            name, wall, cpu = row
            print(f"| `{name}` | {wall:.2f} | {cpu:.2f} | {wall / baseline:.1f} |")


if __name__ == "__main__":
    main()
