"""Hook implementations of the settings family. Wiring only: the logic lives beside this module."""

from __future__ import annotations

from campus_mcp import PluginInfo, Scope, Settings, hookimpl

__version__ = "0.1.0"


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="settings",
        version=__version__,
        title="Calendar settings",
        description="The student's calendar event settings and reminders, changed only with the student's confirmation.",
        depends_on=("schedule",),
    )


@hookimpl
def register_scopes(settings: Settings) -> list[Scope]:
    return [
        Scope(
            name="settings:read",
            title="Read your calendar settings",
            description="Read your calendar event settings and preview event templates.",
            writes=False,
            starts_checked=True,
            always_on=False,
        ),
        Scope(
            name="settings:write",
            title="Change your calendar settings",
            description="Change your calendar event settings: titles, descriptions, locations, colors and reminders.",
            writes=True,
            starts_checked=False,
            always_on=False,
        ),
        Scope(
            name="notifications:write",
            title="Pause or resume your reminders",
            description="Pause or resume your reminders.",
            writes=True,
            starts_checked=False,
            always_on=False,
        ),
    ]
