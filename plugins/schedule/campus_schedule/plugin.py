"""Hook implementations of the schedule family. Wiring only: the logic lives beside this module.

No scopes yet: a scope comes with the first tool that needs it (seed 000 "Permissions"), so
that the consent page never offers a permission for tools that do not exist.
"""

from __future__ import annotations

from campus_mcp import PluginInfo, Settings, hookimpl

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
