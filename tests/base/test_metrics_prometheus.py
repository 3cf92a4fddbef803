"""``/metrics`` in the Prometheus text format (issue 15, point 2), read as a scraper reads it.

In one process: requests are timed by route template (an id in the path makes no series of its
own), a scope denial on a REST twin is counted by scope, job runs by job and outcome with their
durations, and an import's refused items by kind; the page parses as the text format and names no
student. Across processes: two ``campus-mcp serve`` on one database and one
``PROMETHEUS_MULTIPROC_DIR`` answer one scrape with the calls of both; ``serve --workers 2``
(PostgreSQL) sums its workers and starts with the counts of an earlier start gone.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from campus_mcp import Interval, Job, JobOutcome
from campus_mcp.assembly.registry import load_registry
from campus_mcp.testing import CampusHarness, TestDatabases, harness_app, serve
from campus_mcp.testing import test_settings as settings_for
from campus_mcp.testing.oauth import free_port, serve_on_loopback
from campus_schedule.feed import import_enrollments
from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.parser import text_string_to_metric_families

from tests.support.scale_out import run_command

Series = dict[tuple[str, frozenset[tuple[str, str]]], float]

HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
SECRET = "metrics-tests-only-shared-key-" + "m" * 32


def parse(page: str) -> Series:
    """Every sample of a scraped page, by name and labels (the parser fails on a malformed page)."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
    }


def sample(series: Series, name: str, **labels: str) -> float:
    return series.get((f"campus_mcp_{name}", frozenset(labels.items())), 0.0)


async def scrape(client: httpx.AsyncClient) -> tuple[httpx.Response, Series]:
    page = await client.get("/metrics")  # loopback may read it without the token
    assert page.status_code == 200, page.text[:300]
    return page, parse(page.text)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def campus(campus_databases: TestDatabases) -> AsyncIterator[CampusHarness]:
    """A demo campus of this module: an app's lifespan runs once, so it is served once, here."""
    url = await campus_databases.demo_copy()
    registry = load_registry(settings_for(url))
    harness = CampusHarness(app=harness_app(registry), registry=registry)
    yield harness
    await harness.close()
    await campus_databases.drop(url)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def served(campus: CampusHarness) -> AsyncIterator[httpx.AsyncClient]:
    async with (
        serve_on_loopback(campus.app, free_port()) as base,
        httpx.AsyncClient(base_url=base, timeout=30) as client,
    ):
        yield client


async def test_requests_are_timed_by_route_template_and_denials_by_scope(
    campus: CampusHarness, served: httpx.AsyncClient
) -> None:
    _, before = await scrape(served)
    terms = await served.get("/api/v1/catalog/terms")
    assert terms.status_code == 200
    # Anonymous callers of a student's route: refused for the scope, each with its own friend id.
    for friend in ("4242", "9191"):
        refused = await served.get(f"/api/v1/me/friends/{friend}/busy_times")
        assert refused.status_code in (401, 403), refused.text[:300]
    student = await campus.student_principal("student1")
    async with campus.mcp(principal=student) as client:
        await client.call_tool("list_terms", {})
    page, after = await scrape(served)

    assert page.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    count = "http_request_duration_seconds_count"
    assert sample(after, count, method="GET", route="/api/v1/catalog/terms", status="2xx") == (
        sample(before, count, method="GET", route="/api/v1/catalog/terms", status="2xx") + 1
    )
    template = "/api/v1/me/friends/{friend_id}/busy_times"
    assert sample(after, count, method="GET", route=template, status="4xx") == (
        sample(before, count, method="GET", route=template, status="4xx") + 2
    )
    # The path's ids are in no label (a substring check of the page would also match a duration's digits).
    label_values = [
        value
        for family in text_string_to_metric_families(page.text)
        for metric in family.samples
        for value in metric.labels.values()
    ]
    assert label_values and not [value for value in label_values if "4242" in value or "9191" in value]
    denials = sample(after, "scope_denials_total", scope="friends:read", tool="friend_busy_times")
    assert denials == sample(before, "scope_denials_total", scope="friends:read", tool="friend_busy_times") + 2
    assert sample(after, "tool_calls_total", outcome="ok", tool="list_terms") >= 1
    assert "student1" not in page.text


async def partial_run(_context: Any) -> JobOutcome:
    return JobOutcome(items=3, lost={"CRN 1": "parse: no meeting times"}, summary="3 stored, 1 lost")


async def failing_run(_context: Any) -> JobOutcome:
    raise RuntimeError("upstream said no")


async def test_job_runs_and_refused_import_items_are_counted(campus: CampusHarness, served: httpx.AsyncClient) -> None:
    _, before = await scrape(served)
    hourly = Interval(minutes=60)
    for job_id, run in (("metrics_probe.partial", partial_run), ("metrics_probe.failing", failing_run)):
        await campus.run_job(Job(id=job_id, description="A probe.", trigger=hourly, run=run, plugin="probe"))
    # The enrollment feed: a row of a term nobody has and a row of two columns; nothing is stored.
    async with campus.sessions() as session:
        result = await import_enrollments(session, "student1,199901,12345\nstudent1,202731\n")
    assert dict(result.refused) == {"unknown_term": 1, "malformed_row": 1}
    _, after = await scrape(served)

    def grew(name: str, **labels: str) -> float:
        return sample(after, name, **labels) - sample(before, name, **labels)

    assert grew("job_runs_total", job="metrics_probe.partial", outcome="partial") == 1
    assert grew("job_runs_total", job="metrics_probe.failing", outcome="failed") == 1
    duration = "job_run_duration_seconds_count"
    assert grew(duration, job="metrics_probe.partial", outcome="partial") == 1
    assert grew(duration, job="metrics_probe.failing", outcome="failed") == 1
    failed = "import_items_failed_total"
    assert grew(failed, kind="unknown_term", source="enrollment_feed") == 1
    assert grew(failed, kind="malformed_row", source="enrollment_feed") == 1


# --- several processes ---------------------------------------------------------------------


def call_list_terms(base: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_terms"}})
    # A new connection each time, so that with several workers on one port any of them may answer.
    answer = httpx.post(f"{base}/api/mcp", content=body, headers={**HEADERS, "Connection": "close"}, timeout=30)
    assert answer.status_code == 200, answer.text[:300]
    assert answer.json()["result"].get("isError") is not True, answer.text[:300]


def scraped_calls(base: str) -> float:
    page = httpx.get(f"{base}/metrics", headers={"Connection": "close"}, timeout=30)
    assert page.status_code == 200, page.text[:300]
    return sample(parse(page.text), "tool_calls_total", outcome="ok", tool="list_terms")


def served_env(database_url: str, tmp_path: Path, **more: str) -> dict[str, str]:
    return {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_ANONYMOUS_ACCESS": "true",  # list_terms without a token: the calls are the point
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "CAMPUS_MCP_SECRET_KEY": SECRET,
        **more,
    }


async def test_two_serve_processes_sharing_the_folder_answer_one_scrape_with_both(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    shared = tmp_path / "prometheus"
    shared.mkdir()  # the operator's folder, emptied before the processes start
    env = served_env(await campus_databases.demo_copy(), tmp_path, PROMETHEUS_MULTIPROC_DIR=str(shared))
    try:
        with (
            serve(env, log_path=tmp_path / "a.log", args=["--no-prepare"]) as a,
            serve(env, log_path=tmp_path / "b.log", args=["--no-prepare"]) as b,
        ):
            for _ in range(3):
                call_list_terms(a.base)
            for _ in range(2):
                call_list_terms(b.base)
            # Each process alone counted a part; either one's page has them all.
            assert scraped_calls(a.base) == 5
            assert scraped_calls(b.base) == 5
    finally:
        await campus_databases.drop(env["CAMPUS_MCP_DATABASE_URL"])


def leave_counts_of_an_earlier_start(folder: Path) -> None:
    """A counter file as a worker of an earlier start leaves it: 100 list_terms calls, pid 99999."""
    folder.mkdir(parents=True)
    earlier = MmapedDict(str(folder / "counter_99999.db"))
    key = mmap_key(
        "campus_mcp_tool_calls", "campus_mcp_tool_calls_total", ["outcome", "tool"], ["ok", "list_terms"], ""
    )
    earlier.write_value(key, 100.0, 0.0)
    earlier.close()


async def test_serve_with_two_workers_sums_them_and_starts_clean(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    if not campus_databases.postgres:
        pytest.skip("serve --workers needs PostgreSQL: set CAMPUS_MCP_TEST_DATABASE_URL")
    env = served_env(await campus_databases.demo_copy(), tmp_path)
    port = free_port()
    folder = tmp_path / "var" / f"metrics-{port}"  # serve's own folder (metrics.share_between_workers)
    leave_counts_of_an_earlier_start(folder)
    try:
        with serve(env, port=port, log_path=tmp_path / "serve.log", args=["--no-prepare", "--workers", "2"]) as served:
            calls = 0
            # Until both workers have answered (each keeps its own files, named by its pid).
            while len({path.stem for path in folder.glob("counter_*.db")} - {"counter_99999"}) < 2:
                assert calls < 100, "one worker answered 100 new connections: the test cannot show a sum"
                call_list_terms(served.base)
                calls += 1
            for _ in range(4):  # whichever worker answers the scrape reads every worker's counts, and only theirs
                assert scraped_calls(served.base) == calls
    finally:
        await campus_databases.drop(env["CAMPUS_MCP_DATABASE_URL"])


async def test_one_setting_puts_a_separate_process_s_job_counts_on_serve_s_page(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    """Issue 27: CAMPUS_MCP_METRICS_DIR, shared by serve, worker and jobs run, with no
    PROMETHEUS_MULTIPROC_DIR: a job run by another process is counted on serve's /metrics."""
    env = served_env(
        await campus_databases.demo_copy(),
        tmp_path,
        CAMPUS_MCP_METRICS_DIR=str(tmp_path / "metrics"),
        CAMPUS_MCP_PLUGINS="dining",
        CAMPUS_MCP_SCHEDULER="false",
    )
    series = 'campus_mcp_job_runs_total{job="dining.refresh_hours",outcome="ok"}'
    try:
        with serve(env, log_path=tmp_path / "serve.log", args=["--no-prepare"]) as served:
            ran = await asyncio.to_thread(run_command, "jobs", "run", "dining.refresh_hours", env=env)
            assert ran.returncode == 0, ran.stderr
            async with httpx.AsyncClient(timeout=10) as http:
                page = (await http.get(f"{served.base}/metrics")).text
            assert f"{series} 1.0" in page, page[-2000:]
    finally:
        await campus_databases.drop(env["CAMPUS_MCP_DATABASE_URL"])
