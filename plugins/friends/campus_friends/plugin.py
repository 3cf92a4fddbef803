"""Hook implementations of the friends family. Wiring only: the logic lives beside this module.

Scopes (seed 000 "Permissions"): ``friends:read`` for list_friends and friend_busy_times, starts
checked. ``friends:requests``, ``friends:meetings`` and ``friends:groups`` are reserved (issue 37,
point 9): registration and the consent page accept them, unchecked, so an app can ask for them
now, but no tool needs them and the 401 challenge does not name them (requests and meetings are
made on the dashboard's form posts). The first tool that needs one drops its ``reserved``.
"""

from __future__ import annotations

from pathlib import Path

from campus_mcp import (
    DemoData,
    InstructionFragment,
    Migrations,
    PluginInfo,
    RouteGroup,
    Scope,
    Settings,
    StudentData,
    Tool,
    ToolExample,
    hookimpl,
    operation_examples,
    operation_routes,
)

from campus_friends import models as _models  # noqa: F401  (the table joins the metadata)
from campus_friends.demo import demo_loader
from campus_friends.pages import PAGES
from campus_friends.tools import OPERATIONS, SCOPE, tools

__version__ = "0.1.0"
# Seed 000's reserved friend scopes: name, consent title, what they will be for.
RESERVED = (
    ("friends:requests", "Send and answer friend requests", "friend request"),
    ("friends:meetings", "Plan meetings with friends", "meeting"),
    ("friends:groups", "Manage groups of friends", "group"),
)


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="friends",
        version=__version__,
        icon=Path(__file__).with_name("icon.svg"),
        title="Friends",
        description="The student's friends and when they are busy, without course details.",
        depends_on=("schedule",),
    )


@hookimpl
def register_scopes() -> list[Scope]:
    return [
        Scope(
            name=SCOPE,
            title="See your friends and when they are busy",
            description="See your friends, your friend requests, and when your friends are busy (never their classes).",
            starts_checked=True,
        ),
        *(
            Scope(
                name=name,
                title=title,
                description=f"Reserved for {what} tools to come; it gives nothing yet.",
                writes=True,
                starts_checked=False,
                reserved=True,
            )
            for name, title, what in RESERVED
        ),
    ]


@hookimpl
def register_tools(settings: Settings) -> list[Tool]:
    return tools(settings, None)


@hookimpl
def register_routes() -> list[RouteGroup]:
    return [RouteGroup(handlers=[*operation_routes(OPERATIONS), *PAGES])]


@hookimpl
def register_instructions(settings: Settings) -> list[InstructionFragment]:
    return [
        InstructionFragment(
            priority=45,
            text=(
                "When a student asks about a friend ('is Sam free', 'when can we meet'), call list_friends, "
                "then friend_busy_times: busy times only, never guess a friend's classes."
            ),
        )
    ]


@hookimpl
def register_migrations() -> list[Migrations]:
    return [Migrations(path=Path(__file__).parent / "migrations" / "versions")]


@hookimpl
def register_demo_data(settings: Settings) -> list[DemoData]:
    # After the demo students (0), the catalog (10) and the schedule family's data.
    return [DemoData(load=demo_loader(settings), order=300)]


@hookimpl
def register_tool_examples() -> list[ToolExample]:
    return operation_examples(OPERATIONS)


@hookimpl
def register_student_data() -> list[StudentData]:
    from campus_friends.export import STUDENT_DATA

    return list(STUDENT_DATA)
