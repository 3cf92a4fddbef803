"""The kit's tool contract over every catalog tool: the one line any plugin's tests add."""

from campus_mcp.testing import plugin_contract

TestCatalogContract = plugin_contract("catalog")
