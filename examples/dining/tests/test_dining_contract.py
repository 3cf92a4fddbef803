"""The kit's tool contract over every dining tool: the one line any plugin's tests add."""

from campus_mcp.testing import plugin_contract

TestDiningContract = plugin_contract("dining")
