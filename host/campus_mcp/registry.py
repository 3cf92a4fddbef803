"""Loads the plugins and assembles their contributions into one registry.

Invariants, each held by a test in ``tests/test_registry.py``:

- a blocked or not-allowed plugin contributes nothing (it is never registered with pluggy);
- two contributions of one kind with one name are refused at start-up, naming both plugins;
- a plugin whose dependency is not loaded stops start-up, naming both plugins;
- a hookimpl with no hookspec (a misspelled hook) stops start-up (``check_pending``);
- a hookimpl the host cannot call (an argument its hookspec lacks) stops start-up, naming the plugin;
- a plugin that fails to import stops start-up, naming the plugin;
- a plugin's ``PluginInfo.name`` is the name it is registered under;
- an allow list that names plugins but matches none stops start-up; any other name in the allow or
  block list that matches no plugin is named in a warning, with the installed plugins
  (``tests/test_plugin_selection.py``).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

import pluggy

from campus_mcp import hookspecs
from campus_mcp.contributions import (
    AppResource,
    Completion,
    DataSource,
    DemoData,
    InstructionFragment,
    Job,
    Migrations,
    PluginInfo,
    Prompt,
    RouteGroup,
    Scope,
    Tool,
    ToolExample,
)
from campus_mcp.settings import Settings

ENTRY_POINT_GROUP = "campus_mcp"
# The host's own features, registered exactly like third-party plugins.
BUILTIN_PLUGINS: tuple[str, ...] = ("campus_mcp.builtin.core",)

C = TypeVar("C")

log = logging.getLogger(__name__)
# Warnings already given in this process: the command line loads the registry twice per command
# (once for the plugins' commands), and an operator needs to read a typo once, not twice.
_warned: set[str] = set()


class PluginError(RuntimeError):
    """A plugin set that cannot start. The message names the plugins involved."""


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    return sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)


def installed_plugin_names() -> list[str]:
    return [entry.name for entry in _entry_points()]


def _register(pm: pluggy.PluginManager, plugin: object, name: str) -> None:
    """Register one plugin; pluggy's refusals become a PluginError that names it."""
    try:
        pm.register(plugin, name=name)
    except pluggy.PluginValidationError as exc:
        # A hookimpl whose arguments the hookspec does not have (``def register_tools(config)``).
        raise PluginError(f"plugin {name!r} has a hook implementation the host cannot call: {exc}") from exc
    except ValueError as exc:
        # The name, or the same module, is registered already (two entry points for one module).
        raise PluginError(f"plugin {name!r} cannot be registered: {exc}") from exc


def check_plugin_names(settings: Settings, installed: Sequence[str], extra: Sequence[str] = ()) -> None:
    """Stop on an allow list that matches no plugin; warn of every other name that matches none.

    ``catalgo`` in the allow list would otherwise serve a campus without a single campus tool,
    and ``frineds`` in the block list would leave friends enabled, both without a word.
    """
    known = {*installed, *extra, *(name.rsplit(".", 1)[-1] for name in BUILTIN_PLUGINS)}
    choices = ", ".join(installed) or "none"
    allowed = settings.plugins or []
    if allowed and not known.intersection(allowed):
        raise PluginError(
            f"CAMPUS_MCP_PLUGINS (the allow list) names no installed plugin: {', '.join(map(repr, allowed))}. "
            f"Installed plugins: {choices}. Correct the names, or unset CAMPUS_MCP_PLUGINS to load them all."
        )
    for setting, names in (("CAMPUS_MCP_PLUGINS", allowed), ("CAMPUS_MCP_DISABLE", settings.disable)):
        unknown = [name for name in names if name not in known]
        if not unknown:
            continue
        message = (
            f"{setting} names plugins that are not installed, ignored: {', '.join(map(repr, unknown))}. "
            f"Installed plugins: {choices}."
        )
        if message not in _warned:
            _warned.add(message)
            log.warning("%s", message)


def build_plugin_manager(settings: Settings, extra: Iterable[tuple[str, object]] = ()) -> pluggy.PluginManager:
    """Register the built-in plugins, the enabled installed ones, and ``extra`` (tests)."""
    extra = list(extra)
    entries = _entry_points()
    check_plugin_names(settings, [entry.name for entry in entries], [name for name, _ in extra])
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for module_name in BUILTIN_PLUGINS:
        module = importlib.import_module(module_name)
        _register(pm, module, module_name.rsplit(".", 1)[-1])
    for entry in entries:
        if settings.plugins is not None and entry.name not in settings.plugins:
            continue
        if entry.name in settings.disable:
            continue
        try:
            plugin = entry.load()
        except Exception as exc:  # any import failure: name the plugin, keep the cause
            raise PluginError(f"plugin {entry.name!r} ({entry.value}) failed to import: {exc}") from exc
        _register(pm, plugin, entry.name)
    for name, plugin in extra:
        if name not in settings.disable:
            _register(pm, plugin, name)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        culprit = pm.get_name(exc.plugin) if exc.plugin is not None else None
        raise PluginError(f"plugin {culprit!r} implements a hook that does not exist: {exc}") from exc
    return pm


def _collect(pm: pluggy.PluginManager, hook_name: str, settings: Settings) -> list[Any]:
    """Call one hook plugin by plugin and stamp each item with the plugin that gave it."""
    caller = getattr(pm.hook, hook_name)
    items: list[Any] = []
    for impl in caller.get_hookimpls():  # registration order
        result = impl.function(**{arg: settings for arg in impl.argnames if arg == "settings"})
        if result is None:
            continue
        for item in result if isinstance(result, (list, tuple)) else [result]:
            is_contribution = dataclasses.is_dataclass(item) and not isinstance(item, type)
            items.append(dataclasses.replace(item, plugin=impl.plugin_name) if is_contribution else item)
    return items


def _unique(items: Sequence[C], kind: str, key: str) -> dict[str, C]:
    seen: dict[str, C] = {}
    for item in items:
        name = getattr(item, key)
        if name in seen:
            first = getattr(seen[name], "plugin", "?")
            second = getattr(item, "plugin", "?")
            raise PluginError(
                f"two plugins contribute the {kind} {name!r}: {first!r} and {second!r}. "
                f"Disable one of them (CAMPUS_MCP_DISABLE) or rename the {kind}."
            )
        seen[name] = item
    return seen


@dataclasses.dataclass(frozen=True)
class Registry:
    """Everything the enabled plugins contribute, checked and keyed by name."""

    settings: Settings
    pm: pluggy.PluginManager
    plugins: Mapping[str, PluginInfo]
    scopes: Mapping[str, Scope]
    tools: Mapping[str, Tool]
    route_groups: Sequence[RouteGroup]
    prompts: Mapping[str, Prompt]
    completions: Mapping[str, Completion]
    app_resources: Mapping[str, AppResource]
    jobs: Mapping[str, Job]
    data_sources: Mapping[str, DataSource]
    instructions: Sequence[InstructionFragment]
    migrations: Sequence[Migrations]
    demo_data: Sequence[DemoData]
    tool_examples: Sequence[ToolExample]
    commands: Sequence[Any]

    def hooks_of(self, plugin_name: str) -> list[str]:
        plugin = self.pm.get_plugin(plugin_name)
        return sorted(caller.name for caller in self.pm.get_hookcallers(plugin) or [] if plugin is not None)

    def contributions_of(self, plugin_name: str) -> dict[str, list[str]]:
        return {
            "tools": [t.name for t in self.tools.values() if t.plugin == plugin_name],
            "scopes": [s.name for s in self.scopes.values() if s.plugin == plugin_name],
            "prompts": [p.name for p in self.prompts.values() if p.plugin == plugin_name],
            "jobs": [j.id for j in self.jobs.values() if j.plugin == plugin_name],
            "app_resources": [a.uri for a in self.app_resources.values() if a.plugin == plugin_name],
        }


def load_registry(settings: Settings, extra: Iterable[tuple[str, object]] = ()) -> Registry:
    pm = build_plugin_manager(settings, extra)
    infos = _collect(pm, "campus_plugin_info", settings)
    plugins = _unique(infos, "plugin", "name")
    for info in infos:
        if info.name != info.plugin:
            # Contributions are stamped with the registered name; PluginInfo must agree with it.
            raise PluginError(
                f"plugin {info.plugin!r} calls itself {info.name!r} in campus_plugin_info. "
                "Make the entry point name and PluginInfo.name the same."
            )
    # Every missing dependency at once: disabling catalog names each plugin that needs it.
    missing = [
        f"plugin {info.name!r} needs plugin {needed!r}, which is disabled or not installed"
        for info in infos
        for needed in info.depends_on
        if needed not in plugins
    ]
    if missing:
        raise PluginError(
            "; ".join(missing) + ". Enable the needed plugins, or disable the plugins that need them as well."
        )
    scopes = _unique(_collect(pm, "register_scopes", settings), "scope", "name")
    tools = _unique(_collect(pm, "register_tools", settings), "tool", "name")
    for tool in tools.values():
        if tool.scope not in scopes:
            raise PluginError(
                f"tool {tool.name!r} of plugin {tool.plugin!r} needs scope {tool.scope!r}, "
                "which no enabled plugin contributes."
            )
    app_resources = _unique(_collect(pm, "register_app_resources", settings), "app resource", "uri")
    for tool in tools.values():
        if tool.app_resource and tool.app_resource not in app_resources:
            # The app plugin is optional: without it, tools simply carry no UI metadata.
            tools[tool.name] = dataclasses.replace(tool, app_resource=None)
    return Registry(
        settings=settings,
        pm=pm,
        plugins=plugins,
        scopes=scopes,
        tools=tools,
        route_groups=_collect(pm, "register_routes", settings),
        prompts=_unique(_collect(pm, "register_prompts", settings), "prompt", "name"),
        completions=_unique(_collect(pm, "register_completions", settings), "completion", "argument"),
        app_resources=app_resources,
        jobs=_unique(_collect(pm, "register_jobs", settings), "job", "id"),
        data_sources=_unique(_collect(pm, "register_data_sources", settings), "data source", "key"),
        instructions=sorted(_collect(pm, "register_instructions", settings), key=lambda f: (f.priority, f.plugin)),
        migrations=_collect(pm, "register_migrations", settings),
        demo_data=sorted(_collect(pm, "register_demo_data", settings), key=lambda d: d.order),
        tool_examples=_collect(pm, "register_tool_examples", settings),
        commands=_collect(pm, "register_commands", settings),
    )
