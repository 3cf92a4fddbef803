"""How fast campus IT's enrollment feed imports: a 10,000-row CSV into a demo campus, twice.

    .venv/bin/python bench/bench_enrollment_import.py [--rows 10000] [--bad-percent 2]

Builds a demo campus database (SQLite, catalog and schedule families), adds enough students for
four sections each in the current term, and writes a feed whose bad rows are a few percent of
each kind the feed refuses (unknown student, unknown term, unknown CRN, a CRN of another term,
a cancelled section, a malformed row). Imports it twice with the function ``campus-mcp import
enrollments`` runs (``campus_schedule.feed.import_enrollments``, one transaction), prints rows a
second for each run and the counts by kind, and asserts the second run changed no row. Then runs
the command itself once more on the same file (a third, unchanged run, start-up included).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from campus_catalog.models import Section, Term
from campus_catalog.queries.clock import campus_today
from campus_mcp import open_deployment
from campus_mcp.testing import load_plugins, prepare_database, test_settings
from campus_schedule.feed import KINDS, FeedResult, import_enrollments
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

PER_STUDENT = 4
SEED = 11


async def _current_and_other_term(session: AsyncSession, today: Any) -> tuple[Term, Term]:
    with_sections = select(Section.term_id).distinct()
    terms = (await session.scalars(select(Term).where(Term.id.in_(with_sections)).order_by(Term.start_date))).all()
    current = next((t for t in terms if t.start_date <= today <= t.end_date), terms[-1])
    other = next(t for t in terms if t.id != current.id)
    return current, other


async def _add_students(session: AsyncSession, count: int) -> list[str]:
    now = datetime.now(UTC)
    names = [f"bench{n:05d}" for n in range(count)]
    await session.execute(
        text(
            "INSERT INTO students (username, display_name, email, is_demo, created_at, session_generation) "
            "VALUES (:u, :d, :e, false, :now, 0)"
        ),
        [{"u": name, "d": f"Bench Student {name}", "e": f"{name}@example.edu", "now": now} for name in names],
    )
    await session.commit()
    return names


async def write_feed(session: AsyncSession, path: Path, rows: int, bad_percent: float, today: Any) -> dict[str, int]:
    """The feed file, and how many bad rows of each kind it has."""
    rng = random.Random(SEED)
    current, other = await _current_and_other_term(session, today)

    def crns(term: Term, cancelled: bool) -> list[str]:
        return [s.crn for s in (term_sections[term.id]) if bool(s.cancelled) == cancelled]

    term_sections: dict[int, list[Section]] = {}
    for term in (current, other):
        term_sections[term.id] = list((await session.scalars(select(Section).where(Section.term_id == term.id))).all())
    open_crns = crns(current, cancelled=False)
    cancelled = crns(current, cancelled=True)
    current_crns = set(open_crns) | set(cancelled)
    elsewhere = [c for c in crns(other, cancelled=False) if c not in current_crns]
    each_bad = max(1, int(rows * bad_percent / 100))
    kinds = [k for k in KINDS if k != "cancelled_section" or cancelled]
    good = rows - each_bad * len(kinds)
    names = await _add_students(session, -(-good // PER_STUDENT))
    lines: list[list[str]] = [["student", "term", "crn"]]
    for index, name in enumerate(names):
        who = name if index % 2 else f"{name}@example.edu"  # usernames and emails, as a feed mixes them
        for crn in rng.sample(open_crns, PER_STUDENT)[: min(PER_STUDENT, good - index * PER_STUDENT)]:
            lines.append([who, current.uid, crn])
    bad: dict[str, list[list[str]]] = {
        "unknown_student": [[f"gone{n:05d}", current.uid, open_crns[0]] for n in range(each_bad)],
        "unknown_term": [[names[n % len(names)], "199910", open_crns[0]] for n in range(each_bad)],
        "unknown_crn": [[names[n % len(names)], current.uid, f"9{n:05d}"] for n in range(each_bad)],
        "crn_in_another_term": [
            [names[n % len(names)], current.uid, elsewhere[n % len(elsewhere)]] for n in range(each_bad)
        ],
        "cancelled_section": [
            [names[n % len(names)], current.uid, cancelled[n % len(cancelled)]] for n in range(each_bad)
        ]
        if cancelled
        else [],
        "malformed_row": [[names[n % len(names)], current.uid] for n in range(each_bad)],
    }
    for kind_rows in bad.values():
        for row in kind_rows:
            lines.insert(rng.randrange(1, len(lines) + 1), row)
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(lines)
    return {kind: len(kind_rows) for kind, kind_rows in bad.items() if kind_rows}


async def dump(session: AsyncSession) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in await session.execute(text("SELECT * FROM schedule_enrollments ORDER BY id"))]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--bad-percent", type=float, default=2.0, help="bad rows of each kind, in percent")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        settings = test_settings(f"sqlite+aiosqlite:///{folder / 'campus.db'}", plugins=["catalog", "schedule"])
        await prepare_database(load_plugins(settings), demo=True)
        feed = folder / "enrollments.csv"
        async with open_deployment(settings, migrate=False) as deployment:
            async with deployment.session() as session:
                planted = await write_feed(session, feed, args.rows, args.bad_percent, campus_today(settings.timezone))
            content = feed.read_text(encoding="utf-8")
            runs: list[tuple[FeedResult, float]] = []
            dumps = []
            for _ in range(2):
                started = time.perf_counter()
                async with deployment.session() as session:
                    result = await import_enrollments(session, content)
                runs.append((result, time.perf_counter() - started))
                async with deployment.session() as session:
                    dumps.append(await dump(session))
        first, second = runs[0][0], runs[1][0]
        for label, (result, seconds) in zip(("first", "second"), runs, strict=True):
            print(
                f"{label} run: {result.rows} rows in {seconds:.2f} s = {result.rows / seconds:,.0f} rows/s; {result.summary}"
            )
        print("refused by kind: " + ", ".join(f"{kind} {first.refused[kind]}" for kind in KINDS if first.refused[kind]))
        assert dict(first.refused) == planted, (dict(first.refused), planted)
        assert second.added == 0 and second.removed == 0 and second.unchanged == first.added + first.unchanged
        assert dict(second.refused) == dict(first.refused)
        assert dumps[0] == dumps[1], "the second run changed a row"
        print("second run changed no row")
        command = Path(sys.executable).with_name("campus-mcp")
        env = os.environ | {
            "CAMPUS_MCP_DATABASE_URL": settings.database_url,
            "CAMPUS_MCP_PLUGINS": "catalog,schedule",
            "CAMPUS_MCP_CONFIG": str(folder / "no-config.toml"),
            "CAMPUS_MCP_SECRET_KEY": "bench-only-secret-key",
        }
        started = time.perf_counter()
        done = await asyncio.to_thread(
            subprocess.run,
            [str(command), "import", "enrollments", str(feed)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        seconds = time.perf_counter() - started
        assert f"{first.rows} row(s): 0 added" in done.stdout, done.stdout
        print(f"campus-mcp import enrollments (third run, start-up included): {seconds:.2f} s")


if __name__ == "__main__":
    asyncio.run(main())
