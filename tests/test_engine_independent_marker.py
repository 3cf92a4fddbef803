"""The marker that lets CI's PostgreSQL pass leave a test out (``engine_independent``, tests/conftest.py)
cannot be put on a test that opens a database through the kit: collection stops naming the test.

Each case is a pytest of its own on a copy of tests/conftest.py, collection only, with no installed
plugin (the kit's fixtures are not needed to see which a test asks for), so it costs a second or two.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")


def collect(folder: Path, test_file: str, body: str, *options: str) -> subprocess.CompletedProcess[str]:
    tests = folder / "tests"
    tests.mkdir()
    shutil.copy(CONFTEST, tests / "conftest.py")
    (tests / test_file).write_text(body, encoding="utf-8")
    (folder / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    engine_independent: left out of the PostgreSQL pass\n", encoding="utf-8"
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *options],
        cwd=folder,
        # No installed plugin (the kit, asyncio, xdist, Playwright): only the conftest is under test.
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_listed_test_that_opens_a_kit_database_stops_the_collection(tmp_path: Path) -> None:
    # test_docs.py is listed as engine independent; a test in it that asks for demo_campus is not.
    result = collect(tmp_path, "test_docs.py", "def test_reads_the_demo(demo_campus):\n    pass\n")
    assert result.returncode != 0
    assert "tests/test_docs.py::test_reads_the_demo uses demo_campus" in result.stdout + result.stderr
    assert "remove them from ENGINE_INDEPENDENT" in result.stdout + result.stderr


def test_a_listed_test_without_a_database_is_marked(tmp_path: Path) -> None:
    result = collect(
        tmp_path, "test_docs.py", "def test_reads_a_page(tmp_path):\n    pass\n", "-m", "engine_independent"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "tests/test_docs.py::test_reads_a_page" in result.stdout


BOTH_ENGINES = """
import pytest


@pytest.fixture(params=["sqlite", "postgresql"], name="database_url")
def both_engines(request):
    return request.param


def test_two_processes_share_the_campus(database_url):
    pass
"""


def test_the_sqlite_half_of_both_engines_is_marked_and_the_postgresql_half_is_not(tmp_path: Path) -> None:
    # scale_out's both_engines: its SQLite file is the same on either pass, its PostgreSQL half is not.
    (tmp_path / "left").mkdir()
    (tmp_path / "kept").mkdir()
    left_out = collect(tmp_path / "left", "test_faults.py", BOTH_ENGINES, "-m", "engine_independent")
    assert left_out.returncode == 0, left_out.stdout + left_out.stderr
    assert "tests/test_faults.py::test_two_processes_share_the_campus[sqlite]" in left_out.stdout
    assert "[postgresql]" not in left_out.stdout
    kept = collect(tmp_path / "kept", "test_faults.py", BOTH_ENGINES, "-m", "not engine_independent")
    assert "tests/test_faults.py::test_two_processes_share_the_campus[postgresql]" in kept.stdout
    assert "[sqlite]" not in kept.stdout
