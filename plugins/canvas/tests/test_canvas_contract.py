"""The kit's tool contract over every Canvas tool, on the demo campus's demo Canvas: the one line
any plugin's tests add."""

from campus_mcp.testing import plugin_contract

TestCanvasContract = plugin_contract("canvas")
