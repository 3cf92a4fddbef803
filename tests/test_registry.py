"""Each invariant stated at the top of ``campus_mcp/registry.py`` has a test here.

Discovery is tested without installing anything: ``importlib.metadata.entry_points`` is
monkeypatched to add entry points that name modules written into a temporary folder (the way
pluggy and pytest test their own plugin loading).
"""

from __future__ import annotations

import importlib.metadata
import textwrap
from pathlib import Path
from typing import Any

import pytest
from campus_mcp import PluginInfo, Prompt, Scope, Tool, hookimpl, testing
from campus_mcp.app import create_app, plugin_routers
from campus_mcp.parity import plugin_api_routes
from campus_mcp.registry import ENTRY_POINT_GROUP, PluginError, load_registry
from campus_mcp.settings import Settings
from litestar import get
from pydantic import BaseModel


def settings(tmp_path: Path, **overrides: Any) -> Settings:
    return testing.test_settings(f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}", **overrides)


def add_entry_points(monkeypatch: pytest.MonkeyPatch, extra: dict[str, str]) -> None:
    """Pretend that distributions with these ``campus_mcp`` entry points are installed."""
    real = importlib.metadata.entry_points

    def entry_points(**params: Any) -> Any:
        found = list(real(**params))
        if params.get("group") == ENTRY_POINT_GROUP:
            found += [importlib.metadata.EntryPoint(name, value, ENTRY_POINT_GROUP) for name, value in extra.items()]
        return found

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def write_module(folder: Path, name: str, source: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(source))


class Empty(BaseModel):
    pass


async def nothing(_context: object, _args: Empty) -> Empty:
    return Empty()


def info(name: str, *depends_on: str) -> PluginInfo:
    return PluginInfo(
        name=name, version="1", title=name.title(), description=f"The {name} test plugin.", depends_on=depends_on
    )


def tool(name: str, scope: str = "catalog") -> Tool:
    return Tool(
        name=name,
        title=name,
        description="A test tool.",
        scope=scope,
        input_model=Empty,
        output_model=Empty,
        handler=nothing,
    )


class Contributes:
    """A throwaway plugin that contributes whatever it is given."""

    def __init__(self, name: str, **contributions: list[Any]) -> None:
        self.name = name
        self.contributions = contributions

    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return info(self.name)

    @hookimpl
    def register_tools(self) -> list[Any]:
        return self.contributions.get("tools", [])

    @hookimpl
    def register_scopes(self) -> list[Any]:
        return self.contributions.get("scopes", [])

    @hookimpl
    def register_prompts(self) -> list[Any]:
        return self.contributions.get("prompts", [])

    @hookimpl
    def register_routes(self) -> list[Any]:
        return self.contributions.get("routes", [])


# A blocked or not-allowed plugin contributes nothing ----------------------------------------


def test_a_disabled_family_contributes_nothing(tmp_path: Path) -> None:
    everything = load_registry(settings(tmp_path))
    assert "friends" in everything.plugins

    registry = load_registry(settings(tmp_path, disable=["friends"]))
    assert "friends" not in registry.plugins
    assert registry.pm.get_plugin("friends") is None
    kinds: dict[str, list[Any]] = {
        "tools": list(registry.tools.values()),
        "scopes": list(registry.scopes.values()),
        "routes": list(registry.route_groups),
        "jobs": list(registry.jobs.values()),
        "prompts": list(registry.prompts.values()),
        "instructions": list(registry.instructions),
        "migrations": list(registry.migrations),
        "demo data": list(registry.demo_data),
        "tool examples": list(registry.tool_examples),
    }
    for kind, items in kinds.items():
        assert [item for item in items if item.plugin == "friends"] == [], kind
    app = create_app(registry=registry, run_scheduler=False)
    assert "friends" not in set(plugin_api_routes(app).values())
    # The consent page and the 401 challenge list the registry's scopes: no friends checkbox.
    challenge = app.state.deployment.endpoint.www_authenticate()
    assert "friends:" not in challenge
    assert "catalog" in challenge.split('scope="', 1)[1].split('"', 1)[0].split()


def test_the_allow_list_loads_only_the_named_plugins_and_the_host(tmp_path: Path) -> None:
    registry = load_registry(settings(tmp_path, plugins=["catalog", "dining"]))
    assert sorted(registry.plugins) == ["catalog", "core", "dining"]
    assert {scope.plugin for scope in registry.scopes.values()} <= {"catalog", "dining"}


def test_a_disabled_plugin_is_never_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_module(tmp_path, "campus_exploding", "raise RuntimeError('imported although disabled')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    add_entry_points(monkeypatch, {"exploding": "campus_exploding"})
    registry = load_registry(settings(tmp_path, disable=["exploding"]))
    assert "exploding" not in registry.plugins
    not_allowed = load_registry(settings(tmp_path, plugins=["catalog"]))
    assert "exploding" not in not_allowed.plugins


def test_a_throwaway_plugin_can_be_disabled_too(tmp_path: Path) -> None:
    extra = [("extra", Contributes("extra", tools=[tool("extra_tool")]))]
    assert "extra_tool" in load_registry(settings(tmp_path), extra).tools
    assert "extra_tool" not in load_registry(settings(tmp_path, disable=["extra"]), extra).tools


# Discovery --------------------------------------------------------------------------------


def test_an_entry_point_is_discovered_and_its_contributions_stamped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_module(
        tmp_path,
        "campus_weather",
        """
        from campus_mcp import PluginInfo, Scope, hookimpl

        @hookimpl
        def campus_plugin_info():
            return PluginInfo(name="weather", version="2.0", title="Weather", description="Campus weather.")

        @hookimpl
        def register_scopes():
            # A plugin cannot pass itself off as another: the host overwrites `plugin`.
            return [Scope(name="weather", description="Read the weather.", plugin="catalog")]
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    add_entry_points(monkeypatch, {"weather": "campus_weather"})
    registry = load_registry(settings(tmp_path))
    assert registry.plugins["weather"].version == "2.0"
    assert registry.scopes["weather"].plugin == "weather"
    assert registry.hooks_of("weather") == ["campus_plugin_info", "register_scopes"]


def test_a_plugin_that_fails_to_import_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_module(tmp_path, "campus_broken", "import campus_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    add_entry_points(monkeypatch, {"broken": "campus_broken"})
    with pytest.raises(PluginError) as failure:
        load_registry(settings(tmp_path))
    message = str(failure.value)
    assert "'broken'" in message
    assert "campus_no_such_dependency" in message


def test_a_plugin_whose_module_raises_on_import_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_module(tmp_path, "campus_raises", "raise ValueError('the config file is missing')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    add_entry_points(monkeypatch, {"raises": "campus_raises"})
    with pytest.raises(PluginError, match=r"plugin 'raises' \(campus_raises\) failed to import: the config file"):
        load_registry(settings(tmp_path))


def test_a_plugin_that_calls_itself_by_another_name_is_refused(tmp_path: Path) -> None:
    class Impostor:
        @hookimpl
        def campus_plugin_info(self) -> PluginInfo:
            return info("catalog2")

    with pytest.raises(PluginError, match=r"plugin 'impostor' calls itself 'catalog2'"):
        load_registry(settings(tmp_path), [("impostor", Impostor())])


# Duplicates ---------------------------------------------------------------------------------


def test_two_plugins_with_one_tool_name_are_refused_naming_both(tmp_path: Path) -> None:
    extra = [
        ("first", Contributes("first", tools=[tool("find_room")])),
        ("second", Contributes("second", tools=[tool("find_room")])),
    ]
    with pytest.raises(PluginError, match=r"the tool 'find_room': 'first' and 'second'"):
        load_registry(settings(tmp_path), extra)


def test_a_tool_name_that_clashes_with_an_installed_family_names_the_family(tmp_path: Path) -> None:
    taken = next(iter(load_registry(settings(tmp_path)).tools))
    owner = load_registry(settings(tmp_path)).tools[taken].plugin
    with pytest.raises(PluginError, match=rf"the tool '{taken}': '{owner}' and 'copycat'"):
        load_registry(settings(tmp_path), [("copycat", Contributes("copycat", tools=[tool(taken)]))])


def test_two_plugins_with_one_scope_name_are_refused_naming_both(tmp_path: Path) -> None:
    copy = Scope(name="catalog", description="Mine now.")
    with pytest.raises(PluginError, match=r"the scope 'catalog': 'catalog' and 'copycat'"):
        load_registry(settings(tmp_path), [("copycat", Contributes("copycat", scopes=[copy]))])


def test_two_plugins_with_one_prompt_name_are_refused_naming_both(tmp_path: Path) -> None:
    def prompt() -> Prompt:
        return Prompt(name="plan_my_semester", title="Plan", description="Plans.", render=lambda _args: "Plan it.")

    extra = [
        ("first", Contributes("first", prompts=[prompt()])),
        ("second", Contributes("second", prompts=[prompt()])),
    ]
    with pytest.raises(PluginError, match=r"the prompt 'plan_my_semester': 'first' and 'second'"):
        load_registry(settings(tmp_path), extra)


def test_two_plugins_with_one_route_are_refused_naming_both(tmp_path: Path) -> None:
    from campus_mcp import RouteGroup

    @get("/api/v1/rooms", sync_to_thread=False)
    def rooms_first() -> list[str]:
        return []

    @get("/api/v1/rooms", sync_to_thread=False)
    def rooms_second() -> list[str]:
        return []

    extra = [
        (
            "first",
            Contributes("first", routes=[RouteGroup(handlers=[rooms_first], exempt={"GET /api/v1/rooms": "test"})]),
        ),
        ("second", Contributes("second", routes=[RouteGroup(handlers=[rooms_second])])),
    ]
    registry = load_registry(settings(tmp_path), extra)
    with pytest.raises(PluginError, match=r"the route GET /api/v1/rooms: 'first' and 'second'"):
        plugin_routers(registry)
    with pytest.raises(PluginError, match="'first' and 'second'"):
        create_app(registry=registry, run_scheduler=False)


# Dependencies -------------------------------------------------------------------------------


def test_disabling_catalog_while_schedule_is_enabled_stops_start_up_naming_both(tmp_path: Path) -> None:
    with pytest.raises(PluginError) as failure:
        load_registry(settings(tmp_path, disable=["catalog"]))
    message = str(failure.value)
    assert "plugin 'schedule' needs plugin 'catalog'" in message
    assert "disable" in message.lower()


def test_an_allow_list_without_a_dependency_stops_start_up(tmp_path: Path) -> None:
    with pytest.raises(PluginError, match=r"plugin 'friends' needs plugin 'schedule'"):
        load_registry(settings(tmp_path, plugins=["catalog", "friends"]))


def test_a_tool_whose_scope_nobody_contributes_is_refused(tmp_path: Path) -> None:
    orphan = Contributes("orphan", tools=[tool("read_rooms", scope="rooms:read")])
    with pytest.raises(PluginError, match=r"tool 'read_rooms' of plugin 'orphan' needs scope 'rooms:read'"):
        load_registry(settings(tmp_path), [("orphan", orphan)])


# Misspelled hooks ---------------------------------------------------------------------------


def test_a_misspelled_hookimpl_stops_start_up(tmp_path: Path) -> None:
    class Misspelled:
        @hookimpl
        def campus_plugin_info(self) -> PluginInfo:
            return info("misspelled")

        @hookimpl
        def register_tool(self) -> list[Tool]:  # should be register_tools
            return []

    with pytest.raises(PluginError) as failure:
        load_registry(settings(tmp_path), [("misspelled", Misspelled())])
    assert str(failure.value).startswith("plugin 'misspelled' implements a hook that does not exist")
    assert "register_tool" in str(failure.value)


# Settings ------------------------------------------------------------------------------------


def test_allow_and_block_lists_are_comma_separated_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAMPUS_MCP_DISABLE", "friends, apps")
    monkeypatch.setenv("CAMPUS_MCP_PLUGINS", "catalog,schedule,friends,apps")
    settings = Settings()
    assert settings.disable == ["friends", "apps"]
    assert settings.plugins == ["catalog", "schedule", "friends", "apps"]
    registry = load_registry(settings)
    assert sorted(registry.plugins) == ["catalog", "core", "schedule"]


def test_a_hookimpl_with_arguments_the_hook_does_not_have_is_refused_naming_the_plugin(tmp_path: Path) -> None:
    class WrongArguments:
        @hookimpl
        def register_tools(self, config: object) -> list[Tool]:  # hooks take `settings` or nothing
            return []

    with pytest.raises(PluginError, match=r"plugin 'wrongargs' has a hook implementation the host cannot call"):
        load_registry(settings(tmp_path), [("wrongargs", WrongArguments())])


def test_a_throwaway_plugin_cannot_take_an_installed_plugins_name(tmp_path: Path) -> None:
    with pytest.raises(PluginError, match=r"plugin 'catalog' cannot be registered"):
        load_registry(settings(tmp_path), [("catalog", Contributes("catalog"))])


# A hook that raises ---------------------------------------------------------------------------


class Broken:
    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return info("broken")

    @hookimpl
    def register_tools(self) -> list[Any]:
        raise TypeError("descriptions() missing 1 required positional argument: 'catalog'")


def test_a_hook_that_raises_stops_start_up_naming_the_plugin_and_the_hook(tmp_path: Path) -> None:
    # Not a traceback out of every `campus-mcp` command: the command line reports a PluginError in one line.
    with pytest.raises(
        PluginError, match=r"plugin 'broken' failed in its register_tools hook: TypeError: descriptions"
    ):
        load_registry(settings(tmp_path, plugins=[]), [("broken", Broken())])
