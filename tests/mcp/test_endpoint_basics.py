"""The MCP endpoint over HTTP: tools listed and called in both protocol eras, errors readable."""

from __future__ import annotations

from campus_mcp import PluginInfo, Tool, hookimpl
from campus_mcp.testing import CampusFactory
from pydantic import BaseModel


class DoubleArgs(BaseModel):
    n: int


class Doubled(BaseModel):
    doubled: int


async def double(_ctx: object, args: DoubleArgs) -> Doubled:
    return Doubled(doubled=args.n * 2)


class DoublerPlugin:
    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="doubler", version="1", title="Doubler", description="Doubles numbers.")

    @hookimpl
    def register_tools(self) -> list[Tool]:
        return [
            Tool(
                name="double",
                title="Double",
                description="Doubles a number.",
                scope="catalog",
                input_model=DoubleArgs,
                output_model=Doubled,
                handler=double,
            )
        ]


async def test_call_in_both_eras(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=["catalog"], extra_plugins=[("doubler", DoublerPlugin())])
    for mode in ("legacy", "2026-07-28"):
        async with campus.mcp(mode=mode) as client:
            tools = await client.list_tools()
            assert "double" in [t.name for t in tools.tools]
            result = await client.call_tool("double", {"n": 21})
            assert result.structured_content == {"doubled": 42}
            bad = await client.call_tool("double", {"n": "many"})
            assert bad.is_error
            assert "n:" in bad.content[0].text and "integer" in bad.content[0].text
