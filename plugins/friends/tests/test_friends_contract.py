"""The kit's tool contract over every friends tool: the one line any plugin's tests add."""

from campus_mcp.testing import plugin_contract

TestFriendsContract = plugin_contract("friends")
