""" "Tell me when a seat opens" (issue 29, point 2): ``subscriptions/listen`` on the 2026-07-28 wire.

End to end: a campus whose catalog comes from a fake Banner (the recorded TAMU term), served on
loopback with sign-in required; the SDK client lists the templates, reads a full section, listens
to it and to the student's schedule (which holds that section), and a seat refresh that opens a
seat reaches it within seconds as ``notifications/resources/updated`` for both URIs. Then the
limits: a private resource needs its permission, a stream takes so many URIs, a student so many
streams, and a stream ends (gracefully) after its lifetime.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import httpx2
import mcp_types as types
import pytest
from campus_catalog.models import Section, Term
from campus_catalog.sources.fake_banner import FakeBanner, serve_fake_banner
from campus_mcp.oauth.accounts import create_local_student
from campus_mcp.testing import CampusFactory, CampusHarness, TestDatabases, campus_today, private_redis, serve
from campus_mcp.testing.oauth import free_port, parse_forms, serve_on_loopback
from campus_schedule.models import Enrollment
from mcp.client.subscriptions import ListenNotSupportedError
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from sqlalchemy import select, update

from tests.support.endpoints import MODERN, mcp_client, token_for

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"  # ../shared of the project root
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
TERM = "202131"
# A seat refresh's news must reach a listening client within this (the issue: "within seconds").
NEWS_WITHIN_SECONDS = 10.0
PASSWORD = "a long enough password"
BANNER_SETTINGS = {
    "CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP": "true",
    "CAMPUS_MCP_CATALOG_BANNER_REQUESTS_PER_MINUTE": "6000",
    "CAMPUS_MCP_CATALOG_BANNER_PAGE_SIZE": "50",
}


def fixture_sections() -> list[dict[str, Any]]:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE} (../shared/fixtures of the project root)")
    sections: list[dict[str, Any]] = json.loads(BANNER_FIXTURE.read_text())["data"]
    return copy.deepcopy(sections)


@contextlib.asynccontextmanager
async def prepared_campus(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch, port: int, **settings: Any
) -> AsyncIterator[tuple[CampusHarness, FakeBanner, str, str]]:
    """A campus in registration from a fake Banner, one section full, on student1's schedule, to be
    served on ``port``; yields the campus, the fake (a test opens seats in it), that section's CRN
    and the fake's URL."""
    for name in ("BANNER_URL", "BANNER_FILE", "CALENDAR_URL", "CALENDAR_FILE"):
        monkeypatch.delenv(f"CAMPUS_MCP_CATALOG_{name}", raising=False)
    for name, value in BANNER_SETTINGS.items():
        monkeypatch.setenv(name, value)
    fake = FakeBanner(sections=fixture_sections())
    full = fake.sections[0]
    full["seatsAvailable"], full["enrollment"] = 0, full["maximumEnrollment"]  # type: ignore[index]
    crn = str(full["courseReferenceNumber"])
    async with serve_fake_banner(fake) as banner_url:
        monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", banner_url)
        campus = await campus_factory(
            plugins=["catalog", "schedule"], anonymous_access=False, public_url=f"http://127.0.0.1:{port}", **settings
        )
        assert (await campus.run_job("catalog.sections_sync")).outcome == "ok"
        today = campus_today()
        async with campus.sessions() as session:
            # Classes began three days ago: the seat refresh runs (until a week after the start).
            await session.execute(
                update(Term).values(start_date=today - timedelta(days=3), end_date=today + timedelta(days=100))
            )
            student = await create_local_student(session, "student1", PASSWORD)
            section = await session.scalar(select(Section).where(Section.crn == crn))
            assert section is not None and section.seats_available == 0
            session.add(Enrollment(student_id=student.id, term_uid=TERM, section_id=section.id, crn=crn))
            await session.commit()
        yield campus, fake, crn, banner_url


@contextlib.asynccontextmanager
async def registration_campus(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch, **settings: Any
) -> AsyncIterator[tuple[str, CampusHarness, FakeBanner, str]]:
    """:func:`prepared_campus` served in this process; yields the MCP URL first."""
    port = free_port()
    async with (
        prepared_campus(campus_factory, monkeypatch, port, **settings) as (campus, fake, crn, _banner),
        serve_on_loopback(campus.app, port) as base,
    ):
        yield f"{base}/api/mcp", campus, fake, crn


def open_a_seat(fake: FakeBanner, crn: str) -> None:
    for section in fake.sections:
        if str(section["courseReferenceNumber"]) == crn:
            section["seatsAvailable"], section["enrollment"] = 1, section["maximumEnrollment"] - 1  # type: ignore[index]


def answer_of(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    answer: dict[str, Any] = result.structured_content
    return answer


def section_json(result: Any) -> dict[str, Any]:
    (content,) = result.contents
    value: dict[str, Any] = json.loads(content.text)
    return value


async def hear(subscription: Any, wanted: set[str]) -> set[str]:
    heard: set[str] = set()
    with anyio.fail_after(NEWS_WITHIN_SECONDS):
        async for event in subscription:
            if isinstance(event, ResourceUpdated):
                heard.add(event.uri)
            if wanted <= heard:
                return heard
    return heard


async def test_a_listening_student_hears_that_a_seat_opened_after_the_seat_refresh(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with registration_campus(campus_factory, monkeypatch) as (url, campus, fake, crn):
        token = await token_for(campus.deployment, ["schedule:read"])
        section_uri, schedule_uri = f"campus://sections/{TERM}/{crn}", f"campus://me/schedule/{TERM}"
        async with mcp_client(url, token, MODERN) as client:
            templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
            assert {"campus://sections/{term}/{crn}", "campus://me/schedule/{term}"} <= templates
            before = section_json(await client.read_resource(section_uri))
            assert before["seats"]["available"] == 0, before["seats"]
            async with client.listen(resource_subscriptions=[section_uri, schedule_uri]) as subscription:
                assert set(subscription.honored.resource_subscriptions or ()) == {section_uri, schedule_uri}
                open_a_seat(fake, crn)
                run = asyncio.create_task(campus.run_job("catalog.seat_refresh"))
                heard = await hear(subscription, {section_uri, schedule_uri})
                assert (await run).outcome == "ok"
            after = section_json(await client.read_resource(section_uri))
        assert heard == {section_uri, schedule_uri}
        assert after["seats"]["available"] == 1, after["seats"]


async def test_listening_is_bounded_and_my_schedule_needs_its_permission(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with registration_campus(
        campus_factory, monkeypatch, listen_streams_per_student=1, listen_uris_per_stream=2, listen_max_seconds=2
    ) as (url, campus, _fake, crn):
        section_uri, schedule_uri = f"campus://sections/{TERM}/{crn}", f"campus://me/schedule/{TERM}"
        catalog_only = await token_for(campus.deployment, ["catalog"])
        async with mcp_client(url, catalog_only, MODERN) as client:
            with pytest.raises(MCPError, match="schedule:read"):
                async with client.listen(resource_subscriptions=[schedule_uri]):
                    pass
            with pytest.raises(MCPError, match="at most 2 resources"):
                async with client.listen(resource_subscriptions=[section_uri, schedule_uri, "campus://terms"]):
                    pass
            with pytest.raises(MCPError, match="Unknown resource"):
                async with client.listen(resource_subscriptions=["campus://rooms/1"]):
                    pass

        token = await token_for(campus.deployment, ["schedule:read"])
        # The second client is on the toolbox endpoint: the limit counts a student's streams on every endpoint.
        async with mcp_client(url, token, MODERN) as client, mcp_client(f"{url}/toolboxes", token, MODERN) as second:
            async with client.listen(resource_subscriptions=[section_uri]) as subscription:
                with pytest.raises(MCPError, match="listen streams open"):
                    async with second.listen(resource_subscriptions=[section_uri]):
                        pass
                # The lifetime (2 s here) ends the stream gracefully: the loop ends, nothing raised.
                with anyio.fail_after(NEWS_WITHIN_SECONDS):
                    events = [event async for event in subscription]
            assert events == []
            # Its slot is free again once it ended.
            async with second.listen(resource_subscriptions=[section_uri]) as again:
                assert again.honored.resource_subscriptions == [section_uri]


async def test_listen_is_not_on_the_2025_wire(campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    async with registration_campus(campus_factory, monkeypatch) as (url, campus, _fake, crn):
        token = await token_for(campus.deployment, ["schedule:read"])
        async with mcp_client(url, token, "legacy") as client:
            # The SDK client knows a 2025 server has no listen stream ...
            with pytest.raises(ListenNotSupportedError):
                async with client.listen(resource_subscriptions=[f"campus://sections/{TERM}/{crn}"]):
                    pass
        # ... and the server answers a 2025 request for one as before: no such method.
        async with httpx2.AsyncClient(timeout=30) as http:
            answer = await http.post(
                url,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "subscriptions/listen",
                    "params": {"notifications": {"resourceSubscriptions": [f"campus://sections/{TERM}/{crn}"]}},
                },
                headers={
                    "Authorization": f"Bearer {token}",
                    "Accept": "application/json, text/event-stream",
                    "MCP-Protocol-Version": "2025-11-25",
                },
            )
        assert answer.json()["error"]["code"] == -32601, answer.text


def answering_yes() -> Any:
    """The student's "yes" to the host's question; keeps each question it was asked."""
    asked: list[str] = []

    async def callback(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    callback.asked = asked  # type: ignore[attr-defined]
    return callback


async def on_the_dashboard(base: str, term: str) -> tuple[str, Any]:
    """As student1 signed in with their password: the My schedule page of ``term``, and the REST
    twin of list_watches (the dashboard's session works on the REST API)."""
    async with httpx2.AsyncClient(base_url=base, timeout=30, follow_redirects=True) as browser:
        login = await browser.get("/login", params={"next": "/dashboard"})
        data = {f.name: f.value for f in parse_forms(login.text)[-1].fields if f.kind == "hidden"}
        signed_in = await browser.post("/login", data=data | {"username": "student1", "password": PASSWORD})
        assert signed_in.status_code == 200, signed_in.text
        page = await browser.get("/dashboard/schedule", params={"term": term})
        assert page.status_code == 200, page.text
        twin = await browser.get("/api/v1/me/watches", params={"term": term})
        assert twin.status_code == 200, twin.text
        return page.text, twin.json()


async def test_a_seat_watch_brings_the_news_to_list_watches_my_courses_rest_and_the_dashboard(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with registration_campus(campus_factory, monkeypatch) as (url, campus, fake, crn):
        base = url.removesuffix("/api/mcp")
        token = await token_for(campus.deployment, ["schedule:read", "schedule:write"])
        yes = answering_yes()
        async with mcp_client(url, token, MODERN, elicitation_callback=yes) as client:
            watched = answer_of(await client.call_tool("watch_section", {"term": TERM, "crn": crn}))
            again = answer_of(await client.call_tool("watch_section", {"term": TERM, "crn": crn}))
            full = answer_of(await client.call_tool("list_watches", {}))
            open_a_seat(fake, crn)
            assert (await campus.run_job("catalog.seat_refresh")).outcome == "ok"
            news = answer_of(await client.call_tool("list_watches", {"term": TERM}))
            courses = answer_of(await client.call_tool("my_courses", {"term": TERM}))
            page, twin = await on_the_dashboard(base, TERM)
            stopped = answer_of(await client.call_tool("unwatch_section", {"term": TERM, "crn": crn}))
        # Asked once: the second watch of the same section changes nothing and asks nothing.
        assert len(yes.asked) == 2 and f"CRN {crn}" in yes.asked[0] and "0 open now" in yes.asked[0], yes.asked
        assert yes.asked[1].startswith("Stop watching"), yes.asked
        assert (watched["result"], again["result"]) == ("changed", "unchanged")
        assert [(w["crn"], w["seat_open"]) for w in full["watches"]] == [(crn, False)]
        assert [(w["crn"], w["seat_open"], w["seats_available"]) for w in news["watches"]] == [(crn, True, 1)]
        assert [(w["crn"], w["seat_open"]) for w in courses["seat_watches"]] == [(crn, True)]
        # Issue 37, point 8: when the watch began, on the campus's clock with its 12-hour text.
        since = datetime.fromisoformat(full["watches"][0]["watching_since"])
        local = since.astimezone(ZoneInfo(campus.settings.timezone))
        assert since.utcoffset() == local.utcoffset()
        assert full["watches"][0]["watching_since_text"].startswith(f"{local:%A, %B} {local.day}, ")
        assert twin["watches"] == news["watches"]  # the REST twin: the same watches (the advisory is the tool's)
        assert "Seat watches" in page and "Seat open now" in page and f"CRN {crn}" in page
        assert stopped["result"] == "changed" and stopped["watches"] == []


async def test_watching_needs_a_signed_in_student_with_schedule_write(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with registration_campus(campus_factory, monkeypatch) as (url, campus, _fake, crn):
        read_only = await token_for(campus.deployment, ["schedule:read"])
        async with mcp_client(url, read_only, MODERN) as client:
            refused = await client.call_tool("watch_section", {"term": TERM, "crn": crn})
            unknown = await client.call_tool("list_watches", {"term": "Summer 1999"})
        assert refused.is_error and "schedule:write" in refused.content[0].text  # type: ignore[union-attr]
        assert unknown.is_error and "Summer 1999" in unknown.content[0].text  # type: ignore[union-attr]


async def test_two_workers_hear_a_seat_refresh_run_elsewhere_through_redis(
    campus_factory: CampusFactory,
    campus_databases: TestDatabases,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """``campus-mcp serve --workers 2`` on PostgreSQL with a private Redis; the seat refresh runs in
    this process (as ``campus-mcp worker`` would): only Redis can carry its news to the worker
    holding the stream. Two students' clients listen, so both workers are likely to hold one."""
    if not campus_databases.postgres:
        pytest.skip("several workers need PostgreSQL (CAMPUS_MCP_TEST_DATABASE_URL)")
    port = free_port()
    with private_redis(tmp_path / "redis") as (redis_url, _redis):
        async with prepared_campus(campus_factory, monkeypatch, port, redis_url=redis_url) as (
            campus,
            fake,
            crn,
            banner_url,
        ):
            env = {
                "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url,
                "CAMPUS_MCP_SECRET_KEY": campus.settings.secret_key.get_secret_value(),
                "CAMPUS_MCP_REDIS_URL": redis_url,
                "CAMPUS_MCP_PLUGINS": "catalog,schedule",
                "CAMPUS_MCP_ANONYMOUS_ACCESS": "false",
                "CAMPUS_MCP_SCHEDULER": "false",
                "CAMPUS_MCP_RATE_LIMITS": "false",
                "CAMPUS_MCP_PUBLIC_URL": f"http://127.0.0.1:{port}",
                "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
                "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
                "CAMPUS_MCP_CATALOG_BANNER_URL": banner_url,
                **BANNER_SETTINGS,
            }
            token = await token_for(campus.deployment, ["schedule:read"])
            section_uri = f"campus://sections/{TERM}/{crn}"
            with contextlib.ExitStack() as stack:
                # Started in a thread: this loop serves the fake Banner meanwhile.
                served = await asyncio.to_thread(
                    stack.enter_context,
                    serve(env, port=port, log_path=tmp_path / "serve.log", args=["--no-prepare", "--workers", "2"]),
                )
                async with (
                    mcp_client(served.mcp_url, token, MODERN) as first,
                    mcp_client(served.mcp_url, token, MODERN) as second,
                    first.listen(resource_subscriptions=[section_uri]) as one,
                    second.listen(resource_subscriptions=[section_uri]) as other,
                ):
                    open_a_seat(fake, crn)
                    assert (await campus.run_job("catalog.seat_refresh")).outcome == "ok"
                    heard = await asyncio.gather(hear(one, {section_uri}), hear(other, {section_uri}))
                    after = section_json(await first.read_resource(section_uri))
            assert heard == [{section_uri}, {section_uri}], served.log.read_text()[-3000:]
            assert after["seats"]["available"] == 1


async def test_a_quiet_listen_stream_gets_keep_alives(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A raw 2026-07-28 listen: the acknowledgment first, then an SSE comment while nothing changes,
    so a proxy's idle timeout does not cut a stream that waits for a seat (the SDK sends one every 15 s)."""
    async with registration_campus(campus_factory, monkeypatch) as (url, campus, _fake, crn):
        token = await token_for(campus.deployment, ["schedule:read"])
        envelope = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        body = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "subscriptions/listen",
            "params": {
                "notifications": {"resourceSubscriptions": [f"campus://sections/{TERM}/{crn}"]},
                "_meta": envelope,
            },
        }
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "subscriptions/listen",
        }
        seen: list[str] = []
        async with (
            httpx2.AsyncClient(timeout=60) as http,
            http.stream("POST", url, json=body, headers=headers) as stream,
        ):
            assert stream.headers["content-type"].startswith("text/event-stream")
            with anyio.fail_after(30):
                async for line in stream.aiter_lines():
                    seen.append(line)
                    if line.startswith(": ping"):
                        break
        acknowledged = [
            line for line in seen if line.startswith("data:") and "notifications/subscriptions/acknowledged" in line
        ]
        assert acknowledged and seen.index(acknowledged[0]) < seen.index(seen[-1]), seen
        assert seen[-1].startswith(": ping"), seen
