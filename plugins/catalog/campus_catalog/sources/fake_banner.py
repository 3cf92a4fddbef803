"""A fake Banner 9 class search on loopback, for tests and for trying the importer offline.

It serves saved ``searchResults`` sections the way Banner does: a term must be selected with
``POST term/search`` in the session (a cookie) before a search returns anything, pages follow
``pageOffset``/``pageMaxSize`` capped at 500, and the per-section pages answer by CRN. Faults
are switched on per test: a status for one endpoint (``fail``), a 500 from a page offset on
(``fail_from_offset``), a slow answer (``delay_seconds``), an answer held until the test lets it
go (``held``, an event of the test's loop). Every request that reaches it is
recorded with its arrival time, so a test can see the pacing and that a refused request never
left the client.

It listens only on 127.0.0.1 and is not part of a deployment.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import uvicorn
from litestar import Litestar, Request, Response, route
from litestar.enums import HttpMethod
from litestar.params import FromPath

BASE_PATH = "/StudentRegistrationSsb/ssb"


@dataclasses.dataclass(frozen=True)
class SeenRequest:
    method: str
    endpoint: str
    query: dict[str, str]
    at: float


@dataclasses.dataclass
class FakeBanner:
    """The fake's data and switches. ``sections`` are raw Banner section objects."""

    sections: Sequence[Mapping[str, Any]]
    terms: Sequence[tuple[str, str]] = ()
    fail: dict[str, int] = dataclasses.field(default_factory=dict)
    fail_from_offset: int | None = None
    delay_seconds: float = 0.0
    # Set by a test: every request waits for it. A test that checks "the answer came before Banner
    # did" holds Banner this way, not with a delay a loaded machine can outlast.
    held: asyncio.Event | None = None
    # CRN -> the HTML of getSectionPrerequisites (Banner's table); others have none.
    prerequisites: dict[str, str] = dataclasses.field(default_factory=dict)
    # CRN -> the text of getCourseDescription; others say "<title>: the course description."
    descriptions: dict[str, str] = dataclasses.field(default_factory=dict)
    # Called after each search page is served, with the offset: a test changes the list mid-paging.
    after_page: Callable[[FakeBanner, int], None] | None = None
    seen: list[SeenRequest] = dataclasses.field(default_factory=list)
    _sessions: dict[str, str] = dataclasses.field(default_factory=dict)

    def term_codes(self) -> list[tuple[str, str]]:
        if self.terms:
            return list(self.terms)
        found: dict[str, str] = {}
        for section in self.sections:
            found.setdefault(str(section["term"]), str(section.get("termDesc") or section["term"]))
        return sorted(found.items(), reverse=True)

    def endpoints_seen(self) -> list[str]:
        return [f"{r.method} {r.endpoint}" for r in self.seen]

    async def answer(self, request: Request[Any, Any, Any], endpoint: str) -> Response[Any]:
        query = {k: str(v) for k, v in request.query_params.items()}
        self.seen.append(SeenRequest(request.method, endpoint, query, time.monotonic()))
        if self.delay_seconds:
            await asyncio.sleep(self.delay_seconds)
        if self.held is not None:
            await self.held.wait()
        if endpoint in self.fail:
            return Response("upstream fault (fake)", status_code=self.fail[endpoint], media_type="text/plain")
        session = request.cookies.get("JSESSIONID")
        if endpoint == "classSearch/getTerms":
            return Response([{"code": c, "description": d} for c, d in self.term_codes()])
        if endpoint == "term/search" and request.method == "POST":
            form = await request.form()
            session = session or secrets.token_hex(8)
            self._sessions[session] = str(form.get("term", ""))
            response: Response[Any] = Response({"fwdURL": "/classSearch/classSearch"})
            response.set_cookie("JSESSIONID", session, path=BASE_PATH, httponly=True)
            return response
        if endpoint == "searchResults/searchResults":
            return Response(self._search(query, self._sessions.get(session or "")))
        crn = query.get("courseReferenceNumber", "")
        section = next((s for s in self.sections if s["courseReferenceNumber"] == crn), None)
        if endpoint == "searchResults/getFacultyMeetingTimes":
            return Response({"fmt": list(section["meetingsFaculty"]) if section else []})
        if endpoint == "searchResults/getEnrollmentInfo":
            return Response(enrollment_html(section) if section else "", media_type="text/html")
        if endpoint == "searchResults/getSectionPrerequisites":
            table = self.prerequisites.get(crn, "No prerequisite information available.")
            return Response(f"<h3>Catalog Prerequisites</h3>{table}", media_type="text/html")
        if endpoint == "searchResults/getCourseDescription":
            title = section["courseTitle"] if section else "this course"
            text = self.descriptions.get(crn, f"{title}: the course description.")
            return Response(description_html(text), media_type="text/html")
        # Anything else would change or reveal something on a real Banner: the client must never get here.
        return Response("not a class-search page (fake)", status_code=404, media_type="text/plain")

    def _search(self, query: Mapping[str, str], selected_term: str | None) -> dict[str, Any]:
        term = query.get("txt_term", "")
        if not selected_term or selected_term != term:
            # What Banner does without a selected term: a successful-looking empty answer.
            return {"success": False, "totalCount": 0, "data": None, "pageOffset": 0, "pageMaxSize": 10}
        offset = int(query.get("pageOffset", "0"))
        size = min(int(query.get("pageMaxSize", "10")), 500)
        rows = [s for s in self.sections if s["term"] == term]
        if query.get("txt_subject"):
            rows = [s for s in rows if s["subject"] == query["txt_subject"]]
        if self.fail_from_offset is not None and offset >= self.fail_from_offset:
            raise _Fault()
        if self.after_page is not None:
            page_rows = rows[offset : offset + size]
            self.after_page(self, offset)
            return {"success": True, "totalCount": len(rows), "data": page_rows, "pageOffset": offset}
        return {
            "success": True,
            "totalCount": len(rows),
            "data": rows[offset : offset + size],
            "pageOffset": offset,
            "pageMaxSize": size,
            "sectionsFetchedCount": len(rows),
            "pathMode": "search",
        }


class _Fault(Exception):
    """A 500 in the middle of a paged search."""


def enrollment_html(section: Mapping[str, Any]) -> str:
    rows = [
        ("Enrollment Actual", section.get("enrollment")),
        ("Enrollment Maximum", section.get("maximumEnrollment")),
        ("Enrollment Seats Available", section.get("seatsAvailable")),
        ("Waitlist Capacity", section.get("waitCapacity")),
        ("Waitlist Actual", section.get("waitCount")),
        ("Waitlist Seats Available", section.get("waitAvailable")),
    ]
    return "\n".join(
        f'<span class="status-bold">{label}:</span> <span dir="ltr">{value}</span><br/>' for label, value in rows
    )


def description_html(text: str, section_note: str | None = None) -> str:
    """Banner 9's getCourseDescription fragment: the course's description, then the section's
    own note when it has one ("Section information text:")."""
    note = f"<br/>\n        <b>Section information text:</b><br/>\n        {section_note}" if section_note else ""
    return f'<section aria-labelledby="courseDescription">\n    {text}{note}\n</section>'


def build_app(fake: FakeBanner) -> Litestar:
    @route(f"{BASE_PATH}/{{endpoint:path}}", http_method=[HttpMethod.GET, HttpMethod.POST])
    async def banner_page(request: Request[Any, Any, Any], endpoint: FromPath[str]) -> Response[Any]:
        try:
            return await fake.answer(request, endpoint.strip("/"))
        except _Fault:
            return Response("Internal Server Error (fake)", status_code=500, media_type="text/plain")

    return Litestar(route_handlers=[banner_page], debug=False, logging_config=None)


@contextlib.asynccontextmanager
async def serve_on_loopback(app: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on 127.0.0.1 (a free port) in this event loop; yields its origin."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()  # start-up failed: raise its error
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@contextlib.asynccontextmanager
async def serve_fake_banner(fake: FakeBanner) -> AsyncIterator[str]:
    """Serve ``fake`` on 127.0.0.1 (a free port) and yield its Banner base URL."""
    async with serve_on_loopback(build_app(fake)) as origin:
        yield f"{origin}{BASE_PATH}"
