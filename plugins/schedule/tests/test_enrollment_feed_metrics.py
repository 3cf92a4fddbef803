"""The refused rows of ``campus-mcp import enrollments`` reach ``/metrics`` as the nightly job's do
(issue 35, point 9): the command is a process of its own, so its counts go to the deployment's
metrics folder (``CAMPUS_MCP_METRICS_DIR``), as ``jobs run``'s do, and ``serve`` sums them.

Before, the command counted them in its own memory and exited: ``/metrics`` never showed them.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx
from campus_mcp.testing import TestDatabases, serve
from prometheus_client.parser import text_string_to_metric_families

SECRET = "feed-metrics-tests-only-key-" + "f" * 32


def counted(page: str, name: str, **labels: str) -> float:
    """One series' value on a scraped page (0 when it is not there); the page must parse."""
    for family in text_string_to_metric_families(page):
        for sample in family.samples:
            if sample.name == f"campus_mcp_{name}" and sample.labels == labels:
                return sample.value
    return 0.0


async def test_a_command_line_import_s_refused_rows_are_on_serve_s_metrics(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    env = {
        "CAMPUS_MCP_DATABASE_URL": await campus_databases.demo_copy(),
        "CAMPUS_MCP_PLUGINS": "catalog,schedule",
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "CAMPUS_MCP_SECRET_KEY": SECRET,
        "CAMPUS_MCP_METRICS_DIR": str(tmp_path / "metrics"),
    }
    # Two rows of a term the campus does not have, and one row with a column missing.
    feed = tmp_path / "feed.csv"
    feed.write_text("student1,199910,10001\nstudent2,199910,10002\nstudent3,199910\n", encoding="utf-8")
    try:
        with serve(env, log_path=tmp_path / "serve.log", args=["--no-prepare"]) as served:
            run = await asyncio.to_thread(
                subprocess.run,
                [str(Path(sys.executable).parent / "campus-mcp"), "import", "enrollments", str(feed)],
                env={"PATH": str(Path(sys.executable).parent), **env},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert "refused: 2 unknown term, 1 malformed row" in run.stdout, run.stdout + run.stderr
            async with httpx.AsyncClient(timeout=10) as http:
                page = (await http.get(f"{served.base}/metrics")).text
    finally:
        await campus_databases.drop(env["CAMPUS_MCP_DATABASE_URL"])
    failed = "import_items_failed_total"
    assert counted(page, failed, kind="unknown_term", source="enrollment_feed") == 2, page[-3000:]
    assert counted(page, failed, kind="malformed_row", source="enrollment_feed") == 1
    # The run itself, as a job's run is counted.
    assert counted(page, "job_runs_total", job="schedule.import.enrollments", outcome="partial") == 1
