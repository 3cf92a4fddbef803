"""Hook implementations of the catalog family. Wiring only: the logic lives beside this module."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from campus_mcp import (
    Completion,
    DataSource,
    DemoData,
    InstructionFragment,
    Job,
    Migrations,
    PluginInfo,
    ResourceTemplate,
    RouteGroup,
    Scope,
    Settings,
    Tool,
    ToolExample,
    hookimpl,
    operation_examples,
    operation_routes,
    operation_tools,
)

from campus_catalog.availability import catalog_offered
from campus_catalog.catalog_settings import CatalogSettings

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

__version__ = "0.1.0"


@hookimpl
def campus_plugin_info(settings: Settings) -> PluginInfo:
    return PluginInfo(
        name="catalog",
        version=__version__,
        icon=Path(__file__).with_name("icon.svg"),
        title="Course catalog",
        description="Terms, subjects, sections, courses, instructors, reviews, programs, electives and the academic calendar: public catalog data.",
        depends_on=(),
        settings_model=CatalogSettings,
        warm_up=_warm_up,
    )


async def _warm_up(sessions: async_sessionmaker[AsyncSession]) -> None:
    from campus_catalog.semantic import warm_up  # late: numpy and the model are no CLI command's cost

    await warm_up(sessions)


@hookimpl
def register_scopes(settings: Settings) -> list[Scope]:
    return [
        Scope(
            name="catalog",
            title="Read the public course catalog",
            description="Read the public course catalog: terms, sections, courses, instructors, reviews and the academic calendar.",
            writes=False,
            starts_checked=True,
            always_on=True,
        ),
    ]


@hookimpl
def register_migrations(settings: Settings) -> list[Migrations]:
    return [Migrations(path=Path(__file__).parent / "migrations")]


@hookimpl
def register_demo_data(settings: Settings) -> list[DemoData]:
    from campus_catalog.demo.generate import load_demo_catalog

    return [DemoData(load=load_demo_catalog, order=10)]


# Tools are offered only while the catalog has a source or data (availability.py, DESIGN §3): with
# neither, each tool could only answer empty lists. They are registered with an offer check the
# host asks while it serves, so data that arrives shows them without a restart; the routes are
# their REST twins. Instructions and examples only when the catalog had a source or data at start.


@hookimpl
def register_tools(settings: Settings, plugin_settings: CatalogSettings) -> list[Tool]:
    from campus_catalog.availability import with_offer_checks
    from campus_catalog.operations import catalog_operations

    tools = operation_tools(catalog_operations(), settings=settings, plugin_settings=plugin_settings)
    return with_offer_checks(tools, settings, plugin_settings)


@hookimpl
def register_routes(settings: Settings, plugin_settings: CatalogSettings) -> list[RouteGroup]:
    from campus_catalog.operations import catalog_operations

    return [RouteGroup(handlers=operation_routes(catalog_operations()))]


@hookimpl
def register_instructions(settings: Settings, plugin_settings: CatalogSettings) -> list[InstructionFragment]:
    from campus_catalog.texts import instruction_fragments

    if not catalog_offered(settings, plugin_settings):
        return []
    return instruction_fragments(settings, plugin_settings)


@hookimpl
def register_jobs(settings: Settings, plugin_settings: CatalogSettings) -> list[Job]:
    from campus_catalog.jobs import catalog_jobs

    return catalog_jobs(settings, plugin_settings)


@hookimpl
def register_data_sources(settings: Settings, plugin_settings: CatalogSettings) -> list[DataSource]:
    from campus_catalog.freshness import catalog_data_sources

    return catalog_data_sources(settings, plugin_settings)


@hookimpl
def register_commands(settings: Settings) -> list[Any]:
    from campus_catalog.cli import import_group

    return [import_group]


@hookimpl
def register_tool_examples(settings: Settings, plugin_settings: CatalogSettings) -> list[ToolExample]:
    from campus_catalog.operations import catalog_operations

    if not catalog_offered(settings, plugin_settings):
        return []
    return operation_examples(catalog_operations())


@hookimpl
def register_completions(settings: Settings) -> list[Completion]:
    from campus_catalog.completions import catalog_completions

    return catalog_completions(settings)


@hookimpl
def register_resources(settings: Settings, plugin_settings: CatalogSettings) -> list[ResourceTemplate]:
    from campus_catalog.resources import catalog_resources

    # Each reads a catalog tool: without the tools (no source, no data) the host leaves them out too.
    return catalog_resources() if catalog_offered(settings, plugin_settings) else []
