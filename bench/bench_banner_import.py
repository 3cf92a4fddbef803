"""How long a Banner import takes: the fixture (157 sections) and a term-sized copy of it.

    .venv/bin/python bench/bench_banner_import.py [--copies 20]

The copies get new CRNs and course numbers, so ``--copies 20`` is 3,140 sections (a large
campus's term). Each size is imported twice into a fresh SQLite file: the first import creates
every row, the second finds nothing changed (the nightly case). Prints seconds and sections a
second; the ratio of the two imports is the figure to watch.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from campus_catalog.sources.banner_sync import import_banner_file
from campus_mcp import open_deployment
from campus_mcp.testing import test_settings

FIXTURE = (
    Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "banner9-searchResults-tamu-202131-csce.json"
)


def scaled(copies: int, folder: Path) -> Path:
    page: dict[str, Any] = json.loads(FIXTURE.read_text())
    sections = []
    for n in range(copies):
        for raw in page["data"]:
            item = copy.deepcopy(raw)
            item["courseReferenceNumber"] = f"{n}{raw['courseReferenceNumber']}"
            item["courseNumber"] = f"{n}{raw['courseNumber']}" if n else raw["courseNumber"]
            sections.append(item)
    page["data"] = sections
    page["totalCount"] = len(sections)
    path = folder / f"scaled-{copies}.json"
    path.write_text(json.dumps(page))
    return path


async def measure(path: Path, folder: Path) -> tuple[int, float, float]:
    settings = test_settings(f"sqlite+aiosqlite:///{folder / (path.stem + '.db')}", plugins=["catalog"])
    async with open_deployment(settings) as deployment:
        started = time.perf_counter()
        first = await import_banner_file(deployment.sessions, path)
        created = time.perf_counter() - started
        started = time.perf_counter()
        second = await import_banner_file(deployment.sessions, path)
        unchanged = time.perf_counter() - started
        assert second.unchanged == first.created == first.stored
        return first.stored, created, unchanged


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for path in (FIXTURE, scaled(args.copies, folder)):
            sections, created, unchanged = await measure(path, folder)
            print(
                f"{sections:6d} sections: first import {created:6.2f} s ({sections / created:7.0f}/s), "
                f"second import {unchanged:6.2f} s ({sections / unchanged:7.0f}/s), ratio {created / unchanged:4.1f}"
            )


if __name__ == "__main__":
    asyncio.run(main())
