"""Loads the plugins and assembles their contributions into one registry.

Invariants, each held by a test in ``tests/assembly/test_registry.py``:

- a blocked or not-allowed plugin contributes nothing (it is never registered with pluggy);
- two contributions of one kind with one name are refused at start-up, naming both plugins;
- a plugin whose dependency is not loaded stops start-up, naming both plugins;
- a hookimpl with no hookspec (a misspelled hook) stops start-up (``check_pending``);
- a hookimpl the host cannot call (an argument its hookspec lacks) stops start-up, naming the plugin;
- a plugin that fails to import stops start-up, naming the plugin;
- a plugin's ``PluginInfo.name`` is the name it is registered under;
- a plugin's settings (``PluginInfo.settings_model``) that do not validate stop start-up, naming the
  variable or TOML key and the rule; each hook gets its own plugin's object
  (``tests/plugin/test_plugin_settings.py``);
- an allow list that names plugins but matches none stops start-up; any other name in the allow or
  block list that matches no plugin is named in a warning, with the installed plugins
  (``tests/assembly/test_plugin_selection.py``).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import pluggy

from campus_mcp.base.settings import Settings, config_file
from campus_mcp.plugin import contributions, hookspecs
from campus_mcp.plugin.job_context import Job
from campus_mcp.plugin.settings import (
    PluginSettings,
    PluginSettingsError,
    load_plugin_settings,
    plugin_tables,
)

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

    from campus_mcp.plugin.principal import Principal
    from campus_mcp.plugin.tool_context import ToolContext

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


# A distribution that says it is an example (the dining plugin, which `make bootstrap` installs):
# its keywords name this. Outside demo mode it loads only when the allow list names it, so a
# production campus that leaves CAMPUS_MCP_PLUGINS unset does not ask for "See dining hall hours".
EXAMPLE_KEYWORD = "campus-mcp-example"


def is_example(entry: importlib.metadata.EntryPoint) -> bool:
    keywords = (entry.dist.metadata["Keywords"] or "") if entry.dist else ""
    return EXAMPLE_KEYWORD in keywords.replace(",", " ").split()


def example_left_out(settings: Settings, entry: importlib.metadata.EntryPoint) -> bool:
    """An example plugin not loaded: outside demo mode, with no allow list naming it."""
    return not settings.demo and settings.plugins is None and is_example(entry)


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
        if entry.name in settings.disable or example_left_out(settings, entry):
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


def _collect(
    pm: pluggy.PluginManager,
    hook_name: str,
    settings: Settings,
    plugin_settings: Mapping[str, PluginSettings] | None = None,
) -> list[Any]:
    """Call one hook plugin by plugin and stamp each item with the plugin that gave it.

    Each implementation gets the arguments it names: ``settings`` (the host's) and
    ``plugin_settings`` (its own plugin's object, None for a plugin without a settings model).
    """
    caller = getattr(pm.hook, hook_name)
    items: list[Any] = []
    for impl in caller.get_hookimpls():  # registration order
        offered = {"settings": settings, "plugin_settings": (plugin_settings or {}).get(impl.plugin_name)}
        try:
            result = impl.function(**{arg: offered[arg] for arg in impl.argnames if arg in offered})
        except PluginError:
            raise
        except Exception as exc:  # a bug in one plugin: name it and its hook rather than a traceback
            raise PluginError(
                f"plugin {impl.plugin_name!r} failed in its {hook_name} hook: {type(exc).__name__}: {exc}"
            ) from exc
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


def _check_prompts(
    prompts: Mapping[str, contributions.Prompt], completions: Mapping[str, contributions.Completion]
) -> None:
    """Each prompt renders one way, and every completer it names is there: a prompt whose values
    come from a disabled plugin would otherwise complete nothing in silence."""
    for prompt in prompts.values():
        if (prompt.render is None) == (prompt.render_in_context is None):
            raise PluginError(
                f"prompt {prompt.name!r} of plugin {prompt.plugin!r} must give exactly one of render and "
                "render_in_context."
            )
        for argument in prompt.arguments:
            if argument.completer and argument.completer not in completions:
                offered = ", ".join(sorted(completions)) or "none"
                raise PluginError(
                    f"prompt {prompt.name!r} of plugin {prompt.plugin!r} completes its argument "
                    f"{argument.name!r} with the completer {argument.completer!r}, which no enabled plugin "
                    f"registers (registered: {offered}). Enable the plugin that registers it, or disable "
                    f"{prompt.plugin!r}."
                )


_TEMPLATE_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _checked_resources(
    resources: Mapping[str, contributions.ResourceTemplate], tools: Mapping[str, contributions.Tool]
) -> dict[str, contributions.ResourceTemplate]:
    """The templates whose tool is offered (a plugin without its source offers neither), each a
    valid URI template whose variables are the tool's arguments, of a tool that only reads."""
    kept: dict[str, contributions.ResourceTemplate] = {}
    for key, template in resources.items():
        where = f"resource template {key!r} of plugin {template.plugin!r}"
        if not key.startswith("campus://"):
            raise PluginError(f"{where} must start with campus:// (ui:// views are app resources).")
        # Simple {name} variables only, read without the MCP SDK (a CLI command loads the
        # registry and must not import it): each stands for one path segment.
        names = _TEMPLATE_VARIABLE.findall(key)
        if _TEMPLATE_VARIABLE.sub("", key).count("{") or _TEMPLATE_VARIABLE.sub("", key).count("}"):
            raise PluginError(f"{where} is not a URI template of simple variables such as {{term}}.")
        unknown = sorted(set(template.completers) - set(names))
        if unknown:
            raise PluginError(f"{where} names completers for {', '.join(unknown)}, which are not its variables.")
        tool = tools.get(template.tool)
        if tool is None:
            continue
        if tool.writes:
            raise PluginError(f"{where} reads the tool {tool.name!r}, which writes; a resource is read only.")
        fields = set(tool.input_model.model_fields)
        missing = sorted(set(names) - fields)
        if missing:
            raise PluginError(
                f"{where}: the tool {tool.name!r} has no argument {', '.join(missing)}; "
                f"its arguments are {', '.join(sorted(fields)) or 'none'}."
            )
        kept[key] = template
    return kept


def _check_resource_completers(
    resources: Mapping[str, contributions.ResourceTemplate], completions: Mapping[str, contributions.Completion]
) -> None:
    for template in resources.values():
        for variable, completer in template.completers.items():
            if completer not in completions:
                offered = ", ".join(sorted(completions)) or "none"
                raise PluginError(
                    f"resource template {template.uri_template!r} of plugin {template.plugin!r} completes "
                    f"{variable!r} with the completer {completer!r}, which no enabled plugin registers "
                    f"(registered: {offered}). Enable the plugin that registers it."
                )


@dataclasses.dataclass(frozen=True)
class Registry:
    """Everything the enabled plugins contribute, checked and keyed by name."""

    settings: Settings
    pm: pluggy.PluginManager
    plugins: Mapping[str, contributions.PluginInfo]
    scopes: Mapping[str, contributions.Scope]
    tools: Mapping[str, contributions.Tool]
    route_groups: Sequence[contributions.RouteGroup]
    prompts: Mapping[str, contributions.Prompt]
    completions: Mapping[str, contributions.Completion]
    app_resources: Mapping[str, contributions.AppResource]
    jobs: Mapping[str, Job]
    data_sources: Mapping[str, contributions.DataSource]
    instructions: Sequence[contributions.InstructionFragment]
    migrations: Sequence[contributions.Migrations]
    demo_data: Sequence[contributions.DemoData]
    tool_examples: Sequence[contributions.ToolExample]
    commands: Sequence[Any]
    # Each plugin's settings object, by plugin name; only plugins with a settings model have one.
    plugin_settings: Mapping[str, PluginSettings] = dataclasses.field(default_factory=dict)
    # What else reads a student's data (a calendar feed), listed on Settings with the OAuth apps.
    connections: Sequence[contributions.Connection] = ()
    # What each plugin holds about a student, for the export (campus_mcp.students.export).
    student_data: Sequence[contributions.StudentData] = ()
    # The campus:// resource templates, by template; each the answer of one enabled read tool.
    resources: Mapping[str, contributions.ResourceTemplate] = dataclasses.field(default_factory=dict)
    # Events plugins add to the student's calendar feed (campus_mcp.assembly.calendar_sources).
    calendar_sources: Sequence[contributions.CalendarSource] = ()
    _dependency_settings: dict[str, Mapping[str, Any]] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def tool_context(
        self, principal: Principal, sessions: async_sessionmaker[AsyncSession], plugin: str, **call: Any
    ) -> ToolContext:
        """What a tool of ``plugin`` gets for one call on either door (MCP or its REST twin): the
        caller and the database, with what the deployment hands every tool of that plugin (its
        settings and its dependencies', the deployment's tool and plugin names, its jobs). ``call``:
        the call's own fields (protocol_version, request_meta) or a door's own plugin_settings."""
        # Here, not at the top: a command that only loads the registry stays without SQLAlchemy.
        from campus_mcp.plugin.tool_context import ToolContext

        parts: dict[str, Any] = {
            "plugin_settings": self.plugin_settings.get(plugin),
            "dependency_settings": self.dependency_settings(plugin),
            "tool_names": self.tools.keys(),
            "plugin_names": self.plugins.keys(),
            "jobs": self.jobs,
        }
        return ToolContext(principal=principal, settings=self.settings, sessions=sessions, **(parts | call))

    def dependency_settings(self, plugin_name: str) -> Mapping[str, Any]:
        """The settings objects of the plugins ``plugin_name`` declares in ``depends_on``, by name
        (None for one without a settings model): what its tools read with
        ``ToolContext.plugin_settings_of``. Worked out once per plugin."""
        found = self._dependency_settings.get(plugin_name)
        if found is None:
            info = self.plugins.get(plugin_name)
            needed = info.depends_on if info is not None else ()
            found = self._dependency_settings[plugin_name] = MappingProxyType(
                {name: self.plugin_settings.get(name) for name in needed}
            )
        return found

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
            "resources": [r.uri_template for r in self.resources.values() if r.plugin == plugin_name],
        }


def load_plugin_settings_of(
    infos: Sequence[contributions.PluginInfo], overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, PluginSettings]:
    """Every enabled plugin's settings object, from ``[plugins.<name>]`` and ``CAMPUS_MCP_<NAME>_<KEY>``.

    ``overrides`` (by plugin name) win over both: tests set a plugin's values without the environment.
    """
    config = config_file()
    tables = plugin_tables(config)
    loaded: dict[str, PluginSettings] = {}
    enabled = {info.name for info in infos}
    strays = sorted(name for name in tables if name not in enabled)
    if strays:
        # A disabled plugin keeps its table, so this is a warning; but a misspelled name is named.
        message = (
            f"{config} has settings for plugins that are not enabled, ignored: "
            f"{', '.join(f'[plugins.{name}]' for name in strays)}. Enabled plugins: {', '.join(sorted(enabled))}."
        )
        if message not in _warned:
            _warned.add(message)
            log.warning("%s", message)
    for info in infos:
        model = info.settings_model
        table = tables.get(info.name, {})
        if model is None:
            if table:
                raise PluginError(
                    f"{config} has a [plugins.{info.name}] table, but plugin {info.name!r} has no settings. "
                    "Remove the table."
                )
            continue
        if not (isinstance(model, type) and issubclass(model, PluginSettings)):
            raise PluginError(
                f"plugin {info.name!r} gives settings_model={model!r}, which is not a subclass of "
                "campus_mcp.PluginSettings. Make its settings class inherit from PluginSettings."
            )
        try:
            loaded[info.name] = load_plugin_settings(
                info.name,
                model,
                table=table,
                environ=os.environ,
                config=config,
                overrides=(overrides or {}).get(info.name),
            )
        except PluginSettingsError as exc:
            raise PluginError(str(exc)) from None
    return loaded


def _link_app_resources(
    tools: dict[str, contributions.Tool], app_resources: Mapping[str, contributions.AppResource]
) -> None:
    """Stamp each tool with the view that draws it: its own ``app_resource`` or a view naming it."""
    claimed: dict[str, contributions.AppResource] = {}
    for app in app_resources.values():
        for name in app.tools:
            if name in claimed:
                raise PluginError(
                    f"tool {name!r} is drawn by two app resources, {claimed[name].uri!r} of plugin "
                    f"{claimed[name].plugin!r} and {app.uri!r} of plugin {app.plugin!r}. Name it in one of them."
                )
            claimed[name] = app
    for tool in list(tools.values()):
        view = claimed.get(tool.name)
        if view is not None:
            if tool.app_resource and tool.app_resource != view.uri:
                raise PluginError(
                    f"tool {tool.name!r} of plugin {tool.plugin!r} names the app resource {tool.app_resource!r}, "
                    f"but {view.uri!r} of plugin {view.plugin!r} claims it. Keep one of the two."
                )
            tools[tool.name] = dataclasses.replace(tool, app_resource=view.uri)
        elif tool.app_resource and tool.app_resource not in app_resources:
            # The app plugin is optional: without it, tools simply carry no UI metadata.
            tools[tool.name] = dataclasses.replace(tool, app_resource=None)
    # A view may name a tool of a disabled family (friends off): that link is simply not made.


def load_registry(
    settings: Settings,
    extra: Iterable[tuple[str, object]] = (),
    *,
    plugin_settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> Registry:
    """Load the enabled plugins; ``plugin_settings`` gives values of plugins' settings (tests)."""
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
    # Before any other hook: a bad value stops start-up here, and every hook can be given its object.
    loaded = load_plugin_settings_of(infos, plugin_settings)

    def collect(hook_name: str) -> list[Any]:
        return _collect(pm, hook_name, settings, loaded)

    scopes = _unique(collect("register_scopes"), "scope", "name")
    tools = _unique(collect("register_tools"), "tool", "name")
    for tool in tools.values():
        if tool.scope not in scopes:
            raise PluginError(
                f"tool {tool.name!r} of plugin {tool.plugin!r} needs scope {tool.scope!r}, "
                "which no enabled plugin contributes."
            )
    app_resources = _unique(collect("register_app_resources"), "app resource", "uri")
    _link_app_resources(tools, app_resources)
    prompts = _unique(collect("register_prompts"), "prompt", "name")
    completions = _unique(collect("register_completions"), "completion", "argument")
    _check_prompts(prompts, completions)
    resources = _checked_resources(_unique(collect("register_resources"), "resource template", "uri_template"), tools)
    _check_resource_completers(resources, completions)
    return Registry(
        settings=settings,
        pm=pm,
        plugins=plugins,
        scopes=scopes,
        tools=tools,
        route_groups=collect("register_routes"),
        prompts=prompts,
        completions=completions,
        app_resources=app_resources,
        jobs=_unique(collect("register_jobs"), "job", "id"),
        data_sources=_unique(collect("register_data_sources"), "data source", "key"),
        instructions=sorted(collect("register_instructions"), key=lambda f: (f.priority, f.plugin)),
        migrations=collect("register_migrations"),
        demo_data=sorted(collect("register_demo_data"), key=lambda d: d.order),
        tool_examples=collect("register_tool_examples"),
        commands=collect("register_commands"),
        plugin_settings=loaded,
        connections=list(_unique(collect("register_connections"), "connection", "title").values()),
        student_data=list(_unique(collect("register_student_data"), "student data", "key").values()),
        resources=resources,
        calendar_sources=list(_unique(collect("register_calendar_events"), "calendar source", "key").values()),
    )
