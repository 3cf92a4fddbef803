"""``campus-mcp audit`` and ``campus-mcp export``: the privacy office's answers to a records request
(docs/privacy.md). ``audit`` prints the access log of one student's data or of one app's reads;
``export`` prints everything the product holds about one student as one JSON document.

The text table writes every cell escaped (a line break as ``\\n``): one entry is one line. CSV
quotes a cell with a line break, as its readers expect, and JSON escapes it: both keep the text
as it was."""

from __future__ import annotations

import asyncio
import csv
import json
import sys
from datetime import UTC, date, datetime, time
from typing import Any

import click
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from campus_mcp.accounts import Student
from campus_mcp.deployment import Deployment, open_deployment
from campus_mcp.logsafe import cell
from campus_mcp.oauth.students_cli import find_student
from campus_mcp.settings import Settings
from campus_mcp.student_access import AccessEntry, entries, replay_stopped_journals

COLUMNS = ("at", "student", "app_name", "app_kind", "app_id", "door", "action", "outcome")


def _since(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date; give one as YYYY-MM-DD, e.g. 2026-09-01") from None
    return datetime.combine(day, time(), tzinfo=UTC)


@click.command("audit")
@click.option("--student", "student", default=None, help="Username or campus id: every read of their data.")
@click.option("--app", "app", default=None, help="An OAuth client id or name, or a token's name: what it read.")
@click.option("--since", default=None, help="Only entries from this day on (YYYY-MM-DD, UTC).")
@click.option("--format", "output", type=click.Choice(["text", "csv", "json"]), default="text", show_default=True)
def audit(student: str | None, app: str | None, since: str | None, output: str) -> None:
    """Which app read or changed a student's data, when, through which tool or route (the access log)."""
    if (student is None) == (app is None):
        raise click.UsageError("give --student ID or --app CLIENT (one of them)")
    start = _since(since)

    async def _read() -> list[tuple[AccessEntry, str]]:
        async with open_deployment(Settings(), migrate=False) as deployment:
            await _with_stopped_journals(deployment)
            async with deployment.session(read_only=True) as session:
                student_id = None if student is None else (await find_student(session, student)).id
                found = await entries(session, student_id=student_id, app=app, since=start)
                names = await _usernames(session, {entry.student_id for entry in found})
        return [(entry, names.get(entry.student_id, str(entry.student_id))) for entry in found]

    rows = asyncio.run(_read())
    if output == "json":
        click.echo(json.dumps([entry.as_dict() | {"student": name} for entry, name in rows], indent=2))
        return
    if output == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(COLUMNS)
        for entry, name in rows:
            values: dict[str, Any] = entry.as_dict() | {"student": name}
            writer.writerow([values[column] for column in COLUMNS])
        return
    if not rows:
        click.echo("No entries." + ("" if start is None else f" (since {since})"), err=True)
    for entry, name in rows:
        # An app's name is what the app registered, a token's what the student typed: every cell is
        # escaped (campus_mcp.logsafe), so a line break or a terminal escape in one cannot forge a row.
        click.echo(
            f"{entry.at:%Y-%m-%d %H:%M:%S}Z\t{cell(name)}\t{cell(entry.app_name)} ({cell(entry.app_kind)} "
            f"{cell(entry.app_id)})\t{cell(entry.door)}\t{cell(entry.action)}\t{cell(entry.outcome)}"
        )


async def _with_stopped_journals(deployment: Deployment) -> None:
    """The entries that processes of this machine killed before writing them left in their journals
    (campus_mcp.access_journal): into the database before it is read, so the answer has every call."""
    settings = deployment.settings
    try:
        await replay_stopped_journals(deployment.sessions, settings.var_dir, settings.database_url)
    except OSError as error:  # another user's files (the server's): its next start writes them
        click.echo(
            f"Note: the journals of stopped servers could not be read ({error}); the server writes them at its next start.",
            err=True,
        )


async def _usernames(session: AsyncSession, ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    rows = await session.execute(select(Student.id, Student.username).where(Student.id.in_(sorted(ids))))
    return {student_id: username for student_id, username in rows}


@click.command("export")
@click.option("--student", "student", required=True, help="Username or campus id.")
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None, help="A file (default: stdout)."
)
def export(student: str, output: str | None) -> None:
    """Everything the product holds about one student, as one JSON document (a records request)."""
    from campus_mcp.student_export import student_export

    async def _export() -> dict[str, Any]:
        async with open_deployment(Settings(), migrate=False) as deployment:
            await _with_stopped_journals(deployment)
            async with deployment.session(read_only=True) as session:
                student_id = (await find_student(session, student)).id
            return await student_export(deployment, student_id)

    text = json.dumps(asyncio.run(_export()), indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        with open(output, "w", encoding="utf-8") as file:
            file.write(text)
        click.echo(f"Wrote the export of {student!r} to {output}.", err=True)
