"""The kit's tool contract over every settings tool: the one line any plugin's tests add."""

from campus_mcp.testing import plugin_contract

TestSettingsContract = plugin_contract("settings")
