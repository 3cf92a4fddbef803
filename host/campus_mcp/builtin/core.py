"""The host's own contributions, registered like any plugin: its tables and the platform rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from campus_mcp.base.settings import Settings
from campus_mcp.limits.platforms import platform_ranges_job
from campus_mcp.mcp import answered_states
from campus_mcp.oauth.accounts import demo_students_loader
from campus_mcp.oauth.cleanup import cleanup_job
from campus_mcp.oauth.students_cli import students
from campus_mcp.plugin.contributions import DemoData, InstructionFragment, Migrations, PluginInfo
from campus_mcp.plugin.hookspecs import hookimpl
from campus_mcp.plugin.job_context import Job
from campus_mcp.plugin.untrusted import UNTRUSTED_RULE
from campus_mcp.students.access_log import prune_job
from campus_mcp.version import __version__


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="core",
        version=__version__,
        title="Campus MCP host",
        description="The host: job records, sign-in and the MCP endpoint.",
    )


@hookimpl
def register_migrations(settings: Settings) -> list[Migrations]:
    return [Migrations(path=Path(__file__).parent.parent / "migrations" / "versions")]


@hookimpl
def register_demo_data(settings: Settings) -> list[DemoData]:
    return [demo_students_loader(settings)]


@hookimpl
def register_jobs(settings: Settings) -> list[Job]:
    # The platform ranges job only where there is a list to read (CAMPUS_MCP_PLATFORM_RANGES_SOURCE).
    return [
        cleanup_job(),
        prune_job(),
        answered_states.prune_job(),
        *([platform_ranges_job()] if settings.platform_ranges_source else []),
    ]


@hookimpl
def register_commands(settings: Settings) -> list[Any]:

    return [students]


@hookimpl
def register_instructions(settings: Settings) -> list[InstructionFragment]:
    return [
        InstructionFragment(
            # Right after the first family's trigger, not last: a fragment that crosses the 2,048
            # characters is left out, and with every family and the dining example installed a
            # priority of 900 left out the one rule the whole product stands on.
            priority=15,
            text=(
                "Times are in the {timezone} time zone. Never change a student's data without "
                "the student's say-so: write tools ask the student to confirm. " + UNTRUSTED_RULE
            ),
        )
    ]
