"""The server cards (issue 14.2) over real HTTP: valid against the schema they name, true to the
server (its tools, prompts, resources, the protocol versions it negotiates), cacheable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import jsonschema  # type: ignore[import-untyped]
from campus_mcp.oauth.testkit import free_port, serve_on_loopback
from campus_mcp.server_card import toolbox_definitions
from campus_mcp.testing import CampusFactory, CampusHarness

SCHEMA_FILE = Path(__file__).parents[1] / "host" / "campus_mcp" / "schemas" / "server-card.schema.json"
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
FAMILIES = {"catalog", "dining", "friends", "schedule", "settings"}  # the families with tools


def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    # The file holds the definitions; a card is its ServerCard (as the schema's own example check does).
    return jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/ServerCard"})


def initialize(version: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "card-test", "version": "1"}},
    }


async def signed_in_lists(campus: CampusHarness) -> tuple[set[str], set[str], set[str]]:
    async with campus.mcp(user_id=1) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
    return tools, prompts, resources


async def test_every_card_validates_and_matches_the_server(campus_factory: CampusFactory) -> None:
    port = free_port()
    campus = await campus_factory(public_url=f"http://127.0.0.1:{port}")
    check = validator()
    tools, prompts, resources = await signed_in_lists(campus)
    async with serve_on_loopback(campus.app, port) as base, httpx.AsyncClient(timeout=30) as http:
        answer = await http.get(f"{base}/.well-known/mcp/server-card.json")
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("application/json")
        card = answer.json()
        errors = [e.message for e in check.iter_errors(card)]
        assert not errors, errors
        assert card["$schema"] == SCHEMA_URL
        assert 0 < len(card["description"]) <= 100
        (remote,) = card["remotes"]
        assert remote == {**remote, "type": "streamable-http", "url": f"{base}/api/mcp"}
        assert {t["name"] for t in card["tools"]} == tools
        assert {p["name"] for p in card["prompts"]} == prompts
        assert {r["uri"] for r in card["resources"]} == resources
        oauth = card["_meta"][card["name"]]["oauth"]
        assert oauth["protectedResourceMetadata"] == f"{base}/.well-known/oauth-protected-resource/api/mcp"
        assert (await http.get(oauth["protectedResourceMetadata"])).json()["resource"] == f"{base}/api/mcp"
        assert set(oauth["scopes"]) == set(campus.registry.scopes)

        # Every version the card names, the server answers in (initialize gives the same one back).
        for version in remote["supportedProtocolVersions"]:
            if version >= "2026-07-28":
                continue  # the stateless era has no initialize; server/discover lists it below
            reply = await http.post(
                remote["url"], json=initialize(version), headers={"Accept": "application/json, text/event-stream"}
            )
            assert reply.json()["result"]["protocolVersion"] == version
        discover = await http.post(
            remote["url"],
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "server/discover",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            },
            headers={
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "server/discover",
            },
        )
        modern = set(discover.json()["result"]["supportedVersions"])
        assert modern and modern <= set(remote["supportedProtocolVersions"])

        # One card per family endpoint, each with only that family's tools.
        for family in FAMILIES:
            own = await http.get(f"{base}/.well-known/mcp/server-card/{family}.json")
            assert own.status_code == 200, (family, own.text)
            family_card = own.json()
            assert not [e.message for e in check.iter_errors(family_card)], family
            assert family_card["remotes"][0]["url"] == f"{base}/api/mcp/{family}"
            assert urlsplit(family_card["remotes"][0]["url"]).scheme == "http"
            assert family_card["name"] != card["name"]
            expected = {t.name for t in campus.registry.tools.values() if t.plugin == family}
            assert {t["name"] for t in family_card["tools"]} == expected
        if toolbox_definitions() is not None:  # the host has toolbox mode (issue 14.1)
            boxes = (await http.get(f"{base}/.well-known/mcp/server-card/toolboxes.json")).json()
            assert not [e.message for e in check.iter_errors(boxes)]
            assert {t["name"] for t in boxes["tools"]} == {
                "list_toolboxes",
                "open_toolbox",
                "call_read_only",
                "call_tool",
            }
            # Every card's URL is an endpoint that answers.
            for family in (*FAMILIES, "toolboxes"):
                reply = await http.post(
                    f"{base}/api/mcp/{family}",
                    json=initialize("2025-11-25"),
                    headers={"Accept": "application/json, text/event-stream"},
                )
                assert reply.status_code == 200, (family, reply.text)
        unknown = await http.get(f"{base}/.well-known/mcp/server-card/nothing.json")
        assert unknown.status_code == 404
        assert f"{base}/.well-known/mcp/server-card/catalog.json" in unknown.json()["message"]


async def test_etag_and_cache_control(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=["dining"])
    async with serve_on_loopback(campus.app, free_port()) as base, httpx.AsyncClient(timeout=30) as http:
        url = f"{base}/.well-known/mcp/server-card.json"
        first = await http.get(url, headers={"Accept": "application/mcp-server-card+json"})
        assert first.headers["content-type"].startswith("application/mcp-server-card+json")
        etag = first.headers["etag"]
        assert etag.startswith('"') and etag.endswith('"'), "a strong ETag"
        assert first.headers["cache-control"] == "public, max-age=3600"
        again = await http.get(url, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == etag
        assert (await http.get(url, headers={"If-None-Match": f'W/{etag}, "other"'})).status_code == 304
        changed = await http.get(url, headers={"If-None-Match": '"not-this-card"'})
        assert changed.status_code == 200 and changed.content == first.content


async def test_a_disabled_family_leaves_every_card(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(disable=["friends"])
    friends_tools = {"list_friends", "friend_busy_times"}
    async with serve_on_loopback(campus.app, free_port()) as base, httpx.AsyncClient(timeout=30) as http:
        card = (await http.get(f"{base}/.well-known/mcp/server-card.json")).json()
        assert not [e.message for e in validator().iter_errors(card)]
        names = {t["name"] for t in card["tools"]}
        assert names == set(campus.registry.tools) and "search_sections" in names
        assert not names & friends_tools
        assert "Friends" not in card["description"]
        assert (await http.get(f"{base}/.well-known/mcp/server-card/friends.json")).status_code == 404
        assert (await http.get(f"{base}/.well-known/mcp/server-card/catalog.json")).status_code == 200
