"""Hook implementations of the schedule family. Wiring only: the logic lives beside this module.

The student's own courses, course history, finals and busy times (seed 000's tools table), their
REST twins under ``/api/v1/me``, the My schedule pages, the enrollment feed and demo schedules.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from campus_catalog.api import StudentRecord, import_group, register_student_record
from campus_mcp import (
    DemoData,
    InstructionFragment,
    Job,
    Migrations,
    PluginInfo,
    ResourceTemplate,
    RouteGroup,
    Scope,
    Settings,
    StudentData,
    Tool,
    ToolExample,
    hookimpl,
    operation_examples,
)
from sqlalchemy.ext.asyncio import AsyncSession

from campus_schedule import models as _models  # noqa: F401  (the tables join the metadata)
from campus_schedule.settings import ScheduleSettings

__version__ = "0.1.0"


async def _student_record(session: AsyncSession, student_id: int, term_uid: str, today: date) -> StudentRecord:
    from campus_schedule.record import read_record  # loaded at the first signed-in check, not at start

    return await read_record(session, student_id, term_uid, today)


# The catalog's check_schedule knows the signed-in student's sections and history through it.
register_student_record("schedule", _student_record)


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    warm_up = None
    if settings.mail_configured:
        from campus_schedule.seat_mail import on_section_changes

        # Not a warm-up that ends: each server process e-mails a watched seat's opening as soon as
        # it hears the section change (the claim in the database keeps it to one e-mail).
        warm_up = on_section_changes(settings)
    return PluginInfo(
        name="schedule",
        version=__version__,
        icon=Path(__file__).with_name("icon.svg"),
        title="My schedule",
        description="The student's own courses, course history, finals and busy times.",
        depends_on=("catalog",),
        settings_model=ScheduleSettings,
        warm_up=warm_up,
    )


@hookimpl
def register_scopes() -> list[Scope]:
    from campus_schedule.tools import SCOPE, WRITE_SCOPE

    return [
        Scope(
            name=SCOPE,
            title="See your courses, finals and busy times",
            description="Read your own courses, course history, final exams and busy times.",
            starts_checked=True,
        ),
        Scope(
            name=WRITE_SCOPE,
            title="Change the sections of your schedule",
            description="Add and remove sections of your schedule of a term, after you confirm.",
            writes=True,
            starts_checked=False,
        ),
    ]


@hookimpl
def register_tools(settings: Settings) -> list[Tool]:
    from campus_schedule.tools import schedule_tools

    return schedule_tools(settings)


@hookimpl
def register_resources() -> list[ResourceTemplate]:
    from campus_schedule.resources import schedule_resources

    return schedule_resources()


@hookimpl
def register_routes() -> list[RouteGroup]:
    from campus_schedule.pages import PAGES
    from campus_schedule.routes import ROUTES
    from campus_schedule.watch_pages import WATCH_PAGES

    return [RouteGroup(handlers=[*ROUTES, *PAGES, *WATCH_PAGES])]


@hookimpl
def register_instructions(settings: Settings) -> list[InstructionFragment]:
    return [
        InstructionFragment(
            priority=20,
            text=(
                "When a student asks about their own courses ('my classes', 'my schedule', 'my finals', 'when "
                "am I free'), call my_courses, my_finals or my_busy_times; my_course_history gives past terms."
            ),
        )
    ]


@hookimpl
def register_tool_examples() -> list[ToolExample]:
    from campus_schedule.tools import OPERATIONS

    return operation_examples(OPERATIONS)


@hookimpl
def register_migrations() -> list[Migrations]:
    return [Migrations(path=Path(__file__).parent / "migrations")]


@hookimpl
def register_demo_data() -> list[DemoData]:
    from campus_schedule.demo import load_demo_schedules

    # After the catalog (order 10): the schedules point at its demo sections.
    return [DemoData(load=load_demo_schedules, order=20)]


@hookimpl
def register_commands() -> list[Any]:
    # `campus-mcp import enrollments` joins the catalog's `import` group (a plugin command may not
    # take another's name), so the administrator finds every import in one place.
    from campus_schedule.cli import import_enrollments_command

    import_group().add_command(import_enrollments_command)
    return []


@hookimpl
def register_jobs(settings: Settings, plugin_settings: ScheduleSettings) -> list[Job]:
    from campus_schedule.jobs import feed_job
    from campus_schedule.seat_mail import seat_mail_job

    jobs = [seat_mail_job()] if settings.mail_configured else []
    # With a campus sign-in (OpenID Connect, SAML or CAS), the feed creates the students it names
    # who have not signed in yet, their ids checked by the sign-ins' rule.
    if plugin_settings.enrollment_feed:
        jobs.append(
            feed_job(
                plugin_settings, create_students=settings.campus_sign_in, campus_id_pattern=settings.campus_id_pattern
            )
        )
    return jobs


@hookimpl
def register_student_data() -> list[StudentData]:
    from campus_schedule.export import STUDENT_DATA

    return list(STUDENT_DATA)
