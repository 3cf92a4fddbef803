"""Does a search by meaning find the course a student means, asked in the student's own words?

The questions, and the course each one means, are in ``bench/search_in_students_words.json``
(written before the ranking was measured; see its ``about``). For each campus there (Thompson
Rivers University's whole term and Texas A&M's CSCE page, from ``../shared/fixtures``) this builds
a throwaway SQLite campus the way the README says, with ``campus-mcp import banner --file``,
serves it with ``campus-mcp serve`` on loopback, and asks every question through the MCP SDK's
client, as a student's assistant would:

- ``search_sections {"term": ..., "q": ..., "semantic": true}``: the courses of the sections
  listed, in order, each course once;
- ``search_courses {"q": ..., "semantic": true}``: the courses listed.

A question scores top-1 when the first course listed is the one meant (or one of its ``also``),
top-3 when it is among the first three. The figures, the misses and what each miss listed first
are printed. Bounded: one call per question and tool, loopback only.

    .venv/bin/python bench/search_in_students_words.py [--work var/bench-words] [--keep] [--only tru]

Not a test: relevance is measured here and written into docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
import search_sections  # type: ignore[import-not-found]
from search_sections import command, serve  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = Path(__file__).with_suffix(".json")
FIXTURES = ROOT.parent / "shared" / "fixtures"
TOOLS = ("search_sections", "search_courses")
PAGE = 10


_demo_env = search_sections.campus_env
_SECRET_KEY = secrets.token_urlsafe(32)


def campus_env(database: Path) -> dict[str, str]:
    """A real campus, not the demo: demo mode off (so no demo catalog is loaded beside the
    import), with a secret key of its own, as the README's "Run it with your campus's data" says."""
    env: dict[str, str] = _demo_env(database)
    env |= {"CAMPUS_MCP_DEMO": "false", "CAMPUS_MCP_SECRET_KEY": _SECRET_KEY}
    return env


# search_sections.serve starts its server with the environment of search_sections.campus_env.
search_sections.campus_env = campus_env


@dataclass
class Scored:
    asked: int = 0
    top1: int = 0
    top3: int = 0
    empty: int = 0
    misses: list[str] = field(default_factory=list)
    # Each question's place of the course meant (1, 2, 3; 0: not in the top 3), in the file's order.
    places: list[int] = field(default_factory=list)


def import_campus(database: Path, fixture: Path) -> float:
    """``campus-mcp import banner --file`` into a new SQLite campus; the seconds it took."""
    started = time.perf_counter()
    subprocess.run(
        [command("campus-mcp"), "import", "banner", "--file", str(fixture)],
        env=campus_env(database),
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def courses_listed(tool: str, answer: dict[str, Any]) -> list[str]:
    if tool == "search_courses":
        return [course["code"] for course in answer.get("courses", [])]
    return list(dict.fromkeys(section["course_code"] for section in answer.get("sections", [])))


async def ask(url: str, term: str, questions: list[dict[str, Any]], scores: dict[str, Scored]) -> None:
    async with Client(url, mode="legacy") as client:
        for question in questions:
            wanted = {question["course"], *question.get("also", [])}
            for tool in TOOLS:
                arguments: dict[str, Any] = {"q": question["q"], "semantic": True, "limit": PAGE}
                if tool == "search_sections":
                    arguments |= {"term": term, "limit": 25}
                result = await client.call_tool(tool, arguments)
                if result.is_error:
                    raise SystemExit(f"{tool} {arguments}: {result.content}")
                listed = courses_listed(tool, result.structured_content or {})
                scored = scores[tool]
                scored.asked += 1
                scored.empty += not listed
                scored.top1 += bool(listed[:1]) and listed[0] in wanted
                hit = bool(wanted & set(listed[:3]))
                scored.top3 += hit
                scored.places.append(next((n for n, code in enumerate(listed[:3], 1) if code in wanted), 0))
                if not hit:
                    scored.misses.append(
                        f"{question['q']!r} meant {question['course']}; listed {', '.join(listed[:3]) or 'nothing'}"
                    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, help="Folder for the campuses and logs (default: a temporary one).")
    parser.add_argument("--keep", action="store_true", help="Keep the campuses of --work and import only when absent.")
    parser.add_argument("--only", action="append", help="Only these campuses of the questions file (tru, tamu).")
    options = parser.parse_args()
    spec = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    work = options.work or Path(tempfile.mkdtemp(prefix="students-words-"))
    work.mkdir(parents=True, exist_ok=True)
    scores = {tool: Scored() for tool in TOOLS}
    try:
        for name, campus in spec["campuses"].items():
            if options.only and name not in options.only:
                continue
            fixture = FIXTURES / campus["fixture"]
            if not fixture.is_file():
                raise SystemExit(f"{fixture} is missing: the fixtures are in ../shared/fixtures beside the project")
            database = (work / f"{name}.db").resolve()
            if database.exists() and not options.keep:
                database.unlink()
            if not database.exists():
                print(f"{name}: imported {fixture.name} in {import_campus(database, fixture):.0f} s")
            questions = [q for q in spec["questions"] if q["campus"] == name]
            with serve(database, work / f"serve-{name}.log") as url:
                asyncio.run(ask(url, campus["term"], questions, scores))
    finally:
        if options.work is None:
            shutil.rmtree(work, ignore_errors=True)
    for tool, scored in scores.items():
        asked = scored.asked or 1
        print(
            f"\n{tool} (semantic): {scored.asked} questions, top-1 {scored.top1} ({scored.top1 / asked:.0%}), "
            f"top-3 {scored.top3} ({scored.top3 / asked:.0%}), nothing listed {scored.empty}"
        )
        print(
            "  place of the course meant, question by question (0: not in the top 3): "
            + "".join(map(str, scored.places))
        )
        for miss in scored.misses:
            print(f"  not in the top 3: {miss}")


if __name__ == "__main__":
    main()
