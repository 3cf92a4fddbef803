"""The Banner client against a fake Banner on loopback: paging, pacing, timeouts, faults, allowlist."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from campus_catalog.sources.banner_client import BANNER_READ_ENDPOINTS, BannerClient
from campus_catalog.sources.errors import UnreadableResponse, UpstreamRefusedRequest, UpstreamUnavailable
from campus_catalog.sources.fake_banner import FakeBanner, serve_fake_banner
from campus_catalog.sources.pacing import Pacer


async def enrollment_info(banner: BannerClient, term: str, crn: str) -> str:
    """Seats and waitlist of one section, as Banner's HTML fragment: a page of Banner's that the
    catalog does not read, asked for here through the client's own paced request."""
    response = await banner.request(
        "GET", "searchResults/getEnrollmentInfo", params={"term": term, "courseReferenceNumber": crn}
    )
    return response.text


FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
BANNER_FIXTURE = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"


def fixture_sections() -> list[dict[str, Any]]:
    if not BANNER_FIXTURE.is_file():
        pytest.skip(f"the Banner fixture is not at {BANNER_FIXTURE} (../shared/fixtures of the project root)")
    sections: list[dict[str, Any]] = json.loads(BANNER_FIXTURE.read_text())["data"]
    return sections


def client(base_url: str, **options: Any) -> BannerClient:
    values: dict[str, Any] = {"requests_per_minute": 6000, "timeout_seconds": 5, "pacer": Pacer(6000)}
    values.update(options)
    return BannerClient(base_url, **values)


async def test_pages_through_every_section_of_a_term() -> None:
    fake = FakeBanner(sections=fixture_sections())
    async with serve_fake_banner(fake) as url, client(url, page_size=50) as banner:
        terms = await banner.terms()
        assert [t.code for t in terms] == ["202131"]
        crns = [s["courseReferenceNumber"] async for page in banner.search_pages("202131") for s in page["data"]]
    assert len(crns) == 157 == len(set(crns))
    searches = [r for r in fake.seen if r.endpoint == "searchResults/searchResults"]
    assert [r.query["pageOffset"] for r in searches] == ["0", "50", "100", "150"]
    assert all(r.query["pageMaxSize"] == "50" for r in searches)
    # The term is selected (a POST, a read) before the first search, in the same session.
    assert fake.endpoints_seen()[:3] == [
        "GET classSearch/getTerms",
        "POST term/search",
        "GET searchResults/searchResults",
    ]


async def test_page_size_is_capped_at_banners_500() -> None:
    fake = FakeBanner(sections=fixture_sections())
    async with serve_fake_banner(fake) as url, client(url, page_size=2000) as banner:
        pages = [page async for page in banner.search_pages("202131")]
    assert len(pages) == 1 and len(pages[0]["data"]) == 157
    assert fake.seen[-1].query["pageMaxSize"] == "500"


async def test_requests_are_paced_evenly() -> None:
    fake = FakeBanner(sections=fixture_sections())
    # 300 a minute is one request every 0.2 s. The first request opens the connection, so it is
    # left out; arrivals jitter a little either way, so the span of the rest is what is held.
    async with serve_fake_banner(fake) as url, client(url, requests_per_minute=300, pacer=Pacer(300)) as banner:
        for crn in ("45404", "45405", "45406", "45407", "45408", "45409"):
            await enrollment_info(banner, "202131", crn)
    arrivals = [r.at for r in fake.seen][1:]
    assert len(arrivals) == 5
    assert arrivals[-1] - arrivals[0] >= 4 * 0.2 - 0.05, arrivals


async def test_pacer_hands_out_evenly_spaced_slots() -> None:
    now = [100.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    pacer = Pacer(30, clock=lambda: now[0], sleep=sleep)  # Banner's safe pace: one every 2 s
    for _ in range(4):
        await pacer.wait_turn()
    assert slept == [2.0, 2.0, 2.0]
    now[0] += 10  # an idle pause earns no burst afterwards
    await pacer.wait_turn()
    await pacer.wait_turn()
    assert slept[-1] == 2.0 and len(slept) == 4


async def test_a_slow_banner_times_out_and_is_retried_next_run() -> None:
    fake = FakeBanner(sections=fixture_sections(), delay_seconds=1.0)
    async with serve_fake_banner(fake) as url, client(url, timeout_seconds=0.2) as banner:
        with pytest.raises(UpstreamUnavailable) as caught:
            await banner.terms()
    assert caught.value.kind == "timeout" and caught.value.retry
    assert "timed out after 0.2 s" in caught.value.record()


async def test_a_500_in_the_middle_of_paging_stops_the_term_with_a_retryable_error() -> None:
    fake = FakeBanner(sections=fixture_sections(), fail_from_offset=100)
    pages: list[dict[str, Any]] = []
    async with serve_fake_banner(fake) as url, client(url, page_size=50) as banner:
        with pytest.raises(UpstreamUnavailable) as caught:
            async for page in banner.search_pages("202131"):
                pages.append(page)
    assert [len(p["data"]) for p in pages] == [50, 50]
    assert caught.value.kind == "server" and caught.value.retry
    assert "HTTP 500" in str(caught.value)


async def test_a_sign_in_page_instead_of_json_is_a_final_parse_failure() -> None:
    fake = FakeBanner(sections=fixture_sections(), fail={"classSearch/getTerms": 200})
    async with serve_fake_banner(fake) as url, client(url) as banner:
        with pytest.raises(UnreadableResponse) as caught:
            await banner.terms()
    assert caught.value.kind == "parse" and not caught.value.retry


@pytest.mark.parametrize(
    ("method", "endpoint"),
    [
        ("POST", "registration/submitRegistration/batch"),  # registers a student: never
        ("GET", "classRegistration/classRegistration"),
        ("POST", "classSearch/resetDataForm"),  # harmless upstream, but not read by name
        ("GET", "term/search"),  # on the list as a POST only
        ("POST", "searchResults/searchResults"),  # on the list as a GET only
        ("GET", "searchResults/../registration/getRegistrationEvents"),
        ("GET", "https://evil.example/searchResults/searchResults"),
        ("DELETE", "searchResults/getEnrollmentInfo"),
    ],
)
async def test_the_allowlist_refuses_any_other_request_before_it_leaves(method: str, endpoint: str) -> None:
    fake = FakeBanner(sections=fixture_sections())
    async with serve_fake_banner(fake) as url, client(url) as banner:
        with pytest.raises(UpstreamRefusedRequest) as caught:
            await banner.request(method, endpoint)
    assert fake.seen == []
    assert caught.value.kind == "refused" and not caught.value.retry


def test_the_allowlist_is_exactly_the_class_search_reads() -> None:
    assert sorted(BANNER_READ_ENDPOINTS) == [
        ("GET", "classSearch/getTerms"),
        ("GET", "searchResults/getCourseDescription"),
        ("GET", "searchResults/getEnrollmentInfo"),
        ("GET", "searchResults/getFacultyMeetingTimes"),
        ("GET", "searchResults/getSectionPrerequisites"),
        ("GET", "searchResults/searchResults"),
        ("POST", "term/search"),
    ]


async def test_per_section_pages_answer_by_crn() -> None:
    fake = FakeBanner(sections=fixture_sections())
    async with serve_fake_banner(fake) as url, client(url) as banner:
        meetings = await banner.faculty_meeting_times("202131", "45405")
        seats = await enrollment_info(banner, "202131", "45405")
    assert [m["meetingTime"]["meetingType"] for m in meetings["fmt"]] == ["LAB", "LEC"]
    assert "Enrollment Seats Available" in seats
