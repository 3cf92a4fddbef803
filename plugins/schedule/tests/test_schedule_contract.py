"""The kit's tool contract over the schedule tools (demo and sparse examples, scopes, parity)."""

from campus_mcp.testing import plugin_contract

TestScheduleContract = plugin_contract("schedule")
