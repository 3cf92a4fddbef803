"""A good Canvas citizen: pages followed by ``Link`` and bounded, Canvas's rate limit respected, few
requests per call and answers kept a short while, and Canvas slow, down, huge or odd answered as a
clear tool error by kind, never a stack trace; no token ever leaves for another origin."""

from __future__ import annotations

import re
from typing import Any

import pytest
from campus_canvas import canvas_http
from campus_mcp.testing import CampusFactory, CampusHarness, StudentBrowser

from .conftest import WEEK, canvas_campus, connect
from .fake_canvas import FakeCanvas, serve_fake_canvas

pytestmark = pytest.mark.asyncio(loop_scope="session")
SCOPE = ["canvas:read"]
METRICS_TOKEN = "scraper-token-of-this-test"


async def connected_campus(
    campus_factory: CampusFactory, canvas: FakeCanvas, host: dict[str, Any] | None = None, **settings: Any
) -> CampusHarness:
    campus = await canvas_campus(campus_factory, canvas, canvas=settings, **(host or {}))
    async with campus.rest() as client:
        await connect(await StudentBrowser(client).sign_in("student1"), canvas)
    canvas.seen.clear()
    return campus


async def due_this_week(campus: CampusHarness) -> Any:
    principal = await campus.student_principal("student1", scopes=SCOPE)
    return await campus.call("canvas_due_work", WEEK, principal=principal)


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    text: str = result.content[0].text
    assert "Traceback" not in text and "httpx" not in text and "Exception" not in text
    return text


def planner_requests(canvas: FakeCanvas) -> list[Any]:
    return [s for s in canvas.api_requests() if s.path == "/api/v1/planner/items"]


async def test_pages_are_followed_by_their_link_header_and_bounded(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await connected_campus(campus_factory, canvas, cache_seconds=0)
    canvas.max_per_page = 2  # 10 planner items in the week: 5 pages
    everything = await due_this_week(campus)
    assert everything.structured_content["count"] == 9 and everything.structured_content["more"] is False
    pages = planner_requests(canvas)
    assert [p.param("page") for p in pages] == [[], ["2"], ["3"], ["4"], ["5"]]
    # Each next page is Canvas's own link, with the window it was asked for.
    assert all(p.param("start_date") == ["2030-09-09T04:00:00Z"] for p in pages)

    bounded = await connected_campus(campus_factory, canvas, cache_seconds=0, max_pages=2)
    first_pages = await due_this_week(bounded)
    assert len(planner_requests(canvas)) == 2
    assert first_pages.structured_content["more"] is True and first_pages.structured_content["count"] == 4


async def test_a_rate_limited_request_is_retried_after_a_back_off_then_refused_in_words(
    campus_factory: CampusFactory, canvas: FakeCanvas, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(canvas_http, "BACKOFF_SECONDS", (0.01, 0.02))  # Canvas's are a second and more
    campus = await connected_campus(campus_factory, canvas, cache_seconds=0)
    canvas.rate_limited = 2  # "403 Forbidden (Rate Limit Exceeded)" twice, then Canvas answers
    answered = await due_this_week(campus)
    assert not answered.is_error and answered.structured_content["count"] == 9
    assert len(planner_requests(canvas)) == 3

    canvas.seen.clear()
    canvas.rate_limited = 10
    refused = error_text(await due_this_week(campus))
    assert "slow down" in refused and "Try again in a minute" in refused
    assert len(planner_requests(canvas)) == 3  # the first try and one after each back-off


async def test_a_low_rate_limit_bucket_makes_the_next_request_wait(
    campus_factory: CampusFactory, canvas: FakeCanvas, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(canvas_http, "LOW_BUCKET_WAIT", 0.01)
    campus = await connected_campus(campus_factory, canvas, host={"metrics_token": METRICS_TOKEN}, cache_seconds=0)

    async def waited() -> float:
        # What an operator reads on /metrics: the requests that waited for Canvas's bucket to refill.
        async with campus.rest() as client:
            metrics = (await client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})).text
        found = re.search(r'^campus_mcp_canvas_requests_total\{outcome="waited_for_rate_limit"\} (\S+)$', metrics, re.M)
        return float(found.group(1)) if found else 0.0

    canvas.remaining, canvas.cost = 600.0, 2.0  # plenty left: nobody waits
    before = await waited()
    await due_this_week(campus)
    assert await waited() == before
    # The planner's answer says 38 left (X-Rate-Limit-Remaining), under the low mark: the course
    # list asked right after it waits first.
    canvas.remaining, canvas.cost = 40.0, 2.0
    answered = await due_this_week(campus)
    assert not answered.is_error and await waited() == before + 1


async def test_a_slow_canvas_is_a_timeout_in_words(campus_factory: CampusFactory, canvas: FakeCanvas) -> None:
    campus = await connected_campus(campus_factory, canvas, timeout_seconds=0.3)
    canvas.delay_seconds = 2.0
    text = error_text(await due_this_week(campus))
    assert "Canvas did not answer within 0.3 seconds" in text and "try again in a few minutes" in text


async def test_canvas_down_or_unreachable_is_named_and_the_rest_twin_answers_503(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await connected_campus(campus_factory, canvas, cache_seconds=0)
    canvas.fail["/api/v1/planner/items"] = 503
    assert "Canvas answered with an error (HTTP 503)" in error_text(await due_this_week(campus))
    async with campus.rest() as client:
        browser = await StudentBrowser(client).sign_in("student1")
        twin = await browser.get("/api/v1/me/canvas/due_work", params=WEEK)
    assert twin.status_code == 503 and "HTTP 503" in twin.json()["message"]

    # A Canvas that stopped listening: connected while it ran, asked after it went.
    async with serve_fake_canvas(FakeCanvas()) as gone:
        elsewhere = await connected_campus(campus_factory, gone)
    assert "Canvas could not be reached" in error_text(await due_this_week(elsewhere))


async def test_a_huge_page_is_refused_unread(campus_factory: CampusFactory, canvas: FakeCanvas) -> None:
    campus = await connected_campus(campus_factory, canvas)
    canvas.huge = True  # a page of more than 4 MB
    text = error_text(await due_this_week(campus))
    assert "more than 4 MB for one page" in text and "Ask for a shorter window or one course" in text


async def test_a_next_link_to_another_origin_is_not_followed_and_gets_no_token(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await connected_campus(campus_factory, canvas, cache_seconds=0)
    async with serve_fake_canvas(FakeCanvas()) as other:
        canvas.max_per_page = 2
        canvas.foreign_next = other.origin
        text = error_text(await due_this_week(campus))
        assert other.seen == []
    assert "next page on another address" in text
    assert len(planner_requests(canvas)) == 1


async def test_answers_are_kept_per_student_for_a_short_while(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    kept = await connected_campus(campus_factory, canvas)
    first = await due_this_week(kept)
    second = await due_this_week(kept)
    assert first.structured_content == second.structured_content
    assert len(planner_requests(canvas)) == 1  # the second answer came from the cache

    fresh = await connected_campus(campus_factory, canvas, cache_seconds=0)
    await due_this_week(fresh)
    await due_this_week(fresh)
    assert len(planner_requests(canvas)) == 2
