"""bench/mcp_vs_rest.py's ``--database-url``: a SQLite URL is served as given, PostgreSQL as before,
anything it cannot serve refused with a message saying what it serves.

A SQLite URL used to go down the PostgreSQL path, which opened the URL with its database renamed to
``postgres``: for SQLite an empty file of that name in the working folder, and no campus built.
The demo load itself is the campus's own ``campus-mcp demo`` (tested with the CLI); here it is
replaced by a recorder, so these tests read no database server and load nothing.
"""

from __future__ import annotations

import importlib.util
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from campus_mcp.base.speedups import ALL_OFF

BENCH = Path(__file__).resolve().parents[1] / "bench" / "mcp_vs_rest.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mcp_vs_rest_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # The script puts bench/ on the path for its sibling search_sections; take that back after.
    # Its dataclasses look their module up by name while the class is made, so it is there meanwhile.
    path = list(sys.path)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
        del sys.modules[spec.name]
    return module


@pytest.fixture
def demo_loads(bench: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every ``campus-mcp demo`` the bench would run: its arguments and database URL."""
    loads: list[dict[str, Any]] = []

    def record(args: list[str], *, env: dict[str, str], **_options: Any) -> None:
        loads.append({"args": args[1:], "url": env["CAMPUS_MCP_DATABASE_URL"]})

    monkeypatch.setattr(bench.subprocess, "run", record)
    return loads


def _catalog_file(file: Path, sections: int) -> None:
    with sqlite3.connect(file) as connection:
        connection.execute("CREATE TABLE catalog_sections (id INTEGER PRIMARY KEY)")
        connection.executemany("INSERT INTO catalog_sections (id) VALUES (?)", [(n,) for n in range(sections)])
    connection.close()


def test_a_sqlite_url_with_a_catalog_is_served_as_it_is(
    bench: ModuleType, demo_loads: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _catalog_file(tmp_path / "mine.db", sections=3)
    built = bench.build_target(tmp_path / "unused.db", "sqlite+aiosqlite:///mine.db", 1)
    assert built is None and demo_loads == []
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mine.db"]  # no "postgres", no default file


@pytest.mark.parametrize("existing", [False, True], ids=["missing", "without sections"])
def test_a_sqlite_url_without_a_catalog_gets_the_demo_there(
    bench: ModuleType,
    demo_loads: list[dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    existing: bool,
) -> None:
    monkeypatch.chdir(tmp_path)
    url = "sqlite+aiosqlite:///campuses/scaled.db"
    if existing:
        (tmp_path / "campuses").mkdir()
        _catalog_file(tmp_path / "campuses" / "scaled.db", sections=0)
    built = bench.build_target(tmp_path / "unused.db", url, 67)
    assert isinstance(built, float)
    assert demo_loads == [{"args": ["demo", "--scale", "67"], "url": url}]
    assert (tmp_path / "campuses").is_dir() and not (tmp_path / "postgres").exists()
    assert not (tmp_path / "unused.db").exists()


def test_sqlite_file_names_the_file_of_the_url(bench: ModuleType, tmp_path: Path) -> None:
    assert bench.sqlite_file(f"sqlite+aiosqlite:///{tmp_path}/a.db") == tmp_path / "a.db"
    assert bench.sqlite_file("sqlite+aiosqlite:///var/bench/b.db") == Path("var/bench/b.db")
    assert bench.sqlite_file("postgresql+asyncpg://campus@127.0.0.1:55432/bench") is None


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("sqlite+aiosqlite://", "not a database in memory"),
        ("sqlite+aiosqlite:///:memory:", "not a database in memory"),
        ("sqlite:///var/bench/c.db", "sqlite+aiosqlite:///var/bench/c.db"),
        ("mysql+aiomysql://campus@127.0.0.1/bench", "SQLite or PostgreSQL, not mysql"),
        ("postgresql+asyncpg://campus@127.0.0.1:55432", "names no database"),
        ("not a url", "not a database URL"),
    ],
)
def test_a_url_it_cannot_serve_is_refused_saying_why(
    bench: ModuleType,
    demo_loads: list[dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    url: str,
    says: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as refused:
        bench.build_target(tmp_path / "unused.db", url, 1)
    assert says in str(refused.value)
    assert demo_loads == [] and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("installed", "asked", "used"),
    [
        (True, "auto", "wrk"),
        (False, "auto", "httpx"),
        (True, "httpx", "httpx"),
        (False, "httpx", "httpx"),
        (True, "wrk", "wrk"),
    ],
)
def test_the_load_is_wrk_when_it_is_installed_unless_asked_otherwise(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, installed: bool, asked: str, used: str
) -> None:
    monkeypatch.setattr(bench.shutil, "which", lambda name: f"/usr/bin/{name}" if installed and name == "wrk" else None)
    assert bench.load_tool(asked) == used


def test_asking_for_wrk_without_it_says_how_to_get_it(bench: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench.shutil, "which", lambda _name: None)
    with pytest.raises(SystemExit, match=r"apt-get install wrk.*--load httpx"):
        bench.load_tool("wrk")


def test_a_round_wrk_cannot_time_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    # wrk takes whole seconds only: 4 s over 5 rounds is -d0.8s, which wrk refused with its usage
    # text, after the demo campus was built, in a CalledProcessError traceback.
    import shutil
    import subprocess

    if shutil.which("wrk") is None:
        pytest.skip("wrk is not installed")
    done = subprocess.run(
        [sys.executable, str(BENCH), "--seconds", "4", "--load", "wrk", "--work", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "wrk measures whole seconds only, and --seconds 4 over --rounds 5 gives each row 0.8 s" in done.stderr
    assert "--seconds 5" in done.stderr
    assert not (tmp_path / "work").exists()


def test_whole_second_rounds_pass(bench: ModuleType) -> None:
    assert bench.wrk_slice_problem(5.0, 5) is None
    assert bench.wrk_slice_problem(12.0, 3) is None
    assert bench.wrk_slice_problem(2.0, 4) is not None


def _switches_seen_by(env: dict[str, str]) -> str:
    """The speed-up switches a campus process started with ``env`` reads."""
    done = subprocess.run(
        [sys.executable, "-c", "from campus_mcp.base.speedups import Switches; print(Switches.from_environment())"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_the_served_campuses_run_with_the_callers_speed_up_switches(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CAMPUS_MCP_SPEEDUPS=off bench/mcp_vs_rest.py`` measures the plain path on its servers too:
    their environment used to leave out every CAMPUS_MCP_ variable, so an "off" run's servers ran
    with every speed-up on. Other CAMPUS_MCP_ settings of the caller still stay out."""
    monkeypatch.setenv("CAMPUS_MCP_SPEEDUPS", "off")
    monkeypatch.setenv("CAMPUS_MCP_STATEMENT_SHAPES", "false")
    monkeypatch.setenv("CAMPUS_MCP_PUBLIC_URL", "https://elsewhere.example")
    for env in (bench.target_env(tmp_path / "demo.db", None), bench.student_campus_env(tmp_path, None)):
        assert env["CAMPUS_MCP_SPEEDUPS"] == "off"
        assert env["CAMPUS_MCP_STATEMENT_SHAPES"] == "false"
        assert "CAMPUS_MCP_PUBLIC_URL" not in env
    seen = _switches_seen_by(bench.target_env(tmp_path / "demo.db", None))
    assert seen == repr(ALL_OFF), seen

    monkeypatch.delenv("CAMPUS_MCP_SPEEDUPS")
    monkeypatch.delenv("CAMPUS_MCP_STATEMENT_SHAPES")
    env = bench.target_env(tmp_path / "demo.db", None)
    assert not any(name in env for name in ("CAMPUS_MCP_SPEEDUPS", "CAMPUS_MCP_STATEMENT_SHAPES"))
    assert "fast_reads=True" in _switches_seen_by(env)
