"""Campus sign-in against a real CAS 3.0 server: django-cas-server on loopback, one process for the
module (tests/support/cas_idp.py).

A student presses the CAS button, signs in on the CAS server's own login page and comes back with
a service ticket that the campus validates at the server's ``/p3/serviceValidate``; the released
attributes name the campus id and admit students, and the student is the one the enrollment feed
created before their first sign-in. Also: a person not admitted, a replayed callback, a ticket
made for another sign-in, and the server down, each refused in words. End to end, the MCP SDK's
client signs in through the CAS server in Chromium and calls ``my_courses``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from campus_mcp.oauth import cas
from campus_mcp.oauth.accounts import Student, student_for_feed
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import (
    TEST_REDIRECT_URI,
    authorization_request,
    callback_params,
    free_port,
    link_to,
    login_next,
    parse_forms,
    register_app,
    serve_on_loopback,
)
from campus_schedule.feed import import_enrollments
from campus_schedule.models import Enrollment
from mcp.client.auth import AuthorizationCodeResult
from sqlalchemy import select

from tests.support.cas_idp import running_cas_server
from tests.support.chromium import chromium, require_chromium
from tests.support.endpoints import campus_assistant
from tests.support.faulty_server import FAULTS, faulty_server

require_chromium("the CAS sign-in from an MCP client")

ACCOUNTS: dict[str, dict[str, Any]] = {
    "ada": {"uin": "S1001", "displayName": "Ada Lovelace", "eduPersonAffiliation": ["student", "member"]},
    "grace": {"uin": "S1002", "displayName": "Grace Hopper", "eduPersonAffiliation": ["student"]},
    "alan": {"uin": "E2001", "displayName": "Alan Turing", "eduPersonAffiliation": ["staff"]},
    # Students whose id attribute must not name S2001 (issue 35.10).
    "mallory": {"uin": "S2001 attacker", "eduPersonAffiliation": ["student"]},
    "zero-width": {"uin": "S2001\u200b", "eduPersonAffiliation": ["student"]},
    "look-alike": {"uin": "\u04052001", "eduPersonAffiliation": ["student"]},
}
HELP = "the Registrar's help desk (help@campus.example)"
# docs/sign-in.md's CAS recipe.
RECIPE = {
    "cas_student_id_attribute": "uin",
    "cas_display_name_attribute": "displayName",
    "cas_admit_attribute": "eduPersonAffiliation",
    "cas_admit_values": ["student"],
    "oidc_help_contact": HELP,
}
START_AGAIN = "Start again from the app; if it happens again, tell your campus IT."


@pytest.fixture(scope="module")
def cas_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_cas_server(tmp_path_factory.mktemp("cas"), ACCOUNTS) as base:
        yield base


@contextlib.asynccontextmanager
async def cas_campus(
    campus_factory: CampusFactory, cas_server: str, **settings: Any
) -> AsyncIterator[tuple[CampusHarness, str]]:
    port = free_port()
    campus = await campus_factory(
        **{"plugins": [], "public_url": f"http://127.0.0.1:{port}", "cas_server_url": cas_server, **RECIPE, **settings}
    )
    async with serve_on_loopback(campus.app, port) as base:
        yield campus, base


async def cas_login(browser: httpx.AsyncClient, base: str, login: str, next_url: str = "/dashboard") -> httpx.Response:
    """Our CAS button, then the CAS server's login form; stops at the redirect back to us."""
    page = await browser.get(f"{base}/login/cas", params={"next": next_url}, follow_redirects=True)
    assert "/cas/login" in str(page.url), page.text
    form = next(f for f in parse_forms(page.text) if any(field.name == "lt" for field in f.fields))
    data = {field.name: field.value for field in form.fields if field.kind == "hidden"}
    data |= {"username": login, "password": "any password"}
    return await browser.post(str(page.url), data=data, headers={"Referer": str(page.url)}, follow_redirects=False)


async def cas_sign_in(
    browser: httpx.AsyncClient, base: str, login: str, next_url: str = "/dashboard"
) -> httpx.Response:
    back = await cas_login(browser, base, login, next_url)
    assert back.status_code in (302, 303), back.text
    assert back.headers["location"].startswith(f"{base}/login/cas/callback?"), back.headers["location"]
    return await browser.get(back.headers["location"], follow_redirects=True)


async def student_named(campus: CampusHarness, campus_id: str) -> Student | None:
    async with campus.sessions() as session:
        return (await session.execute(select(Student).where(Student.campus_id == campus_id))).scalar_one_or_none()


async def test_a_student_signs_in_at_the_cas_server_as_the_feeds_student(
    campus_factory: CampusFactory, cas_server: str
) -> None:
    async with cas_campus(campus_factory, cas_server, plugins=["catalog", "schedule"], demo=True) as (campus, base):
        async with campus.sessions() as session:
            term_uid, crn = (
                await session.execute(
                    select(Enrollment.term_uid, Enrollment.crn).where(Enrollment.student_id == 1).limit(1)
                )
            ).one()
            fed = await import_enrollments(session, f"student,term,crn\nS1001,{term_uid},{crn}\n", create_students=True)
        assert fed.students_created == 1
        before = await student_named(campus, "s1001")
        assert before is not None and before.oidc_subject is None
        async with httpx.AsyncClient(timeout=30) as browser:
            login = await browser.get(f"{base}/login")
            assert "Sign in with your campus account (CAS)" in login.text
            landed = await cas_sign_in(browser, base, "ada", "/dashboard/settings")
            assert landed.url.path == "/dashboard/settings", landed.text
            # Their name from the CAS attributes, never the campus id (issue 35, point 6).
            assert "Signed in as Ada Lovelace" in landed.text and "s1001" not in landed.text
            # A second sign-in is the same student.
        async with httpx.AsyncClient(timeout=30) as browser:
            assert (await cas_sign_in(browser, base, "ada")).url.path == "/dashboard"
    after = await student_named(campus, "s1001")
    assert after is not None and after.id == before.id
    assert after.oidc_issuer == cas_server and after.oidc_subject == "ada" and after.display_name == "Ada Lovelace"
    async with campus.sessions() as session:
        rows = (await session.execute(select(Enrollment.crn).where(Enrollment.student_id == after.id))).scalars()
        assert list(rows) == [crn]


async def test_mcp_client_signs_in_through_the_cas_server_and_sees_the_feeds_courses(
    campus_factory: CampusFactory, cas_server: str
) -> None:
    # The MCP SDK's OAuthClientProvider registers; Chromium takes our login page's CAS button through
    # the CAS server's login page and back to our consent page; my_courses answers for S1002.
    async with cas_campus(
        campus_factory, cas_server, plugins=["catalog", "schedule"], demo=True, anonymous_access=False
    ) as (campus, base):
        async with campus.sessions() as session:
            term_uid, crn = (
                await session.execute(
                    select(Enrollment.term_uid, Enrollment.crn).where(Enrollment.student_id == 2).limit(1)
                )
            ).one()
            await import_enrollments(session, f"student,term,crn\nS1002,{term_uid},{crn}\n", create_students=True)
        async with chromium() as browser:
            page = await browser.new_page()
            # Tests reach loopback only; the CAS server's pages ask for styles from a CDN.
            await page.route(
                "**/*", lambda route: route.abort() if "127.0.0.1" not in route.request.url else route.continue_()
            )
            landed: dict[str, str] = {}

            async def redirect_handler(url: str) -> None:
                await page.goto(url)  # our login page
                await page.get_by_role("link", name="Sign in with your campus account (CAS)").click()
                await page.get_by_label("Username").fill("grace")
                await page.get_by_label("Password").fill("any password")
                await page.get_by_role("button", name="Login").click()  # back to us with a ticket
                async with page.expect_request(lambda request: request.url.startswith(TEST_REDIRECT_URI)) as sent:
                    await page.get_by_role("button", name="Allow").click()  # our consent page
                landed.update(callback_params((await sent.value).url))

            async def callback_handler() -> AuthorizationCodeResult:
                return AuthorizationCodeResult(code=landed["code"], state=landed.get("state"), iss=landed.get("iss"))

            async with campus_assistant(base, redirect_handler, callback_handler) as client:
                answer = await client.call_tool("my_courses", {"term": term_uid})
    assert not answer.is_error, answer.content
    assert [course["crn"] for course in answer.structured_content["courses"]] == [crn]
    grace = await student_named(campus, "s1002")
    assert grace is not None and grace.oidc_subject == "grace"


async def test_a_person_not_admitted_sees_why_and_whom_to_ask_and_gets_no_record(
    campus_factory: CampusFactory, cas_server: str
) -> None:
    async with cas_campus(campus_factory, cas_server) as (campus, base), httpx.AsyncClient(timeout=30) as browser:
        refused = await cas_sign_in(browser, base, "alan")
        assert refused.status_code == 403
        assert "this service is for students" in refused.text
        assert "eduPersonAffiliation does not include student" in refused.text
        assert "the Registrar&#x27;s help desk (help@campus.example)" in refused.text
    assert await student_named(campus, "e2001") is None


async def test_a_person_not_admitted_is_sent_back_to_the_waiting_app_with_access_denied(
    campus_factory: CampusFactory, cas_server: str
) -> None:
    async with cas_campus(campus_factory, cas_server) as (_campus, base), httpx.AsyncClient(timeout=30) as browser:
        client_id = await register_app(browser, base, "Campus Assistant")
        next_url = await login_next(browser, authorization_request(base, client_id, "", state="app-state-5"))
        refused = await cas_sign_in(browser, base, "alan", next_url)
        assert refused.status_code == 403 and "eduPersonAffiliation does not include student" in refused.text
        back = link_to(refused.text, "Return to Campus Assistant")
        assert back is not None and back.startswith(TEST_REDIRECT_URI + "?"), refused.text
        landed = callback_params(back)
        assert (landed["error"], landed["state"], landed["iss"]) == ("access_denied", "app-state-5", base)
        assert "code" not in landed


async def test_a_replayed_callback_is_refused(campus_factory: CampusFactory, cas_server: str) -> None:
    async with cas_campus(campus_factory, cas_server) as (_campus, base), httpx.AsyncClient(timeout=30) as browser:
        back = await cas_login(browser, base, "grace")
        callback = back.headers["location"]
        assert (await browser.get(callback, follow_redirects=True)).url.path == "/dashboard"
        again = await browser.get(callback, follow_redirects=True)
        assert again.status_code == 400
        assert "does not match a sign-in started here, or it was used already" in again.text


async def test_a_ticket_of_another_sign_in_is_refused(campus_factory: CampusFactory, cas_server: str) -> None:
    # A ticket taken from someone else's sign-in (another browser, another pending value): the CAS
    # server issued it for that sign-in's service URL, so it does not validate for this one.
    async with cas_campus(campus_factory, cas_server) as (_campus, base):
        async with httpx.AsyncClient(timeout=30) as attacker:
            ticket = parse_qs(urlsplit((await cas_login(attacker, base, "grace")).headers["location"]).query)["ticket"][
                0
            ]
        async with httpx.AsyncClient(timeout=30) as victim:
            started = await victim.get(f"{base}/login/cas", params={"next": "/dashboard"})
            nonce = parse_qs(urlsplit(parse_qs(urlsplit(started.headers["location"]).query)["service"][0]).query)["s"][
                0
            ]
            page = await victim.get(f"{base}/login/cas/callback", params={"s": nonce, "ticket": ticket})
            assert page.status_code == 400
            assert "The campus sign-in service did not confirm this sign-in" in page.text and START_AGAIN in page.text
            assert (await victim.get(f"{base}/dashboard")).status_code == 303


# What the student reads when the CAS server does not validate the ticket, as for OpenID Connect's
# token endpoint (tests/oauth/test_oauth_oidc.py): the campus sign-in service's trouble, answered 502.
CAS_FAULTS = {
    "refuse": "The campus sign-in service broke off the connection (or could not be reached)",
    "drop": "The campus sign-in service broke off the connection (or could not be reached)",
    "hang": "The campus sign-in service did not answer in time",
}


@pytest.mark.parametrize("fault", FAULTS)
async def test_a_cas_server_that_refuses_drops_or_hangs_gets_a_502_page_naming_the_campus_sign_in(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    monkeypatch.setattr(cas, "VALIDATE_SECONDS", 1.0)  # the hanging server: a second, not ten
    async with (
        faulty_server(fault) as port,
        cas_campus(campus_factory, f"http://127.0.0.1:{port}/cas") as (_campus, base),
        httpx.AsyncClient(timeout=30) as browser,
    ):
        started = await browser.get(f"{base}/login/cas", params={"next": "/dashboard"})
        nonce = parse_qs(urlsplit(parse_qs(urlsplit(started.headers["location"]).query)["service"][0]).query)["s"][0]
        page = await browser.get(f"{base}/login/cas/callback", params={"s": nonce, "ticket": "ST-1"})
        assert page.status_code == 502, page.text
        assert "<h1>Sign-in failed</h1>" in page.text and CAS_FAULTS[fault] in page.text
        assert "database" not in page.text.lower() and "ST-1" not in page.text
        assert (await browser.get(f"{base}/dashboard")).status_code == 303  # nobody signed in


CAS_UNSAFE_IDS = {
    "mallory": "contains a space",
    "zero-width": "contains an invisible character (U+200B ZERO WIDTH SPACE)",
    "look-alike": "(U+0405 CYRILLIC CAPITAL LETTER DZE), which is not plain ASCII",
}


async def test_a_student_id_attribute_with_a_space_or_a_hidden_character_does_not_take_over_a_feed_student(
    campus_factory: CampusFactory, cas_server: str
) -> None:
    async with cas_campus(campus_factory, cas_server) as (campus, base):
        async with campus.sessions() as session, session.begin():
            await student_for_feed(session, "S2001")  # the nightly feed's record of S2001, not signed in yet
        for login, words in CAS_UNSAFE_IDS.items():
            async with httpx.AsyncClient(timeout=30) as browser:
                refused = await cas_sign_in(browser, base, login)
                assert refused.status_code == 403, (login, refused.text)
                assert "Your campus account&#x27;s student id (the uin attribute)" in refused.text
                assert words in refused.text, (login, refused.text)
                assert (await browser.get(f"{base}/dashboard")).status_code == 303
    s2001 = await student_named(campus, "s2001")
    assert s2001 is not None and s2001.oidc_subject is None
    async with campus.sessions() as session:
        linked = (await session.execute(select(Student).where(Student.oidc_subject.is_not(None)))).scalars()
        assert list(linked) == []
