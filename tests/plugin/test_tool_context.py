"""What a tool is handed of the deployment (issue 36): the settings of the plugins its own plugin
declares in ``depends_on``, not the registry; asking for another plugin's is named as the mistake."""

from __future__ import annotations

from typing import Any, cast

import pytest
from campus_mcp import ToolContext
from campus_mcp.plugin.principal import ANONYMOUS
from campus_mcp.testing import load_plugins
from campus_mcp.testing import test_settings as campus_settings


def test_a_tool_reads_the_settings_of_the_plugins_its_plugin_depends_on() -> None:
    registry = load_plugins(campus_settings("sqlite+aiosqlite:///never-opened.db"))
    of_schedule = registry.dependency_settings("schedule")  # PluginInfo(depends_on=("catalog",))
    assert dict(of_schedule) == {"catalog": registry.plugin_settings["catalog"]}
    assert dict(registry.dependency_settings("catalog")) == {}
    context = ToolContext(
        principal=ANONYMOUS, settings=registry.settings, sessions=cast(Any, None), dependency_settings=of_schedule
    )
    assert context.plugin_settings_of("catalog") is registry.plugin_settings["catalog"]
    with pytest.raises(LookupError, match=r"declare depends_on=\('friends',\)"):
        context.plugin_settings_of("friends")
    assert not hasattr(context, "registry")
