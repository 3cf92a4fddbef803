"""Hook implementations of the friends family. Wiring only: the logic lives beside this module."""

from __future__ import annotations

from campus_mcp import PluginInfo, Scope, Settings, hookimpl

__version__ = "0.1.0"


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="friends",
        version=__version__,
        title="Friends",
        description="The student's friends and when they are busy, without course details.",
        depends_on=("schedule",),
    )


@hookimpl
def register_scopes(settings: Settings) -> list[Scope]:
    return [
        Scope(
            name="friends:read",
            title="See your friends and when they are busy",
            description="See your friends and when they are busy (no course details).",
            writes=False,
            starts_checked=True,
            always_on=False,
        ),
        Scope(
            name="friends:requests",
            title="Send and answer friend requests",
            description="Send and answer friend requests for you (reserved for future tools).",
            writes=True,
            starts_checked=False,
            always_on=False,
        ),
        Scope(
            name="friends:meetings",
            title="Plan meetings with your friends",
            description="Plan meetings with your friends for you (reserved for future tools).",
            writes=True,
            starts_checked=False,
            always_on=False,
        ),
        Scope(
            name="friends:groups",
            title="Manage your friend groups",
            description="Manage your friend groups for you (reserved for future tools).",
            writes=True,
            starts_checked=False,
            always_on=False,
        ),
    ]
