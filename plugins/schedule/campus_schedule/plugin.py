"""Hook implementations of the schedule family. Wiring only: the logic lives beside this module."""

from __future__ import annotations

from campus_mcp import PluginInfo, Scope, Settings, hookimpl

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
def register_scopes(settings: Settings) -> list[Scope]:
    return [
        Scope(
            name="schedule:read",
            title="Read your courses and exams",
            description="Read your courses, course history, final exams and busy times.",
            writes=False,
            starts_checked=True,
            always_on=False,
        ),
    ]
