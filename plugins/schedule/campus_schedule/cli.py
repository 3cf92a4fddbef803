"""``campus-mcp import enrollments FILE.csv``: campus IT's enrollment feed, by hand.

The run is recorded like a scheduled one (``schedule.import.enrollments``), with every refused row
counted by kind, so ``campus-mcp jobs list`` shows what was stored and what was not.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click
from campus_mcp import JobOutcome, PluginError, Settings, open_deployment, record_run, utcnow

from campus_schedule.feed import FeedResult, import_enrollments
from campus_schedule.jobs import IMPORT_JOB_ID, outcome_of


async def _import(path: Path, complete: tuple[str, ...]) -> FeedResult:
    content = await asyncio.to_thread(path.read_text, encoding="utf-8-sig")
    async with open_deployment(Settings()) as deployment:
        started = utcnow()
        try:
            async with deployment.session() as session:
                result = await import_enrollments(
                    session,
                    content,
                    complete_terms=complete,
                    create_students=deployment.settings.campus_sign_in,
                    campus_id_pattern=deployment.settings.campus_id_pattern,
                )
        except Exception as exc:
            async with deployment.session() as session:
                await record_run(
                    session,
                    job_id=IMPORT_JOB_ID,
                    plugin="schedule",
                    started_at=started,
                    outcome=JobOutcome(),
                    error=f"{type(exc).__name__}: the import stopped; nothing was written",
                )
                await session.commit()
            raise
        async with deployment.session() as session:
            await record_run(
                session,
                job_id=IMPORT_JOB_ID,
                plugin="schedule",
                started_at=started,
                finished_at=utcnow(),
                outcome=outcome_of(result),
            )
            await session.commit()
        return result


@click.command("enrollments")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--complete-term",
    "complete",
    multiple=True,
    help="A term this file lists completely: feed sections missing from it are taken away (repeatable).",
)
def import_enrollments_command(file: Path, complete: tuple[str, ...]) -> None:
    """Import an enrollment feed: CSV rows of student, term, CRN[, name].

    The student is the campus student id when a campus sign-in (OpenID Connect, SAML or CAS) is set
    up: a student not signed in yet is created with it. Without one, a local username or email.
    The optional name column names a student who has no name yet; other students see that name,
    never the campus id."""
    try:
        result = asyncio.run(_import(file, complete))
    except PluginError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(result.summary)
    for kind, text in result.lost().items():
        click.echo(f"  refused {kind}: {text}")
    if result.rows and not (result.added or result.unchanged):
        sys.exit(1)
