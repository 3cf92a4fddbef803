"""Hook implementations of the schedule family. Wiring only: the logic lives beside this module.

No scopes yet: a scope comes with the first tool that needs it (seed 000 "Permissions"), so
that the consent page never offers a permission for tools that do not exist.
"""

from __future__ import annotations

from pathlib import Path

from campus_mcp import Migrations, PluginInfo, Settings, hookimpl

from campus_schedule import models as _models  # noqa: F401  (the tables join the metadata)

__version__ = "0.1.0"


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="schedule",
        version=__version__,
        title="My schedule",
        description="The student's own courses, course history, finals and busy times.",
        depends_on=("catalog",),
    )


@hookimpl
def register_migrations() -> list[Migrations]:
    return [Migrations(path=Path(__file__).parent / "migrations")]
