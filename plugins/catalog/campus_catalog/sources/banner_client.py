"""The Banner 9 Student Registration Self-Service client: public class-search pages only.

Invariant: **every request goes through :meth:`BannerClient.request`, which allows only the
read endpoints in :data:`BANNER_READ_ENDPOINTS`, by method and name.** Banner's self-service
also registers and drops classes, and its endpoints are plain names under the same base URL,
so "GET only" is not a rule that holds: selecting a term for a search is a POST and is a read,
while other GETs change state. The allowlist is the rule. Add an endpoint only after reading
what it does upstream. ``tests/test_banner_client.py`` holds the choke point.

Every request waits its turn on a shared :class:`~campus_catalog.sources.pacing.Pacer` and has a
timeout. No request is retried inside a run: a timeout or 5xx raises
:class:`~campus_catalog.sources.errors.UpstreamUnavailable`, and the next scheduled run tries again.

Banner remembers the selected term in the session (cookies), and a second search in the same
session returns the first one's results unless the form is reset. This client uses one session
per term instead of the reset call, which keeps the allowlist to reads.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, Self

import httpx
from campus_mcp import DocumentLimit, DocumentTooLarge, read_document

from campus_catalog.catalog_settings import banner_limit
from campus_catalog.sources.errors import UnreadableResponse, UpstreamRefusedRequest, UpstreamUnavailable
from campus_catalog.sources.pacing import Pacer, shared_pacer

BANNER_READ_ENDPOINTS: Final[frozenset[tuple[str, str]]] = frozenset(
    {
        ("GET", "classSearch/getTerms"),
        # Selects the term for this session's searches: a POST, but a read (it changes nothing
        # but the session's own search form), so it is on the list by name.
        ("POST", "term/search"),
        ("GET", "searchResults/searchResults"),
        ("GET", "searchResults/getFacultyMeetingTimes"),
        ("GET", "searchResults/getEnrollmentInfo"),
        ("GET", "searchResults/getSectionPrerequisites"),
        ("GET", "searchResults/getCourseDescription"),
    }
)

BANNER_LIMIT: Final = banner_limit()
MAX_PAGE_SIZE: Final = 500  # Banner caps pageMaxSize at 500 whatever is asked
USER_AGENT: Final = "campus-mcp catalog sync (read-only class search)"


@dataclass(frozen=True)
class BannerTerm:
    code: str
    description: str


class BannerClient:
    """One Banner session. Use as ``async with BannerClient(...) as banner``."""

    def __init__(
        self,
        base_url: str,
        *,
        requests_per_minute: float,
        timeout_seconds: float,
        page_size: int = MAX_PAGE_SIZE,
        pacer: Pacer | None = None,
        limit: DocumentLimit = BANNER_LIMIT,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.page_size = min(page_size, MAX_PAGE_SIZE)
        # Each answer is read up to this (campus_mcp.read_document), never whole.
        self.limit = limit
        self._timeout = timeout_seconds
        self._pacer_arg = pacer
        self._requests_per_minute = requests_per_minute
        self._http: httpx.AsyncClient | None = None
        # Banner's own pages send this id with every search; some instances ignore a search without it.
        self._session_id = secrets.token_hex(9)
        self._selected_term: str | None = None

    async def __aenter__(self) -> Self:
        self.pacer = self._pacer_arg or shared_pacer(self.base_url, self._requests_per_minute)
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(self._timeout),
            follow_redirects=False,  # a redirect goes to a sign-in page or another host: neither is a read
            headers={"User-Agent": USER_AGENT, "Accept": "application/json, text/html;q=0.9"},
        )
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    # -- the choke point -------------------------------------------------------------------

    async def request(
        self,
        method: str,
        endpoint: str,
        *,
        params: Mapping[str, str | int] | None = None,
        form: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send one request to Banner, if it is on the read allowlist. The only way out."""
        if (method, endpoint) not in BANNER_READ_ENDPOINTS:
            raise UpstreamRefusedRequest(
                f"{method} {endpoint!r} is not one of the Banner read endpoints this client may call"
            )
        if self._http is None:
            raise RuntimeError("use BannerClient as `async with BannerClient(...) as banner`")
        await self.pacer.wait_turn()
        url = f"{self.base_url}/{endpoint}"
        try:
            response = await read_document(self._http, method, url, params=params, data=form, limit=self.limit)
        except DocumentTooLarge as exc:
            raise UnreadableResponse(str(exc), kind="too_large") from exc
        except httpx.TimeoutException as exc:
            raise UpstreamUnavailable(f"{endpoint} timed out after {self._timeout:g} s", kind="timeout") from exc
        except httpx.TransportError as exc:
            raise UpstreamUnavailable(f"{endpoint} could not be reached: {type(exc).__name__}", kind="network") from exc
        if response.status_code >= 500:
            raise UpstreamUnavailable(f"{endpoint} answered HTTP {response.status_code}", kind="server")
        if response.status_code >= 300:
            raise UnreadableResponse(f"{endpoint} answered HTTP {response.status_code}", kind="client")
        return response

    async def _json(self, method: str, endpoint: str, **kwargs: Any) -> Any:
        response = await self.request(method, endpoint, **kwargs)
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            # Banner answers an expired session with its HTML sign-in page and status 200.
            raise UnreadableResponse(f"{endpoint} did not answer with JSON", kind="parse") from exc

    # -- the read endpoints ----------------------------------------------------------------

    async def terms(self, *, max_terms: int = 30) -> list[BannerTerm]:
        data = await self._json("GET", "classSearch/getTerms", params={"searchTerm": "", "offset": 1, "max": max_terms})
        if not isinstance(data, list):
            raise UnreadableResponse("classSearch/getTerms did not answer with a list", kind="parse")
        terms = []
        for item in data:
            if isinstance(item, dict) and isinstance(item.get("code"), str):
                terms.append(BannerTerm(code=item["code"], description=str(item.get("description") or item["code"])))
        return terms

    async def select_term(self, term: str) -> None:
        await self.request(
            "POST",
            "term/search",
            params={"mode": "search"},
            form={"term": term, "studyPath": "", "studyPathText": "", "startDatepicker": "", "endDatepicker": ""},
        )
        self._selected_term = term

    async def search_page(self, term: str, offset: int, *, subject: str | None = None) -> dict[str, Any]:
        """One page of ``searchResults/searchResults``: the raw JSON object."""
        if self._selected_term != term:
            await self.select_term(term)
        params: dict[str, str | int] = {
            "txt_term": term,
            "startDatepicker": "",
            "endDatepicker": "",
            "uniqueSessionId": self._session_id,
            "pageOffset": offset,
            "pageMaxSize": self.page_size,
            "sortColumn": "subjectDescription",
            "sortDirection": "asc",
        }
        if subject:
            params["txt_subject"] = subject
        page = await self._json("GET", "searchResults/searchResults", params=params)
        if not isinstance(page, dict):
            raise UnreadableResponse(f"searchResults page at offset {offset} is not a JSON object", kind="parse")
        return page

    async def search_pages(self, term: str, *, subject: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """Every page of one term's sections, ``page_size`` at a time, until ``totalCount``."""
        offset = 0
        while True:
            page = await self.search_page(term, offset, subject=subject)
            data = page.get("data") or []
            total = page.get("totalCount")
            yield page
            if not isinstance(data, list) or not data:
                return
            offset += len(data)
            if not isinstance(total, int) or offset >= total:
                return

    async def faculty_meeting_times(self, term: str, crn: str) -> dict[str, Any]:
        data = await self._json(
            "GET",
            "searchResults/getFacultyMeetingTimes",
            params={"term": term, "courseReferenceNumber": crn},
        )
        if not isinstance(data, dict):
            raise UnreadableResponse(f"getFacultyMeetingTimes of CRN {crn} is not a JSON object", kind="parse")
        return data

    async def enrollment_info(self, term: str, crn: str) -> str:
        """Seats and waitlist of one section, as Banner's HTML fragment."""
        response = await self.request(
            "GET", "searchResults/getEnrollmentInfo", params={"term": term, "courseReferenceNumber": crn}
        )
        return response.text

    async def section_prerequisites(self, term: str, crn: str) -> str:
        response = await self.request(
            "GET", "searchResults/getSectionPrerequisites", params={"term": term, "courseReferenceNumber": crn}
        )
        return response.text

    async def course_description(self, term: str, crn: str) -> str:
        response = await self.request(
            "GET", "searchResults/getCourseDescription", params={"term": term, "courseReferenceNumber": crn}
        )
        return response.text
