"""The server cards (issue 14.2, moved where the draft puts them in issue 29 point 4) over real
HTTP: at ``<endpoint>/server-card`` and listed in ``/.well-known/ai-catalog.json``, the earlier
``/.well-known/mcp/`` places as aliases; valid against the schema they name, true to the server
(the names of its tools, prompts and resources, the protocol versions it negotiates), cacheable."""

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
FAMILIES = {
    "canvas",
    "catalog",
    "dining",
    "friends",
    "schedule",
    "settings",
    "prompts",
}  # the families with tools or prompts


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
        answer = await http.get(f"{base}/api/mcp/server-card")
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("application/json")
        card = answer.json()
        alias = await http.get(f"{base}/.well-known/mcp/server-card.json")
        assert alias.content == answer.content and alias.headers["etag"] == answer.headers["etag"]
        # No primitive listing (the draft leaves them to tools/list): 64 KB before, a few now.
        assert not {"tools", "prompts", "resources"} & set(card) and len(answer.content) < 8000
        errors = [e.message for e in check.iter_errors(card)]
        assert not errors, errors
        assert card["$schema"] == SCHEMA_URL
        assert 0 < len(card["description"]) <= 100
        (remote,) = card["remotes"]
        assert remote == {**remote, "type": "streamable-http", "url": f"{base}/api/mcp"}
        named = card["_meta"][card["name"]]
        assert set(named["tools"]) == tools and set(named["prompts"]) == prompts
        assert set(named["resources"]) == resources
        oauth = named["oauth"]
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

        # One card per family endpoint, at its URL + /server-card, each naming what the endpoint serves.
        for family in FAMILIES:
            own = await http.get(f"{base}/api/mcp/{family}/server-card")
            assert own.status_code == 200, (family, own.text)
            family_card = own.json()
            assert not [e.message for e in check.iter_errors(family_card)], family
            assert family_card["remotes"][0]["url"] == f"{base}/api/mcp/{family}"
            assert urlsplit(family_card["remotes"][0]["url"]).scheme == "http"
            assert family_card["name"] != card["name"]
            alias = await http.get(f"{base}/.well-known/mcp/server-card/{family}.json")
            assert alias.content == own.content
            # What the endpoint serves a signed-in student (anonymous tools/list hides the private tools).
            server = campus.deployment.endpoint.servers[f"/api/mcp/{family}"]
            named = family_card["_meta"][family_card["name"]]
            assert set(named["tools"]) == set(server.tools) and set(named["prompts"]) == set(server.prompts), family
        prompts_card = (await http.get(f"{base}/api/mcp/prompts/server-card")).json()
        # The prompts family's endpoint: its own prompts (another family's, Canvas's, are on that family's).
        own_prompts = {name for name in prompts if campus.registry.prompts[name].plugin == "prompts"}
        assert set(prompts_card["_meta"][prompts_card["name"]]["prompts"]) == own_prompts
        if toolbox_definitions() is not None:  # the host has toolbox mode (issue 14.1)
            boxes = (await http.get(f"{base}/api/mcp/toolboxes/server-card")).json()
            assert not [e.message for e in check.iter_errors(boxes)]
            assert set(boxes["_meta"][boxes["name"]]["tools"]) == {
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
        assert f"{base}/api/mcp/catalog/server-card" in unknown.json()["message"]
        unknown = await http.get(f"{base}/api/mcp/apps/server-card")
        assert unknown.status_code == 404 and "/.well-known/ai-catalog.json" in unknown.json()["message"]

        # The AI Catalog lists every card at its URL, in the members of both texts of an entry.
        listed = await http.get(
            f"{base}/.well-known/ai-catalog.json", headers={"Accept": "application/ai-catalog+json"}
        )
        assert listed.headers["content-type"].startswith("application/ai-catalog+json") and listed.headers["etag"]
        catalog = listed.json()
        assert catalog["specVersion"] == "1.0" and catalog["host"]["displayName"]
        urls = {entry["url"] for entry in catalog["entries"]}
        assert urls == {f"{base}/api/mcp/server-card", f"{base}/api/mcp/toolboxes/server-card"} | {
            f"{base}/api/mcp/{family}/server-card" for family in FAMILIES
        }
        for entry in catalog["entries"]:
            assert entry["type"] == entry["mediaType"] == "application/mcp-server-card+json"
            assert entry["identifier"].startswith("urn:air:127.0.0.1:mcp:campus-mcp") and entry["displayName"]
            assert (await http.get(entry["url"])).status_code == 200
        assert len({entry["identifier"] for entry in catalog["entries"]}) == len(urls)


async def test_etag_and_cache_control(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=["dining"])
    async with serve_on_loopback(campus.app, free_port()) as base, httpx.AsyncClient(timeout=30) as http:
        url = f"{base}/api/mcp/server-card"
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
        card = (await http.get(f"{base}/api/mcp/server-card")).json()
        assert not [e.message for e in validator().iter_errors(card)]
        names = set(card["_meta"][card["name"]]["tools"])
        assert names == set(campus.registry.tools) and "search_sections" in names
        assert not names & friends_tools
        assert "Friends" not in card["description"]
        assert (await http.get(f"{base}/api/mcp/friends/server-card")).status_code == 404
        assert (await http.get(f"{base}/.well-known/mcp/server-card/friends.json")).status_code == 404
        assert (await http.get(f"{base}/api/mcp/catalog/server-card")).status_code == 200
        entries = (await http.get(f"{base}/.well-known/ai-catalog.json")).json()["entries"]
        assert not [e for e in entries if "friends" in e["url"]] and len(entries) == len(card_urls(campus))


def card_urls(campus: CampusHarness) -> list[str]:
    """The endpoints the deployment has: the flat one, toolboxes, each family with tools or prompts."""
    from campus_mcp.endpoint import serves_endpoint

    families = [name for name in campus.registry.plugins if serves_endpoint(campus.registry, name)]
    return ["", "toolboxes", *families]
