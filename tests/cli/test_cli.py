"""``campus-mcp`` as an operator runs it: a subprocess of the installed command, configured by environment."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

CLI = Path(sys.executable).with_name("campus-mcp")
FAMILIES = {"catalog", "schedule", "friends", "settings", "apps", "prompts"}


def run_cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    environment.update(env)
    return subprocess.run(
        [str(CLI), *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("cli")
    yield folder, {"CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'campus.db'}"}


@pytest.fixture(scope="module")
def upgraded(workdir: tuple[Path, dict[str, str]]) -> subprocess.CompletedProcess[str]:
    folder, env = workdir
    return run_cli("db", "upgrade", cwd=folder, **env)


def test_plugins_lists_the_six_families_and_the_example(workdir: tuple[Path, dict[str, str]]) -> None:
    folder, env = workdir
    result = run_cli("plugins", "--contributions", cwd=folder, **env)
    assert result.returncode == 0, result.stderr
    report = {plugin["name"]: plugin for plugin in json.loads(result.stdout)}
    assert FAMILIES | {"dining", "core"} <= set(report)
    for plugin in report.values():
        assert {"name", "version", "hooks", "tools", "scopes", "routes", "jobs"} <= set(plugin), plugin["name"]
    dining = report["dining"]
    assert dining["version"] == "0.1.0"
    assert sorted(dining["tools"]) == ["get_dining_hall", "list_dining_halls"]
    assert dining["scopes"] == ["dining"]
    assert dining["jobs"] == ["dining.refresh_hours"]
    assert "GET /api/v1/dining/halls" in dining["routes"]
    assert {"campus_plugin_info", "register_tools", "register_routes", "register_jobs"} <= set(dining["hooks"])
    # A family offers a scope only with a tool that needs it, or reserved for tools to come (issue 37):
    # friends has its tools' scope and the three reserved ones, prompts (prompts only, no tool) none.
    assert sorted(report["friends"]["scopes"]) == sorted(
        ["friends:read", "friends:requests", "friends:meetings", "friends:groups"]
    )
    assert report["prompts"]["tools"] == [] and report["prompts"]["scopes"] == []


def test_a_disabled_family_is_gone_from_the_plugin_list(workdir: tuple[Path, dict[str, str]]) -> None:
    folder, env = workdir
    result = run_cli("plugins", "--contributions", cwd=folder, CAMPUS_MCP_DISABLE="friends", **env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert "friends" not in {plugin["name"] for plugin in report}
    contributed = [item for plugin in report for kind in ("tools", "scopes", "routes", "jobs") for item in plugin[kind]]
    assert not [item for item in contributed if "friend" in item.lower()]


def test_disabling_catalog_while_schedule_is_enabled_fails_naming_both(workdir: tuple[Path, dict[str, str]]) -> None:
    folder, env = workdir
    result = run_cli("plugins", "--contributions", cwd=folder, CAMPUS_MCP_DISABLE="catalog", **env)
    assert result.returncode == 1
    assert "plugin 'schedule' needs plugin 'catalog'" in result.stderr
    assert "Traceback" not in result.stderr


def test_db_upgrade_creates_every_enabled_plugins_tables(
    workdir: tuple[Path, dict[str, str]], upgraded: subprocess.CompletedProcess[str]
) -> None:
    folder, env = workdir
    assert upgraded.returncode == 0, upgraded.stderr
    with sqlite3.connect(folder / "campus.db") as db:
        heads = {row[0] for row in db.execute("SELECT version_num FROM alembic_version")}
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "dining_0001" in heads
    assert {"job_runs", "dining_halls", "dining_hours"} <= tables
    # It says what it did on an empty database, not that it was up to date.
    created = len(tables - {"alembic_version"})
    assert f"created {created} tables. It is now up to date." in upgraded.stdout
    assert re.search(r": applied \d+ migrations, created", upgraded.stdout), upgraded.stdout
    assert upgraded.stdout.startswith("Migrated the database (core, canvas, catalog,")

    again = run_cli("db", "upgrade", cwd=folder, **env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "The database was already up to date: no migration to apply."


def test_jobs_list_and_run(workdir: tuple[Path, dict[str, str]], upgraded: subprocess.CompletedProcess[str]) -> None:
    folder, env = workdir
    listed = run_cli("jobs", "list", cwd=folder, **env)
    assert listed.returncode == 0, listed.stderr
    [line] = [line for line in listed.stdout.splitlines() if line.startswith("dining.refresh_hours")]
    assert "cron[" in line and "hour='5'" in line and "minute='10'" in line

    ran = run_cli("jobs", "run", "dining.refresh_hours", cwd=folder, **env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "dining.refresh_hours: ok, 3 item(s)"

    with sqlite3.connect(folder / "campus.db") as db:
        runs = list(db.execute("SELECT job_id, plugin, outcome, items, error FROM job_runs"))
    assert runs == [("dining.refresh_hours", "dining", "ok", 3, None)]


def test_running_an_unknown_job_says_which_jobs_exist(
    workdir: tuple[Path, dict[str, str]], upgraded: subprocess.CompletedProcess[str]
) -> None:
    folder, env = workdir
    result = run_cli("jobs", "run", "dining.refresh_menus", cwd=folder, **env)
    assert result.returncode == 1
    assert "no job 'dining.refresh_menus'" in result.stderr
    assert "dining.refresh_hours" in result.stderr


def test_worker_runs_the_scheduler_until_interrupted(
    workdir: tuple[Path, dict[str, str]], upgraded: subprocess.CompletedProcess[str]
) -> None:
    folder, env = workdir
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    # A worker beside serve must sign with the deployment's key, not one of its own (issue 15.3;
    # test_workers checks the refusal without one).
    environment.update(env, PYTHONUNBUFFERED="1", CAMPUS_MCP_SECRET_KEY="a-test-key-shared-by-every-process-0123456789")
    worker = subprocess.Popen(
        [str(CLI), "worker"], cwd=folder, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert worker.stdout is not None
        # Until the election has started; bounded, so a worker that never says so fails the test
        # instead of hanging the run.
        ready, _, _ = select.select([worker.stdout], [], [], 120)
        assert ready, "campus-mcp worker printed nothing in 120 s"
        first_line = worker.stdout.readline()
        assert first_line.startswith("Worker for "), first_line + (worker.stderr.read() if worker.stderr else "")
        assert "job(s)" in first_line
        worker.send_signal(signal.SIGINT)
        assert worker.wait(timeout=60) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


# `jobs list` agrees with `jobs run` ----------------------------------------------------------

CAMPUS_TIME = re.compile(r"^  (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d) (\S+)")
LEGACY_DEMO_SUMMARY = "Demo campus: loaded by the demo generator."


def add_run(db: sqlite3.Connection, job_id: str, plugin: str, started: datetime, summary: str = "") -> None:
    """A recorded run as the database holds it (SQLite keeps UTC without a zone)."""
    finished = started + timedelta(minutes=2)
    db.execute(
        "INSERT INTO job_runs (job_id, plugin, started_at, finished_at, outcome, items, lost, summary, error)"
        " VALUES (?, ?, ?, ?, 'ok', 1, '{}', ?, NULL)",
        (job_id, plugin, f"{started:%Y-%m-%d %H:%M:%S.%f}", f"{finished:%Y-%m-%d %H:%M:%S.%f}", summary),
    )


def test_jobs_list_shows_only_registered_jobs_newest_first_in_campus_time(tmp_path: Path) -> None:
    env = {"CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}"}
    # The tables only (a first demo load runs the very code of the reload below, so a second
    # subprocess loading the campus would cost ~7 s of CPU and test nothing more).
    upgraded = run_cli("db", "upgrade", cwd=tmp_path, **env)
    assert upgraded.returncode == 0, upgraded.stderr
    with sqlite3.connect(tmp_path / "campus.db") as db:
        # What an earlier demo load left: a run of catalog.seat_refresh, a job this campus lacks.
        add_run(db, "catalog.seat_refresh", "catalog", datetime.now(UTC) - timedelta(minutes=20), LEGACY_DEMO_SUMMARY)
    loaded = run_cli("demo", cwd=tmp_path, **env)
    assert loaded.returncode == 0, loaded.stderr
    with sqlite3.connect(tmp_path / "campus.db") as db:
        # Loading the demo leaves no made-up runs, neither a new set nor the old one.
        assert list(db.execute("SELECT job_id FROM job_runs")) == []

    assert run_cli("jobs", "run", "dining.refresh_hours", cwd=tmp_path, **env).returncode == 0
    with sqlite3.connect(tmp_path / "campus.db") as db:
        # Recorded after the run above (a higher id) but started a day before it.
        add_run(db, "dining.refresh_hours", "dining", datetime.now(UTC) - timedelta(days=1))
        # A refresh the tools asked for: recorded, but not a job `jobs run` can start.
        add_run(db, "catalog.section_refresh", "catalog", datetime.now(UTC) - timedelta(hours=2))
    listed = run_cli("jobs", "list", cwd=tmp_path, **env)
    assert listed.returncode == 0, listed.stderr
    runs = listed.stdout.split("Recent runs:", 1)[1].split("\n\n", 1)[0]
    found = [CAMPUS_TIME.match(line) for line in runs.splitlines() if line.strip()]
    assert all(found), runs
    times = [datetime.fromisoformat(match.group(1)) for match in found if match]
    assert [match.group(2) for match in found if match] == ["dining.refresh_hours", "dining.refresh_hours"]
    assert times == sorted(times, reverse=True)
    offset = datetime.now(ZoneInfo("America/New_York")).utcoffset()
    assert {time.utcoffset() for time in times} == {offset}
    assert "catalog.seat_refresh" not in listed.stdout  # `jobs run` would say there is no such job
    # Work recorded outside the scheduler is listed apart, saying it is not a job.
    other = listed.stdout.split("Recorded outside the scheduler", 1)[1]
    assert "catalog.section_refresh" in other and "catalog.section_refresh" not in runs


# The README's command table ----------------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_names_every_command_and_the_demo_password() -> None:
    from campus_mcp.base.settings import Settings
    from campus_mcp.cli.main import every_command

    readme = README.read_text(encoding="utf-8")
    table = readme.split("## Command line", 1)[1].split("\n## ", 1)[0]
    # Plugins' commands too (`import` from the catalog, `students` from the host), which the
    # advisories and the error messages tell the operator to run.
    missing = [name for name in every_command() if f"`campus-mcp {name}" not in table]
    assert missing == []
    settings = readme.split("<!-- settings-table -->", 1)[1].splitlines()
    header = [cell.strip() for cell in settings[1].strip("|").split(" | ")]
    [row] = [line for line in settings if line.startswith("| `CAMPUS_MCP_DEMO_PASSWORD` |")]
    password = Settings().demo_password.get_secret_value()
    assert row.strip("|").split(" | ")[header.index("default")].strip() == f"`{password}`"
    assert f"with the password `{password}` (`CAMPUS_MCP_DEMO_PASSWORD`)" in readme


# `campus-mcp serve` refusing to start ---------------------------------------------------------

NOT_SET = "CAMPUS_MCP_SECRET_KEY is not set"


@pytest.mark.parametrize(
    ("case", "complaint"),
    [
        ("missing key outside demo mode", NOT_SET),
        ("key file others can read", "chmod 600"),
        ("damaged key file", "it is damaged"),
        ("unknown plugin setting", "[plugins.dining] feeds"),
        ("bad host setting", "CAMPUS_MCP_PORT"),
    ],
)
def test_serve_stops_with_one_line_on_a_bad_start_up_setting(case: str, complaint: str, tmp_path: Path) -> None:
    env = {
        "CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "campus-mcp.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_PORT": "1",  # never reached: each case stops before the server listens
    }
    key = tmp_path / "var" / "secret.key"
    if case == "missing key outside demo mode":
        env["CAMPUS_MCP_DEMO"] = "false"
    elif case == "key file others can read":
        key.parent.mkdir()
        key.write_bytes(b"k" * 32)
        key.chmod(0o644)
    elif case == "damaged key file":
        key.parent.mkdir()
        key.write_bytes(b"short")
        key.chmod(0o600)
    elif case == "unknown plugin setting":
        (tmp_path / "campus-mcp.toml").write_text('[plugins.dining]\nfeeds = "hours.json"\n')
    else:
        env["CAMPUS_MCP_PORT"] = "eighty"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")} | env
    result = subprocess.run(
        [str(CLI), "serve"], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    [line] = result.stderr.strip().splitlines()
    assert complaint in line
    assert line.startswith("Error: ")
    assert "Serving" not in result.stdout
    # Checked before anything is written: no database half-migrated by a server that cannot start.
    assert not (tmp_path / "campus.db").exists()
