"""The client side of scripts/image.sh's test: sign in to the served image and call tools over MCP.

    IMAGE_TEST_PASSWORD=... scripts/image_client.py BASE_URL USERNAME

As an assistant does: the MCP SDK's OAuth client finds the server's authorization server from the
first 401, registers, and opens the authorization URL; the browser stand-in of the project's test
kit signs in on the real login page with the student's password and allows the consent page's
boxes as they start. Then tools are listed and three called, the answers read as a model would.
The password comes in the environment, never on a command line, and is never printed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import httpx2
from campus_mcp.testing.oauth import BrowserStudent, MemoryStorage, provider_for
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if block.type == "text")


async def main(base: str, username: str, password: str) -> int:
    mcp_url = f"{base}/api/mcp"
    student = BrowserStudent(username, password)
    storage = MemoryStorage()
    provider = provider_for(mcp_url, student, storage)
    async with (
        httpx2.AsyncClient(auth=provider, timeout=60) as http,
        Client(streamable_http_client(mcp_url, http_client=http)) as client,  # type: ignore[arg-type]
    ):
        tools = {tool.name for tool in (await client.list_tools()).tools}
        wanted = {"list_terms", "search_courses", "my_calendar_settings", "my_courses"}
        missing = wanted - tools
        if missing:
            print(f"image: missing tools {sorted(missing)} among {sorted(tools)}", file=sys.stderr)
            return 1
        if "dining_hours" in tools or any(name.startswith("dining") for name in tools):
            print("image: the example dining plugin is served outside demo mode", file=sys.stderr)
            return 1
        print(
            f"image: signed in as {username} (consent offered {sorted(student.last_consent.boxes)})"
            if student.last_consent
            else f"image: signed in as {username}"
        )
        print(f"image: {len(tools)} tools listed")
        failed = 0
        # A public read, a search (the question embedded by the catalog's engine), the student's own.
        calls: list[tuple[str, dict[str, Any]]] = [
            ("list_terms", {}),
            ("search_courses", {"q": "introduction to programming"}),
            ("my_calendar_settings", {}),
        ]
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            answer = text_of(result)
            if result.is_error:
                failed += 1
                print(f"image: {name} answered a tool error: {answer[:300]}", file=sys.stderr)
                continue
            structured = result.structured_content or json.loads(answer)
            print(f"image: {name} answered: {', '.join(sorted(structured))[:160]}")
    print(f"image: {len(calls) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or not os.environ.get("IMAGE_TEST_PASSWORD"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], os.environ["IMAGE_TEST_PASSWORD"])))
