"""A plugin's own settings (``PluginInfo.settings_model``): from ``campus-mcp.toml`` and the environment.

A throwaway "lockers" plugin declares a :class:`campus_mcp.PluginSettings` model; the tests write a
real TOML file (``CAMPUS_MCP_CONFIG``), set real environment variables, and read what the plugin's
hooks, its tool (through the real MCP client), its job and its REST route were given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from campus_mcp import (
    Interval,
    Job,
    JobContext,
    JobOutcome,
    PluginError,
    PluginInfo,
    PluginSettings,
    RouteGroup,
    RouteRef,
    Scope,
    Settings,
    Tool,
    ToolContext,
    hookimpl,
)
from campus_mcp.cli.main import main
from campus_mcp.jobs.scheduler import run_job
from campus_mcp.testing import CampusFactory
from click.testing import CliRunner
from litestar import get
from litestar.di import NamedDependency
from pydantic import BaseModel, Field

DINING_FEED = Path(__file__).resolve().parents[2] / "examples" / "dining" / "campus_dining" / "demo_feed.json"


class LockerSettings(PluginSettings):
    building: str = Field(default="Wentworth Hall", description="Where the lockers are.")
    lockers: int = Field(default=40, ge=1, description="How many lockers there are.")
    office_email: str = ""


class NoQuestion(BaseModel):
    pass


class LockerInfo(BaseModel):
    building: str
    lockers: int


class Lockers:
    """A plugin with settings; it writes down every settings object the host hands it."""

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}

    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(
            name="lockers",
            version="1.0",
            title="Lockers",
            description="Student lockers.",
            settings_model=LockerSettings,
        )

    @hookimpl
    def register_scopes(self, plugin_settings: LockerSettings) -> list[Scope]:
        self.seen["register_scopes"] = plugin_settings
        return [Scope(name="lockers", description="See where the lockers are.", always_on=True)]

    @hookimpl
    def register_tools(self, settings: Settings, plugin_settings: LockerSettings) -> list[Tool]:
        self.seen["register_tools"] = plugin_settings

        async def where_are_lockers(context: ToolContext, _args: NoQuestion) -> LockerInfo:
            self.seen["tool"] = context.plugin_settings
            return LockerInfo(building=context.plugin_settings.building, lockers=context.plugin_settings.lockers)

        return [
            Tool(
                name="where_are_lockers",
                title="Where the lockers are",
                description="Says in which building the student lockers are and how many there are.",
                scope="lockers",
                input_model=NoQuestion,
                output_model=LockerInfo,
                handler=where_are_lockers,
                mirrors=(RouteRef(method="GET", path="/api/v1/lockers"),),
            )
        ]

    @hookimpl
    def register_routes(self) -> list[RouteGroup]:
        @get("/api/v1/lockers", sync_to_thread=False)
        def lockers_route(plugin_settings: NamedDependency[LockerSettings]) -> dict[str, Any]:
            self.seen["route"] = plugin_settings
            return {"building": plugin_settings.building, "lockers": plugin_settings.lockers}

        return [RouteGroup(handlers=[lockers_route])]

    @hookimpl
    def register_jobs(self) -> list[Job]:
        async def count_lockers(context: JobContext) -> JobOutcome:
            self.seen["job"] = context.plugin_settings
            return JobOutcome(items=context.plugin_settings.lockers, summary="counted")

        return [
            Job(id="lockers.count", description="Count the lockers.", trigger=Interval(minutes=60), run=count_lockers)
        ]


def write_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    config = tmp_path / "campus-mcp.toml"
    config.write_text(text, encoding="utf-8")
    monkeypatch.setenv("CAMPUS_MCP_CONFIG", str(config))
    return config


@pytest.fixture(autouse=True)
def no_outside_values(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A developer's own campus-mcp.toml or CAMPUS_MCP_LOCKERS_* must not leak into the tests.
    monkeypatch.setenv("CAMPUS_MCP_CONFIG", str(tmp_path / "none.toml"))
    for name in ("CAMPUS_MCP_LOCKERS_BUILDING", "CAMPUS_MCP_LOCKERS_LOCKERS", "CAMPUS_MCP_DINING_FEED"):
        monkeypatch.delenv(name, raising=False)


async def test_values_come_from_the_plugins_table_of_the_toml_file(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(
        tmp_path, monkeypatch, 'campus_short_name = "WIT"\n\n[plugins.lockers]\nbuilding = "Annex"\nlockers = 12\n'
    )
    campus = await campus_factory(plugins=[], extra_plugins=[("lockers", Lockers())])
    loaded = campus.registry.plugin_settings["lockers"]
    assert isinstance(loaded, LockerSettings)
    assert (loaded.building, loaded.lockers) == ("Annex", 12)
    # The host's settings still read the same file, and do not take the table for their allow list.
    assert campus.settings.campus_short_name == "WIT"
    assert campus.settings.plugins == []


async def test_the_environment_wins_over_the_toml_file(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(tmp_path, monkeypatch, '[plugins.lockers]\nbuilding = "Annex"\nlockers = 12\n')
    monkeypatch.setenv("CAMPUS_MCP_LOCKERS_LOCKERS", "30")
    campus = await campus_factory(plugins=[], extra_plugins=[("lockers", Lockers())])
    loaded = campus.registry.plugin_settings["lockers"]
    assert isinstance(loaded, LockerSettings)
    assert (loaded.building, loaded.lockers) == ("Annex", 30)


async def test_without_file_or_variable_the_model_defaults_apply(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=[], extra_plugins=[("lockers", Lockers())])
    assert campus.registry.plugin_settings["lockers"] == LockerSettings()


async def test_a_bad_variable_stops_start_up_naming_the_variable_and_the_rule(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAMPUS_MCP_LOCKERS_LOCKERS", "many-s3cret")
    with pytest.raises(PluginError) as refused:
        await campus_factory(plugins=[], extra_plugins=[("lockers", Lockers())])
    message = str(refused.value)
    assert "CAMPUS_MCP_LOCKERS_LOCKERS" in message
    assert "valid integer" in message
    assert "'lockers'" in message
    # The value is not repeated: a plugin's setting may be a password or a token.
    assert "many-s3cret" not in message


async def test_a_bad_toml_value_stops_start_up_naming_the_key_and_the_rule(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path, monkeypatch, "[plugins.lockers]\nlockers = 0\n")
    with pytest.raises(PluginError) as refused:
        await campus_factory(plugins=[], extra_plugins=[("lockers", Lockers())])
    message = str(refused.value)
    assert "[plugins.lockers] lockers" in message
    assert str(config) in message
    assert "greater than or equal to 1" in message


async def test_an_unknown_key_is_refused_naming_it_and_the_allowed_ones(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(tmp_path, monkeypatch, '[plugins.lockers]\nbuilding = "Annex"\nbuildings = "Annex, Beatty"\n')
    with pytest.raises(PluginError) as refused:
        await campus_factory(plugins=[], extra_plugins=[("lockers", Lockers())])
    message = str(refused.value)
    assert "[plugins.lockers] buildings" in message
    assert "building, lockers, office_email" in message


async def test_a_table_for_a_plugin_without_settings_is_refused(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Plain(Lockers):
        @hookimpl
        def campus_plugin_info(self) -> PluginInfo:
            return PluginInfo(name="lockers", version="1.0", title="Lockers", description="Student lockers.")

    write_config(tmp_path, monkeypatch, '[plugins.lockers]\nbuilding = "Annex"\n')
    with pytest.raises(PluginError, match=r"\[plugins.lockers\] table, but plugin 'lockers' has no settings"):
        await campus_factory(plugins=[], extra_plugins=[("lockers", Plain())])


async def test_a_plugin_without_settings_gets_none(campus_factory: CampusFactory) -> None:
    class Plain(Lockers):
        @hookimpl
        def campus_plugin_info(self) -> PluginInfo:
            return PluginInfo(name="lockers", version="1.0", title="Lockers", description="Student lockers.")

    plugin = Plain()
    campus = await campus_factory(plugins=[], extra_plugins=[("lockers", plugin)])
    assert "lockers" not in campus.registry.plugin_settings
    assert plugin.seen["register_tools"] is None


async def test_one_object_reaches_the_hooks_the_tool_the_job_and_the_route(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(tmp_path, monkeypatch, '[plugins.lockers]\nbuilding = "Annex"\n')
    plugin = Lockers()
    campus = await campus_factory(plugins=[], extra_plugins=[("lockers", plugin)])
    loaded = campus.registry.plugin_settings["lockers"]
    assert campus.deployment.plugin_settings("lockers") is loaded

    result = await campus.call("where_are_lockers", {})
    assert not result.is_error
    assert result.structured_content == {"building": "Annex", "lockers": 40}

    async with campus.rest() as rest:
        response = await rest.get("/api/v1/lockers")
    assert response.status_code == 200
    assert response.json() == {"building": "Annex", "lockers": 40}

    run = await run_job(campus.registry.jobs["lockers.count"], campus.registry, campus.sessions)
    assert (run.outcome, run.items) == ("ok", 40)

    for place in ("register_scopes", "register_tools", "tool", "route", "job"):
        assert plugin.seen[place] is loaded, place


async def test_the_dining_feed_comes_from_the_toml_file(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    feed = json.loads(DINING_FEED.read_text(encoding="utf-8"))
    feed["halls"] = feed["halls"][:1]
    feed["halls"][0]["name"] = "Annex Grill"
    path = tmp_path / "hours.json"
    path.write_text(json.dumps(feed), encoding="utf-8")
    # Outside demo mode, without a feed the dining plugin registers no tool.
    bare = await campus_factory(plugins=["dining"], demo_mode=False)
    assert "list_dining_halls" not in bare.registry.tools

    write_config(tmp_path, monkeypatch, f"[plugins.dining]\nfeed = {json.dumps(str(path))}\n")
    campus = await campus_factory(plugins=["dining"], demo_mode=False)
    assert campus.deployment.plugin_settings("dining").feed == path
    run = await run_job(campus.registry.jobs["dining.refresh_hours"], campus.registry, campus.sessions)
    assert (run.outcome, run.items) == ("ok", 1)
    result = await campus.call("list_dining_halls", {})
    assert not result.is_error
    assert [hall["name"] for hall in result.structured_content["halls"]] == ["Annex Grill"]  # type: ignore[index]


def test_a_bad_dining_setting_stops_serve_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, monkeypatch, '[plugins.dining]\nfeeds = "hours.json"\n')
    monkeypatch.setenv("CAMPUS_MCP_PLUGINS", "dining")
    result = CliRunner().invoke(main, ["serve", "--no-prepare"])
    assert result.exit_code == 2  # a setting that keeps serve from starting
    assert "[plugins.dining] feeds" in result.output
    assert "Its settings are: feed." in result.output
    assert "Traceback" not in result.output


async def test_a_table_for_a_plugin_that_is_not_enabled_is_named_in_a_warning(
    campus_factory: CampusFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A disabled plugin keeps its table (so no error), but a misspelt name must not pass in silence.
    write_config(tmp_path, monkeypatch, '[plugins.lockres]\nbuilding = "Annex"\n')
    with caplog.at_level("WARNING", logger="campus_mcp.assembly.registry"):
        campus = await campus_factory(plugins=[], extra_plugins=[("lockers", Lockers())])
    assert campus.registry.plugin_settings["lockers"] == LockerSettings()
    warnings = [record.getMessage() for record in caplog.records if "[plugins.lockres]" in record.getMessage()]
    # (The migrations load the registry once more, with every installed plugin: a second warning.)
    assert any("Enabled plugins: core, lockers." in warning for warning in warnings), warnings
