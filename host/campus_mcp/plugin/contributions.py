"""The typed contributions a plugin hands to the host, one class per hook.

Every contribution is a frozen dataclass so that the registry can hold them without anybody
changing them after start-up. The host stamps each one with the plugin that gave it
(``plugin`` is filled by the registry, never by the plugin itself), which is how duplicate
names are reported with both plugins named.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from campus_mcp.plugin.confirmation import PlannedChange
from campus_mcp.plugin.links import PageLink

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

    from campus_mcp.plugin.settings import PluginSettings
    from campus_mcp.plugin.tool_context import ToolContext

HttpMethod = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class PluginInfo:
    """Who a plugin is: shown by ``campus-mcp plugins``; its title is a topic of the server's description.

    ``settings_model``: the plugin's own settings (a :class:`campus_mcp.PluginSettings` subclass),
    filled from ``[plugins.<name>]`` in ``campus-mcp.toml`` and ``CAMPUS_MCP_<NAME>_<KEY>``.
    ``warm_up``: work done in the background each time a server process starts, given the
    deployment's sessions, so that no request pays it (``campus_mcp.jobs.warm_ups``).
    """

    name: str
    version: str
    title: str
    description: str
    depends_on: tuple[str, ...] = ()
    settings_model: type[PluginSettings] | None = None
    warm_up: Callable[[async_sessionmaker[AsyncSession]], Awaitable[None]] | None = None
    # The family's icon (campus_mcp.assembly.icons): an image file's path or an https:// URL; "" shows the campus's.
    icon: str | Path = ""
    plugin: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scope:
    """An OAuth scope. The consent page shows one checkbox per scope that is not ``always_on``.

    ``title`` is what the consent page says in plain words ("Read your calendar settings"), with
    ``name`` small beside it; without one it is made from the name, so older plugins still work.
    """

    name: str
    description: str
    title: str = ""
    writes: bool = False
    starts_checked: bool = True
    always_on: bool = False
    plugin: str = ""
    # Held for tools to come (seed 000's friends:requests, ...): registration and the consent page
    # accept it when a client asks, but the 401 challenge does not name it and no tool needs it.
    reserved: bool = False

    def __post_init__(self) -> None:
        if not self.title:
            words = self.name.replace(":", " ").replace("_", " ").replace("-", " ").split()
            object.__setattr__(self, "title", " ".join(words).capitalize() or self.name)


@dataclasses.dataclass(frozen=True, kw_only=True)
class RouteRef:
    """The REST route a tool mirrors, as the parity check compares them."""

    method: HttpMethod
    path: str

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


# A write tool's plan (campus_mcp.plugin.confirmation): what the change would do, without doing it.
Planner = Callable[["ToolContext", Any], Awaitable[PlannedChange | None]]
ToolHandler = Callable[["ToolContext", Any], Awaitable[BaseModel | Mapping[str, Any]]]
PageLinker = Callable[["ToolContext", Mapping[str, Any]], Awaitable[Sequence[PageLink]]]
# Whether a tool has something behind it now (Tool.offered): asked with a read-only session.
OfferCheck = Callable[["AsyncSession"], Awaitable[bool]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Tool:
    """An MCP tool. ``handler`` must be one call to the query or service the REST route calls."""

    name: str
    title: str
    description: str
    scope: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    handler: ToolHandler
    mirrors: tuple[RouteRef, ...] = ()
    # Why the tool mirrors no REST route (a meta-tool such as whoami); the parity check wants
    # either ``mirrors`` or this reason, so a tool without a route is a decision, not an oversight.
    no_route_reason: str = ""
    writes: bool = False
    idempotent: bool = False
    open_world: bool = False
    data_sources: tuple[str, ...] = ()
    app_resource: str | None = None
    page_links: PageLinker | None = None
    # Output schemas may be loosened by a tool whose shape follows its input (GraphQL).
    output_schema_override: Mapping[str, Any] | None = None
    plugin: str = ""
    # A write tool's plan (campus_mcp.plugin.confirmation): what the change would do, so the host can ask
    # the student before ``handler`` makes it. Every write tool has one.
    plan: Planner | None = None
    # Whether the tool has something behind it now (seed 001: its source is configured, or it has
    # data), asked with a read-only session: None, always. The host lists and runs the tool only
    # while it answers yes, and asks again when data may have arrived (campus_mcp.plugin.offers).
    offered: OfferCheck | None = None

    def __post_init__(self) -> None:
        if self.writes and self.plan is None:
            raise ValueError(
                f"tool {self.name!r} writes, so it needs a plan: give plan=async (context, args) -> "
                "PlannedChange | None, so the host asks the student before the change (campus_mcp.plugin.confirmation)"
            )


@dataclasses.dataclass(frozen=True, kw_only=True)
class RouteGroup:
    """Litestar route handlers (controllers, routers or handler functions) of one plugin.

    ``exempt`` lists routes with no tool and the written reason; ``pending`` lists routes whose
    tool is still to come. The parity check fails on a stale entry in either.
    """

    handlers: Sequence[Any]
    exempt: Mapping[str, str] = dataclasses.field(default_factory=dict)
    pending: Sequence[str] = ()
    plugin: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class PromptArgument:
    """One argument of a prompt. ``completer`` names the :class:`Completion` (its ``argument``)
    that completes it, whichever plugin registers it; without one the argument gets no values.
    A prompt naming a completer no enabled plugin registers stops start-up."""

    name: str
    description: str
    required: bool = False
    completer: str = ""


PromptRenderer = Callable[["ToolContext", Mapping[str, str]], Awaitable[str]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Prompt:
    """A prompt: ``render`` turns the (already cut) arguments into the user message.

    ``render_in_context`` is the form for a prompt that reads the database or a plugin's
    settings (the default term of a planning prompt): it gets the same :class:`ToolContext` a
    tool gets. Give exactly one of the two.
    """

    name: str
    title: str
    description: str
    arguments: tuple[PromptArgument, ...] = ()
    render: Callable[[Mapping[str, str]], Awaitable[str] | str] | None = None
    render_in_context: PromptRenderer | None = None
    # The tools its text names: the prompt is listed only while each of them is (campus_mcp.plugin.offers).
    tools: tuple[str, ...] = ()
    plugin: str = ""


Completer = Callable[["AsyncSession", str, Mapping[str, str]], Awaitable[Sequence[str]]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Completion:
    """Values for one prompt argument name (``term``, ``subject``, ``courses``...)."""

    argument: str
    complete: Completer
    plugin: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class AppResource:
    """An MCP Apps (``ui://``) HTML template.

    ``tools`` names the tools the view draws, whichever plugin owns them: the registry links each
    enabled one to this view, so an apps plugin adds views without editing the families' tools,
    and disabling it takes the links away with the views.
    """

    uri: str
    name: str
    title: str
    description: str
    html: Callable[[], str]
    tools: tuple[str, ...] = ()
    plugin: str = ""


# The public resources whose change changes this one, for one reader (campus_mcp.mcp.subscriptions):
# a student's schedule follows the sections on it.
ResourceFollower = Callable[["ToolContext", Mapping[str, str]], Awaitable[Sequence[str]]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ResourceTemplate:
    """A family of ``campus://`` resources (``campus://sections/{term}/{crn}``): what a student can
    @-mention and a client can subscribe to.

    A resource is the answer of ``tool`` (a read tool of any enabled plugin) called with the
    template's variables as its arguments, so it is the same JSON as that tool's answer and needs the
    same scope; a tool whose scope is not ``always_on`` makes the resource private (its reads are
    cached per student, never shared). ``completers`` names, per variable, the :class:`Completion`
    that completes it. ``follows``, for a resource built from public ones, gives the public
    resource URIs whose change changes it for the reader, so a subscription to it hears of theirs.
    A template whose tool is not offered is left out, as the tool is.
    """

    uri_template: str
    name: str
    title: str
    description: str
    tool: str
    completers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    follows: ResourceFollower | None = None
    plugin: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class DataSource:
    """A source of data named in the advisory of the tools that read it.

    ``last_refresh`` returns either one time or one time per term uid.
    """

    key: str
    covers: str
    origin: str
    refresh: str
    last_refresh: Callable[[AsyncSession], Awaitable[datetime | Mapping[str, datetime] | None]]
    # The refresh text given the last refresh, for a source whose words name that time ("seats as
    # of ..., not refreshed"); without it, ``refresh`` as written.
    refresh_words: Callable[[datetime | None], str] | None = None
    plugin: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class InstructionFragment:
    """A piece of the server instructions. Lower ``priority`` comes first: triggers before rules."""

    text: str
    priority: int = 100
    plugin: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Migrations:
    """A plugin's Alembic version folder; its revisions carry the plugin name as branch label."""

    path: Path
    plugin: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class DemoData:
    """Fills the plugin's tables for the demo campus. ``order`` sorts loaders (catalog first)."""

    load: Callable[[AsyncSession, int], Awaitable[None]]
    order: int = 100
    plugin: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ToolExample:
    """A tool call the contract tests make, on the demo campus or on sparse data.

    ``data="sparse"`` runs against a database that only ``prepare`` filled: rows with null
    fields and empty lists, so that output schemas are held to the awkward cases too.
    ``user`` is the demo user the call is made as (``None``: anonymous).
    """

    tool: str
    arguments: Mapping[str, Any]
    data: Literal["demo", "sparse"] = "demo"
    prepare: Callable[[AsyncSession], Awaitable[None]] | None = None
    user: str | None = "student1"
    plugin: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ConnectionState:
    """What a :class:`Connection` holds for one student, shown under Connected apps on Settings.

    ``summary`` is one sentence in plain words ("On since 2030-09-01; calendar apps read it with a
    secret link"); ``manage_url`` is the path of the plugin's own page that changes or ends it (the
    host links it as "Manage"; it must be a path of this site, so a plugin cannot send a student
    elsewhere from Settings).
    """

    summary: str
    manage_url: str
    # False: nothing is connected yet, and the student connects it from ``manage_url`` (an account of
    # another service, such as their LMS). Settings lists it with a Connect link; it reads nothing,
    # so the dashboard's count of apps and the export's connections leave it out.
    connected: bool = True
    # False: it reads none of the student's data here; it is the student's account elsewhere that
    # this server reads for them (their LMS). Settings lists it with the offers, after the apps, and
    # the dashboard's count and the export's connections leave it out too.
    reads: bool = True

    def __post_init__(self) -> None:
        if not self.manage_url.startswith("/") or self.manage_url.startswith("//"):
            raise ValueError(
                f"manage_url {self.manage_url!r} must be a path of this site, such as '/dashboard/calendar-feed'"
            )


ConnectionDescriber = Callable[["AsyncSession", int], Awaitable[ConnectionState | None]]
# Ends the connection of one student (``campus-mcp students disable``); True when one was on.
ConnectionEnder = Callable[["AsyncSession", int], Awaitable[bool]]


StudentDataReader = Callable[["AsyncSession", int], Awaitable[Any]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class StudentData:
    """What a plugin holds about one student, for the student's export (``campus-mcp export``,
    the dashboard's download): ``read(session, student_id)`` returns it as JSON values (dicts,
    lists, strings, numbers, ISO dates), under ``key`` in the export. Never a secret.

    ``tables`` names the tables whose rows about the student ``read`` returns. Every table with a
    foreign key to ``students`` must be in one part's ``tables``: ``uncovered_student_tables``
    (campus_mcp.students.export) names the ones that are not, and the export test fails on them, so
    a new table of student data cannot be left out of the export unnoticed."""

    key: str
    description: str
    read: StudentDataReader
    tables: tuple[str, ...] = ()
    plugin: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Connection:
    """Something other than an OAuth app that reads a student's data, listed beside the apps.

    A calendar feed, an export link: the student should see everything that can read their data in
    one place. ``describe(session, student_id)`` gives its state for that student, or None when
    nothing is connected for them (then it is not listed).
    """

    title: str
    describe: ConnectionDescriber
    plugin: str = ""
    # How to end it for a student who is disabled (in the caller's transaction); None: nothing to end.
    end: ConnectionEnder | None = None
    # The app id its reads are recorded under in the access log of student data
    # (Deployment.record_student_access), so Connected apps says when it last read; "": not recorded.
    access_log_id: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class CalendarEvent:
    """One event a plugin adds to the student's calendar feed (a due date from their LMS).

    ``uid`` is stable and unique within the plugin (``assignment-1234``), so a calendar app updates
    the event instead of adding a copy; the feed makes it unique across plugins. ``starts_at`` and
    ``ends_at`` are aware datetimes; no ``ends_at`` is a moment that takes no time (a deadline).
    ``title`` and ``description`` are plain text (the feed cleans the title to one line);
    ``url`` is the page the event is about.
    """

    uid: str
    title: str
    starts_at: datetime
    ends_at: datetime | None = None
    description: str = ""
    url: str = ""

    def __post_init__(self) -> None:
        if self.starts_at.tzinfo is None or (self.ends_at is not None and self.ends_at.tzinfo is None):
            raise ValueError(f"calendar event {self.uid!r}: starts_at and ends_at must be aware datetimes")


# (session, student_id, start, end) -> the student's events between the two moments.
CalendarEventsReader = Callable[["AsyncSession", int, datetime, datetime], Awaitable[Sequence[CalendarEvent]]]


@dataclasses.dataclass(frozen=True, kw_only=True)
class CalendarSource:
    """Events of a plugin that belong in the student's calendar feed, beside their classes and finals.

    ``events(session, student_id, start, end)`` gives them for that window; ``[]`` when the student
    has none or did not ask for them (a choice of the plugin's own, off by default). It gets 10
    seconds to answer and may fail: the feed is then served without its events (the error goes to
    the log), never refused (``campus_mcp.assembly.calendar_sources``). ``title`` names the source in the log.
    """

    key: str
    title: str
    events: CalendarEventsReader
    plugin: str = ""
