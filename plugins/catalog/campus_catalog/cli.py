"""``campus-mcp import banner|calendar|finals``: an administrator's imports, with a progress bar.

Each import is recorded in the job records like a scheduled run (``catalog.import.<source>``),
so ``campus-mcp jobs list`` shows what it stored and what it lost. The database is migrated
first, as ``serve`` does. Exit status 1 when nothing could be stored.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import click
from campus_mcp import Deployment, PluginError, Settings, open_deployment, utcnow
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_catalog.catalog_settings import CatalogSettings, feed_limit

T = TypeVar("T")
console = Console(stderr=True)


def _run(work: Callable[[Deployment], Awaitable[T]]) -> T:
    async def _go() -> T:
        # Migrated first, as `campus-mcp serve` does. A bad catalog setting stops here (PluginError).
        async with open_deployment(Settings()) as deployment:
            return await work(deployment)

    try:
        return asyncio.run(_go())
    except PluginError as exc:
        raise click.ClickException(str(exc)) from None


def _catalog(deployment: Deployment) -> CatalogSettings:
    """The catalog's settings, as the host loaded them ([plugins.catalog], CAMPUS_MCP_CATALOG_*)."""
    catalog: CatalogSettings = deployment.plugin_settings("catalog")
    return catalog


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def _report(summary: str, lost: dict[str, str], stored: int, gaps: dict[str, str] | None = None) -> None:
    click.echo(summary)
    for label, found in (("not stored", lost), ("stored with a gap", gaps or {})):
        for item, reason in list(found.items())[:20]:
            click.echo(f"  {label}: {item}: {reason}")
        if len(found) > 20:
            click.echo(
                f"  ... and {len(found) - 20} more {label}" + (" (campus-mcp jobs list)" if found is lost else "")
            )
    if stored == 0:
        sys.exit(1)


async def _record(
    sessions: async_sessionmaker[AsyncSession],
    source: str,
    started: datetime,
    items: int,
    lost: dict[str, str],
    summary: str,
) -> None:
    from campus_catalog.refresh_queue import record_catalog_run

    await record_catalog_run(sessions, started, items, lost, summary, job_id=f"catalog.import.{source}")


# The job id of a Banner import from the command line, as `campus-mcp jobs list` shows it.
BANNER_IMPORT = "catalog.import.banner"


@click.group("import")
def import_group() -> None:
    """Import catalog data: Banner sections, the academic calendar, final exams."""


@import_group.command("banner")
@click.option(
    "--file",
    "path",
    type=click.Path(exists=True, path_type=Path),
    help=(
        "Saved searchResults JSON (a file or a folder of them; a folder's saved detail pages are imported "
        "too). Default: CAMPUS_MCP_CATALOG_BANNER_FILE."
    ),
)
@click.option("--live", is_flag=True, help="Read Banner now (CAMPUS_MCP_CATALOG_BANNER_URL): the daily sync.")
@click.option(
    "--details",
    is_flag=True,
    help=(
        "Only course descriptions and prerequisites: the saved detail pages of --file's folder "
        "(getCourseDescription-TERM-CRN.html, getSectionPrerequisites-TERM-CRN.html), or without --file "
        "read from CAMPUS_MCP_CATALOG_BANNER_URL at the sync's pace."
    ),
)
@click.option("--term", "terms", multiple=True, help="With --live or --details: only these term codes (repeatable).")
def import_banner(path: Path | None, live: bool, details: bool, terms: tuple[str, ...]) -> None:
    """Import sections from saved Banner responses, or sync them from Banner (--live); --details
    imports course details only."""
    if details:
        if live:
            raise click.ClickException("--details reads course details only: give it without --live")
        _import_banner_details(path, terms)
        return
    from campus_mcp import publish_changes

    from campus_catalog.queries.clock import campus_today
    from campus_catalog.refresh_queue import record_catalog_run
    from campus_catalog.resources import section_uri
    from campus_catalog.semantic import fill_vectors_after_import
    from campus_catalog.sources.banner_sync import import_banner_file, sync_sections
    from campus_catalog.sources.errors import SourceError

    async def work(deployment: Deployment) -> tuple[int, dict[str, str], str, dict[str, str]]:
        catalog = _catalog(deployment)
        source = path or catalog.banner_file
        if live and not catalog.banner_url:
            raise click.ClickException(
                "--live needs CAMPUS_MCP_CATALOG_BANNER_URL (the Banner base URL ending in /ssb)"
            )
        if not live and source is None:
            raise click.ClickException("give --file PATH, set CAMPUS_MCP_CATALOG_BANNER_FILE, or use --live")
        sessions = deployment.sessions
        started = utcnow()
        with _progress() as bar:
            task = bar.add_task("Banner sections", total=None)

            def progress(what: str, done: int, total: int | None) -> None:
                bar.update(task, description=f"Banner {what}", completed=done, total=total)

            if live:
                today = campus_today(deployment.settings.timezone)
                try:
                    report, lost = await sync_sections(
                        sessions, catalog, today, only_terms=list(terms) or None, progress=progress
                    )
                except SourceError as exc:
                    # Banner could not even list its terms: a failed run, with the kind and
                    # whether the next run retries, and one sentence (seed 001).
                    await record_catalog_run(
                        sessions, started, 0, {}, "Banner could not be read", exc.record(), job_id=BANNER_IMPORT
                    )
                    raise click.ClickException(
                        f"Banner could not be read, nothing was imported: {exc.record()}. "
                        "The run is recorded (campus-mcp jobs list)."
                    ) from None
                lost = {**report.lost(), **lost}
            else:
                assert source is not None
                report = await import_banner_file(sessions, source, progress=progress)
                lost = report.lost()
        with console.status("Vectors for search by meaning"):
            vectors = await fill_vectors_after_import(sessions, "banner")
        summary = f"{report.summary()}; {vectors}"
        await _record(sessions, "banner", started, report.stored, lost, summary)
        # Students listening to a changed section hear it (through Redis, from this command too).
        await publish_changes(deployment.settings, [section_uri(t, c) for t, c in report.changed_sections])
        return report.stored, lost, summary, report.gaps()

    try:
        stored, lost, summary, gaps = _run(work)
    except (ValueError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    _report(summary, lost, stored, gaps)


def _import_banner_details(path: Path | None, terms: tuple[str, ...]) -> None:
    """``import banner --details``: saved detail pages from a folder, or read from the campus's Banner."""
    from campus_catalog.queries.clock import campus_today
    from campus_catalog.semantic import fill_vectors_after_import
    from campus_catalog.sources.banner_details import import_detail_pages
    from campus_catalog.sources.course_details import sync_course_details

    async def work(deployment: Deployment) -> tuple[int, dict[str, str], str]:
        catalog = _catalog(deployment)
        folder = path or (None if catalog.banner_url else catalog.banner_file)
        if folder is None and not catalog.banner_url:
            raise click.ClickException(
                "--details needs --file FOLDER (saved detail pages) or CAMPUS_MCP_CATALOG_BANNER_URL (to read them)"
            )
        if folder is not None and not folder.is_dir():
            raise click.ClickException(
                f"{folder.name} is a file: --details --file takes the folder of the saved detail pages"
            )
        sessions = deployment.sessions
        started = utcnow()
        with _progress() as bar:
            task = bar.add_task("Course details", total=None)

            def progress(what: str, done: int, total: int | None) -> None:
                bar.update(task, description=f"Banner {what}", completed=done, total=total)

            if folder is not None:
                report = await import_detail_pages(sessions, folder, progress=progress)
                stored, lost, summary = report.stored, report.lost, report.summary()
            else:
                today = campus_today(deployment.settings.timezone)
                stored, lost = await sync_course_details(
                    sessions, catalog, today, only_terms=list(terms) or None, progress=progress
                )
                summary = f"details of {stored} courses read from Banner; {len(lost)} not stored"
                if not stored and not lost:
                    which = ", ".join(terms) if terms else "the current and future terms"
                    summary += (
                        f" (no course of {which} was due: each is read once in 7 days; "
                        "--term TERM reads a term, a past one too)"
                    )
        with console.status("Vectors for search by meaning"):
            vectors = await fill_vectors_after_import(sessions, "course details")
        summary = f"{summary}; {vectors}"
        await _record(sessions, "banner_details", started, stored, lost, summary)
        return stored, lost, summary

    try:
        stored, lost, summary = _run(work)
    except (ValueError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    # Nothing read and nothing lost: every course was read from Banner in the last 7 days.
    _report(summary, lost, stored if stored or lost else 1)


@import_group.command("calendar")
@click.option(
    "--file", "path", type=click.Path(exists=True, path_type=Path), help="A saved .ics file (default: the feed)."
)
def import_calendar_command(path: Path | None) -> None:
    """Import the academic calendar from its iCalendar feed or a saved .ics file."""
    from campus_catalog.sources.calendar_ics import CALENDAR_FEED, import_calendar

    async def work(deployment: Deployment) -> tuple[int, dict[str, str], str]:
        catalog = _catalog(deployment)
        url = "" if path else catalog.calendar_url
        source = path or (None if url else catalog.calendar_file)
        if not url and source is None:
            raise click.ClickException("give --file PATH, or set CAMPUS_MCP_CATALOG_CALENDAR_URL or _CALENDAR_FILE")
        sessions = deployment.sessions
        started = utcnow()
        with console.status("Reading the academic calendar"):
            report = await import_calendar(
                sessions,
                deployment.settings.timezone,
                url=url,
                path=source,
                timeout_seconds=catalog.calendar_timeout_seconds,
                limit=feed_limit(CALENDAR_FEED, catalog.feed_max_bytes),
            )
        await _record(sessions, "calendar", started, report.stored, report.lost(), report.summary())
        return report.stored, report.lost(), report.summary()

    try:
        stored, lost, summary = _run(work)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    _report(summary, lost, stored)


@import_group.command("finals")
@click.option("--term", required=True, help="The term code (Banner's, for example 202710).")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def import_finals_command(term: str, path: Path) -> None:
    """Import a term's final exams from a CSV file or the text of the registrar's PDF (.txt)."""
    from campus_catalog.sources.finals import import_finals, parse_finals_file

    try:
        rows, problems = parse_finals_file(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise click.ClickException(f"{path.name} could not be read: {exc}") from None

    async def work(deployment: Deployment) -> tuple[int, dict[str, str], str]:
        sessions = deployment.sessions
        started = utcnow()
        async with sessions() as session:
            report = await import_finals(session, term, rows, problems, source_name=path.name)
            await session.commit()
        await _record(sessions, "finals", started, report.exams, report.lost(), report.summary())
        return report.exams, report.lost(), report.summary()

    try:
        stored, lost, summary = _run(work)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    _report(summary, lost, stored)


def _feed_command(source: str, what: str) -> Callable[[Path], None]:
    def run(path: Path) -> None:
        from campus_catalog.sources.catalog_feeds import FeedReport, import_elective_lists, import_programs
        from campus_catalog.sources.errors import SourceError

        async def work(deployment: Deployment) -> tuple[int, dict[str, str], str]:
            sessions = deployment.sessions
            started = utcnow()
            report = FeedReport()
            data = await asyncio.to_thread(path.read_bytes)
            async with sessions() as session:
                if source == "programs":
                    await import_programs(session, data, now=started, report=report)
                else:
                    await import_elective_lists(session, data, now=started, report=report)
                await session.commit()
            await _record(sessions, source, started, report.stored, report.lost(), report.summary(what))
            return report.stored, report.lost(), report.summary(what)

        try:
            stored, lost, summary = _run(work)
        except SourceError as exc:
            raise click.ClickException(f"{path.name}: {exc}") from None
        _report(summary, lost, stored)

    return run


@import_group.command("programs")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def import_programs_command(path: Path) -> None:
    """Import one catalog year's degree programs from a programs JSON file (docs/data-sources.md)."""
    _feed_command("programs", "programs")(path)


@import_group.command("electives")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def import_electives_command(path: Path) -> None:
    """Import the schools' elective lists from an elective lists JSON file (docs/data-sources.md)."""
    _feed_command("electives", "elective lists")(path)
