"""Issue 37, point 10: every command of the README's "Run it with your campus's data" runs as written.

The section's shell blocks run in order in bash, in a folder laid out as the section says (the
TAMU Banner page in ``banner/``, a real academic calendar, a finals CSV, a programs and an
elective lists file, an enrollment feed), with ``.venv`` the project's. Then its ``serve`` starts
the real server, its ``token --url`` line makes a token, and its SDK snippet signs in with it and
reads the student's courses and a schedule check. Only two kinds of line are not run: the ones
that read a live Banner over the internet (``--live``, ``--details`` without ``--file``, the
Banner URL), since tests reach only loopback; and the port, 8000 in the README, is a free one.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
from campus_catalog.sources.fake_banner import description_html
from campus_mcp.testing.oauth import free_port

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures"
README = ROOT / "README.md"
PASSWORD = "a-long-enough-password"
# Needs a live Banner over the internet: not run (tests reach only loopback).
LIVE = re.compile(r"--live|CATALOG_BANNER_URL=|import banner --details\s*(#|$)")


def section() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split("## Run it with your campus's data", 1)[1].split("\n## ", 1)[0]


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", section(), flags=re.S)


def campus_folder(folder: Path) -> None:
    """The files the section's commands name, as a campus administrator would have them."""
    (folder / ".venv").symlink_to(ROOT / ".venv")
    (folder / "banner").mkdir()
    shutil.copy(FIXTURES / "banner9-searchResults-tamu-202131-csce.json", folder / "banner" / "csce.json")
    # A course's detail page as Banner serves it (the section says how to save them with curl).
    (folder / "banner" / "getCourseDescription-202131-45405.html").write_text(
        description_html("Programming I: variables, loops and functions, in Python."), encoding="utf-8"
    )
    shutil.copy(FIXTURES / "academic-calendar-princeton-2022-2023.ics", folder / "academic-calendar.ics")
    (folder / "finals.csv").write_text(
        "CRN,Course,Exam Date,Start Time,End Time,Location\n45405,CSCE 110,12/10/2021,8:00 AM,10:00 AM,ZACH 582\n",
        encoding="utf-8",
    )
    program = {
        "slug": "bs-computer-science",
        "name": "Computer Science",
        "school": "College of Engineering",
        "degree": "BS",
        "plans_of_study": [{"name": "Standard", "semesters": [{"label": "Year 1 Fall", "courses": []}]}],
        "elective_lists": [],
    }
    (folder / "programs.json").write_text(
        json.dumps({"catalog_year": "2021-2022", "programs": [program]}), encoding="utf-8"
    )
    electives = {"term": "202131", "school": "College of Engineering", "title": "Fall 2021 electives"}
    (folder / "electives.json").write_text(
        json.dumps({"lists": [{**electives, "url": "https://registrar.example.edu/e.pdf", "course_headings": []}]}),
        encoding="utf-8",
    )
    (folder / "enrollments.csv").write_text("student,term,crn\naggie,202131,45405\n", encoding="utf-8")


def test_every_command_of_the_section_runs_as_written(tmp_path: Path) -> None:
    campus_folder(tmp_path)
    port = str(free_port())
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    env["CAMPUS_MCP_VAR_DIR"] = str(tmp_path / "var")
    env["CAMPUS_MCP_CONFIG"] = str(tmp_path / "campus-mcp.toml")
    lines = [line.replace("8000", port) for block in blocks("sh") for line in block.splitlines()]
    assert any("token" in line and "--url" in line for line in lines), "the section makes a token for a URL"
    serve_at = next(i for i, line in enumerate(lines) if " serve " in line)
    setup = [line for line in lines[:serve_at] if not LIVE.search(line)]
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", "\n".join([*setup, "env -0"])],
        cwd=tmp_path,
        env=env,
        input=f"{PASSWORD}\n{PASSWORD}\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    output = ran.stdout.rsplit("\n", 1)[0] if "\0" not in ran.stdout else ran.stdout
    exported = dict(item.split("=", 1) for item in ran.stdout.split("\0") if "=" in item)
    env = {**env, **{k: v for k, v in exported.items() if k.startswith("CAMPUS_MCP_")}}
    assert "aggie" in output  # the enrollment feed named the student it added a section for

    serve = shlex.split(lines[serve_at].split("&", 1)[0])
    server = subprocess.Popen(serve, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(300):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        token_line = next(line for line in lines[serve_at + 1 :] if " token " in line)
        token = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", token_line], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert token.returncode == 0, token.stderr
        [snippet] = blocks("python")
        read = subprocess.run(
            [sys.executable, "-c", snippet.replace("8000", port)],
            cwd=tmp_path,
            env={**env, "TOKEN": token.stdout.strip()},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert read.returncode == 0, read.stderr[-3000:]
    finally:
        server.terminate()
        server.wait(timeout=30)
    mine, plan = read.stdout.splitlines()[-2:]
    assert "CSCE 110" in mine and "45405" in mine  # the student's own course, from the enrollment feed
    assert "'held_crns': ['45405']" in plan  # check_schedule knows the section is theirs
