"""Icons (issue 29 point 3): the campus's and each family's, where a client shows them.

Over real HTTP with the SDK client in both eras on a demo campus with every family: ``serverInfo``
(``server/discover`` on 2026-07-28, ``initialize`` before), every tool, prompt and resource, the
server card and the toolbox listing carry the icon of their family, as a URL of this server; the
URL answers the image with a strong ETag and a 304 for it. The campus icon setting takes a file
(served, its PNG size read) or an https URL (named as it is), and one that cannot be read stops
the start with a sentence naming it.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest_asyncio
from campus_mcp.oauth.testkit import free_port, serve_on_loopback
from campus_mcp.testing import CampusFactory, CampusHarness, TestDatabases

from tests.support.endpoints import ERAS, MODERN, mcp_client, served_demo_campus, token_for

CAMPUS_MCP = str(Path(sys.executable).parent / "campus-mcp")
SVG = "image/svg+xml"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def served(campus_databases: TestDatabases) -> AsyncIterator[tuple[str, CampusHarness]]:
    async with served_demo_campus(campus_databases) as served:
        yield served


def icon_json(icons: Any) -> list[dict[str, Any]]:
    return [icon.model_dump(mode="json", by_alias=True, exclude_none=True) for icon in icons or []]


def svg_of(base: str, name: str) -> list[dict[str, Any]]:
    return [{"src": f"{base}/icons/{name}.svg", "mimeType": SVG, "sizes": ["any"]}]


async def test_icons_on_server_info_every_list_the_card_and_the_toolboxes(served: tuple[str, CampusHarness]) -> None:
    base, campus = served
    registry = campus.registry
    token = await token_for(campus.deployment, registry.scopes)
    for mode in ERAS:
        async with mcp_client(f"{base}/api/mcp", token, mode) as client:
            assert (str(client.protocol_version) == MODERN) == (mode == "auto")
            assert client.server_info is not None
            assert icon_json(client.server_info.icons) == svg_of(base, "campus"), mode
            tools = (await client.list_tools()).tools
            prompts = (await client.list_prompts()).prompts
            resources = (await client.list_resources()).resources
            templates = (await client.list_resource_templates()).resource_templates
        assert tools and prompts and resources and templates
        for tool in tools:
            family = registry.tools[tool.name].plugin
            # The host's own tools (core) have no family icon: they show the campus's.
            expected = svg_of(base, family if registry.plugins[family].icon else "campus")
            assert icon_json(tool.icons) == expected, tool.name
        for prompt in prompts:
            # Each family's prompts carry its icon (the prompts family's, Canvas's plan_my_week).
            assert icon_json(prompt.icons) == svg_of(base, registry.prompts[prompt.name].plugin), prompt.name
        for resource in resources:
            assert icon_json(resource.icons) == svg_of(base, "apps"), resource.uri
        # campus://sections/... is the catalog's, campus://me/... the schedule family's.
        for template in templates:
            family = registry.resources[template.uri_template].plugin
            assert icon_json(template.icons) == svg_of(base, family), template.uri_template
        # A family's endpoint shows the family's icon.
        async with mcp_client(f"{base}/api/mcp/catalog", token, mode) as client:
            assert client.server_info is not None
            assert icon_json(client.server_info.icons) == svg_of(base, "catalog"), mode

    async with httpx.AsyncClient(timeout=30) as http:
        card = (await http.get(f"{base}/api/mcp/server-card")).json()
        assert card["icons"] == svg_of(base, "campus")
        assert (await http.get(f"{base}/api/mcp/friends/server-card")).json()["icons"] == svg_of(base, "friends")

        # Every icon a listing names answers the picture, cacheable, revalidated by its strong ETag.
        shipped = Path(__file__).parents[1] / "plugins" / "catalog" / "campus_catalog" / "icon.svg"
        families = sorted(name for name, info in registry.plugins.items() if info.icon)
        assert {"catalog", "schedule", "friends", "settings", "apps", "prompts", "dining"} <= set(families)
        for name in ("campus", *families):
            answer = await http.get(f"{base}/icons/{name}.svg")
            assert answer.status_code == 200, (name, answer.text)
            assert answer.headers["content-type"].startswith(SVG)
            assert answer.content.startswith(b"<svg") and b"<script" not in answer.content
            assert "sandbox" in answer.headers["content-security-policy"]
            etag = answer.headers["etag"]
            assert etag.startswith('"') and not etag.startswith("W/"), "a strong ETag"
            again = await http.get(f"{base}/icons/{name}.svg", headers={"If-None-Match": etag})
            assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
        assert (await http.get(f"{base}/icons/catalog.svg")).content == shipped.read_bytes()
        missing = await http.get(f"{base}/icons/library.svg")
        assert missing.status_code == 404 and f"{base}/icons/campus.svg" in missing.json()["message"]

    # The toolbox listing: each toolbox with its family's icon, the meta-tools with the campus's.
    async with mcp_client(f"{base}/api/mcp/toolboxes", token, "legacy") as client:
        meta = (await client.list_tools()).tools
        assert all(icon_json(tool.icons) == svg_of(base, "campus") for tool in meta)
        listed = await client.call_tool("list_toolboxes", {})
    boxes = (listed.structured_content or {})["toolboxes"]
    assert {box["name"] for box in boxes} >= {"catalog", "schedule", "prompts"}
    for box in boxes:
        assert box["icons"] == svg_of(base, box["name"]), box


def png(width: int, height: int) -> bytes:
    """A real PNG of one colour (the campus's own picture in the test)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x1e\x3a\x6e" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


async def test_the_campus_icon_setting_takes_a_file_or_a_url(campus_factory: CampusFactory, tmp_path: Path) -> None:
    picture = tmp_path / "wit-seal.png"
    picture.write_bytes(png(128, 128))
    port = free_port()
    campus = await campus_factory(plugins=["dining"], icon=str(picture), public_url=f"http://127.0.0.1:{port}")
    async with serve_on_loopback(campus.app, port) as base, httpx.AsyncClient(timeout=30) as http:
        expected = [{"src": f"{base}/icons/campus.png", "mimeType": "image/png", "sizes": ["128x128"]}]
        assert (await http.get(f"{base}/api/mcp/server-card")).json()["icons"] == expected
        served = await http.get(f"{base}/icons/campus.png")
        assert served.headers["content-type"] == "image/png" and served.content == picture.read_bytes()
        assert (await http.get(f"{base}/icons/campus.svg")).status_code == 404
        catalog = (await http.get(f"{base}/.well-known/ai-catalog.json")).json()
        assert catalog["host"]["logoUrl"] == f"{base}/icons/campus.png"
    async with campus.mcp() as client:
        assert client.server_info is not None and icon_json(client.server_info.icons) == expected

    hosted = "https://www.wit.example/brand/seal.svg"
    campus = await campus_factory(plugins=["dining"], icon=hosted)
    async with campus.mcp() as client:
        assert client.server_info is not None
        assert icon_json(client.server_info.icons) == [{"src": hosted, "mimeType": SVG}]
        # A family without an icon of its own would show the campus's; dining has its own.
        (tool, *_) = (await client.list_tools()).tools
        assert icon_json(tool.icons)[0]["src"].endswith("/icons/dining.svg")


def test_an_icon_that_cannot_be_read_stops_the_start(tmp_path: Path) -> None:
    env = {
        **{name: value for name, value in os.environ.items() if not name.startswith("CAMPUS_MCP_")},
        "CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'never.db'}",
        # A long folder path is named whole: it is the operator's to fix, not a client's input.
        "CAMPUS_MCP_ICON": str(tmp_path / ("campus-" * 12) / "seal.svg"),
        "CAMPUS_MCP_SECRET_KEY": "test-only-secret-key",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
    }
    started = subprocess.run(
        [CAMPUS_MCP, "serve", "--port", "1"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert started.returncode != 0
    assert "CAMPUS_MCP_ICON=" in started.stderr and "seal.svg" in started.stderr, started.stderr
    assert "cannot be read" in started.stderr and "an https:// URL" in started.stderr, started.stderr
    assert "Traceback" not in started.stderr
    assert not (tmp_path / "never.db").exists(), "nothing written by a server that cannot start"
    env["CAMPUS_MCP_ICON"] = str(tmp_path / "seal.gif")
    started = subprocess.run([CAMPUS_MCP, "serve"], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "is not an .svg, .png, .jpg or .webp file" in started.stderr, started.stderr
