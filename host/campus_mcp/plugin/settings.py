"""Per-plugin settings: a plugin's own pydantic model, filled from ``campus-mcp.toml`` and the environment.

A plugin declares ``PluginInfo(settings_model=DiningSettings)``, a subclass of
:class:`PluginSettings`. Its values come from the ``[plugins.<name>]`` table of the file the host's
settings read (``CAMPUS_MCP_CONFIG``, default ``campus-mcp.toml``) and from the environment
variables ``CAMPUS_MCP_<NAME>_<KEY>``; the environment wins, as it does for the host's settings.
The registry loads each model once, right after ``campus_plugin_info``, so a bad value stops
start-up before any hook runs, naming the variable or TOML key and the rule it breaks. The value
itself is never repeated: a plugin's settings may hold a password or a token.
"""

from __future__ import annotations

import logging
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from campus_mcp.base.settings import config_file

ENV_PREFIX = "CAMPUS_MCP_"

log = logging.getLogger(__name__)
# Moved-setting warnings already given in this process: the command line loads the registry twice
# per command, and an operator needs to read each one once.
_warned: set[str] = set()


class PluginSettings(BaseModel):
    """The base class of a plugin's settings model.

    Unknown keys are refused (``extra="forbid"``): a misspelled key in ``[plugins.<name>]`` would
    otherwise be ignored in silence and the plugin would run on its default.
    """

    model_config = ConfigDict(extra="forbid")

    #: Keys that were host settings before this plugin had them (``CAMPUS_MCP_<KEY>``, or ``<key>``
    #: at the top of the config file). The host ignores those names now; start-up warns that one is
    #: still set and names the new one, so a deployment does not lose its value in silence.
    moved_from_host: ClassVar[tuple[str, ...]] = ()


class PluginSettingsError(RuntimeError):
    """A plugin's settings do not validate. The registry turns it into a ``PluginError``."""


def env_prefix(plugin: str) -> str:
    """``CAMPUS_MCP_DINING_`` for the plugin ``dining`` (a ``-`` or ``.`` in a name becomes ``_``)."""
    return ENV_PREFIX + re.sub(r"[^0-9A-Za-z]", "_", plugin).upper() + "_"


def env_variable(plugin: str, key: str) -> str:
    return env_prefix(plugin) + key.upper()


def toml_key(plugin: str, key: str) -> str:
    return f"[plugins.{plugin}] {key}"


def plugin_tables(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The ``[plugins.<name>]`` tables of the config file; empty when there is no file.

    A top-level ``plugins = [...]`` (the host's allow list written in TOML) has no tables.
    """
    path = path or config_file()
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        document = tomllib.load(handle)
    tables = document.get("plugins")
    if not isinstance(tables, dict):
        return {}
    return {name: table for name, table in tables.items() if isinstance(table, dict)}


def _where(plugin: str, key: str, from_env: set[str], config: Path) -> str:
    if key in from_env:
        return env_variable(plugin, key)
    return f"{toml_key(plugin, key)} in {config}"


def _host_keys(config: Path) -> set[str]:
    """The top-level keys of the config file (the host's settings), but not its ``[plugins]``."""
    if not config.is_file():
        return set()
    with config.open("rb") as handle:
        return {key for key in tomllib.load(handle) if key != "plugins"}


def warn_moved_from_host(plugin: str, model: type[PluginSettings], environ: Mapping[str, str], config: Path) -> None:
    """One warning per old host name still set, naming the new one (never the value: it may be secret)."""
    if not model.moved_from_host:
        return
    in_file = _host_keys(config)
    for key in model.moved_from_host:
        old_names = [ENV_PREFIX + key.upper()] if ENV_PREFIX + key.upper() in environ else []
        if key in in_file:
            old_names.append(f"{key} in {config}")
        for old in old_names:
            message = (
                f"{old} is no longer read: the setting moved to plugin {plugin!r}. Set "
                f"{env_variable(plugin, key)} or {toml_key(plugin, key)} in {config} instead; until then "
                "its default is used."
            )
            if message not in _warned:
                _warned.add(message)
                log.warning("%s", message)


def load_plugin_settings(
    plugin: str,
    model: type[PluginSettings],
    *,
    table: Mapping[str, Any],
    environ: Mapping[str, str],
    config: Path,
    overrides: Mapping[str, Any] | None = None,
) -> PluginSettings:
    """One plugin's settings object: ``overrides`` (tests), then the environment, then the TOML table."""
    warn_moved_from_host(plugin, model, environ, config)
    fields = model.model_fields
    allowed = ", ".join(fields) or "none"
    unknown = [key for key in table if key not in fields]
    if unknown:
        raise PluginSettingsError(
            f"{config} sets {', '.join(toml_key(plugin, key) for key in unknown)}, which plugin {plugin!r} "
            f"does not have. Its settings are: {allowed}. Correct or remove the key."
        )
    values: dict[str, Any] = dict(table)
    from_env: set[str] = set()
    for key in fields:
        variable = env_variable(plugin, key)
        if variable in environ:
            values[key] = environ[variable]
            from_env.add(key)
    for key, value in (overrides or {}).items():
        values[key] = value
        from_env.discard(key)
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_input=False, include_url=False):
            message = str(error["msg"]).removeprefix("Value error, ")
            key = str(error["loc"][0]) if error["loc"] else ""
            if key in fields:
                # loc[1:] is the place inside a list or table value: name it too.
                inner = "".join(f"[{part!r}]" for part in error["loc"][1:])
                problems.append(f"{_where(plugin, key, from_env, config)}{inner}: {message}")
            elif key:
                problems.append(f"{key}: {message}")
            else:
                problems.append(message)
        raise PluginSettingsError(
            f"the settings of plugin {plugin!r} are not valid: {'; '.join(problems)}. "
            f"Correct them in the environment ({env_prefix(plugin)}<KEY>) or in [plugins.{plugin}] of {config}."
        ) from None
