"""No page, tool or error shows one student another's campus id (issue 35, point 6).

A campus that signs in with CAS (a real CAS server, django-cas-server, on loopback: the sign-in
whose released attributes the test chooses) and numbers its students. Students created from the
enrollment feed had their student number as name and username, so the dashboard said "Signed in
as 009100001", and friends found each other by username: by student number, which every friend
then saw. Now the name comes from the sign-in's name attribute or the feed's name column, a student
with neither is "Unnamed student", and friends find each other by a friend code.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from campus_mcp.oauth.testkit import free_port, parse_forms, serve_on_loopback
from campus_mcp.student_export import student_export
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_schedule.feed import import_enrollments
from campus_schedule.models import Enrollment
from sqlalchemy import select, text

from tests.support.cas_idp import running_cas_server

# The campus numbers its students; the CAS server releases the number, and a name for some only.
ACCOUNTS: dict[str, dict[str, Any]] = {
    "ada": {"uin": "009100001", "displayName": "Ada Lovelace", "eduPersonAffiliation": ["student"]},
    "grace": {"uin": "009100002", "eduPersonAffiliation": ["student"]},  # no name released
    "edsger": {"uin": "009100003", "eduPersonAffiliation": ["student"]},  # no name anywhere
}
NUMBERS = ("009100001", "009100002", "009100003")
RECIPE = {
    "cas_student_id_attribute": "uin",
    "cas_display_name_attribute": "displayName",
    "cas_admit_attribute": "eduPersonAffiliation",
    "cas_admit_values": ["student"],
}
FRIENDS = "/dashboard/friends"


@pytest.fixture(scope="module")
def cas_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_cas_server(tmp_path_factory.mktemp("cas"), ACCOUNTS) as base:
        yield base


@contextlib.asynccontextmanager
async def numbered_campus(campus_factory: CampusFactory, cas_server: str) -> AsyncIterator[tuple[CampusHarness, str]]:
    """The demo campus signing in with CAS, its three students created by the feed (Grace named
    by the feed's name column), none signed in yet."""
    port = free_port()
    campus = await campus_factory(
        plugins=["catalog", "schedule", "friends"],
        demo=True,
        public_url=f"http://127.0.0.1:{port}",
        cas_server_url=cas_server,
        **RECIPE,
    )
    async with campus.sessions() as session:
        term_uid, crn = (
            await session.execute(
                select(Enrollment.term_uid, Enrollment.crn).where(Enrollment.student_id == 1).limit(1)
            )
        ).one()
        feed = f"009100001,{term_uid},{crn}\n009100002,{term_uid},{crn},Grace Hopper\n009100003,{term_uid},{crn}\n"
        fed = await import_enrollments(session, feed, create_students=True)
    assert fed.students_created == 3 and "; 1 student(s) named from the name column" in fed.summary, fed.summary
    async with serve_on_loopback(campus.app, port) as base:
        yield campus, base


async def cas_sign_in(browser: httpx.AsyncClient, base: str, login: str) -> httpx.Response:
    """Our CAS button, the CAS server's login form, back to the dashboard."""
    page = await browser.get(f"{base}/login/cas", params={"next": "/dashboard"}, follow_redirects=True)
    form = next(f for f in parse_forms(page.text) if any(field.name == "lt" for field in f.fields))
    data = {field.name: field.value for field in form.fields if field.kind == "hidden"}
    data |= {"username": login, "password": "any password"}
    return await browser.post(str(page.url), data=data, headers={"Referer": str(page.url)}, follow_redirects=True)


async def post_form(browser: httpx.AsyncClient, base: str, action: str, fields: dict[str, str]) -> httpx.Response:
    """A form of the Friends page posted as the page posts it (its CSRF token), redirects followed."""
    page = await browser.get(f"{base}{FRIENDS}")
    form = next(f for f in parse_forms(page.text) if f.action == action)
    hidden = {field.name: field.value for field in form.fields if field.kind == "hidden"}
    return await browser.post(f"{base}{action}", data=hidden | fields, follow_redirects=True)


def friend_code_on(page: str) -> str:
    found = re.search(r'class="friend-code">([A-Z0-9-]+)<', page)
    assert found, page
    return found[1]


def no_number_in(shown: str, *, but: str = "") -> None:
    """``shown`` names no student's campus id (``but``: the reader's own, where it may be)."""
    for number in NUMBERS:
        if number != but:
            assert number not in shown, (number, shown[:3000])


async def test_pages_answers_and_errors_show_names_and_never_a_campus_id(
    campus_factory: CampusFactory, cas_server: str
) -> None:
    async with (
        numbered_campus(campus_factory, cas_server) as (campus, base),
        httpx.AsyncClient(timeout=30) as ada,
        httpx.AsyncClient(timeout=30) as grace,
        httpx.AsyncClient(timeout=30) as edsger,
    ):
        # Each is shown by the name the sign-in or the feed gave, or none: never the number.
        for browser, login, name in ((ada, "ada", "Ada Lovelace"), (grace, "grace", "Grace Hopper")):
            landed = await cas_sign_in(browser, base, login)
            assert landed.url.path == "/dashboard", landed.text
            assert f"Signed in as {name}" in landed.text and f"Welcome, {name}" in landed.text
            no_number_in(landed.text)
        landed = await cas_sign_in(edsger, base, "edsger")
        assert "Signed in as Unnamed student" in landed.text
        no_number_in(landed.text)

        # Grace gives Ada her friend code; her student number finds nobody, and says so the same way.
        page = await grace.get(f"{base}{FRIENDS}")
        assert page.status_code == 200
        code = friend_code_on(page.text)
        no_number_in(page.text)
        by_number = await post_form(ada, base, f"{FRIENDS}/requests", {"friend": "009100002"})
        assert by_number.status_code == 200 and "Request sent if that friend code" in by_number.text
        assert "Asked to be your friend" not in (await grace.get(f"{base}{FRIENDS}")).text  # nothing was sent
        sent = await post_form(ada, base, f"{FRIENDS}/requests", {"friend": code.lower().replace("-", " ")})
        assert sent.status_code == 200 and "Request sent" in sent.text
        assert "Grace Hopper" in sent.text  # Ada's sent request, by name
        no_number_in(sent.text, but="009100001")

        asked = await grace.get(f"{base}{FRIENDS}")
        assert "Asked to be your friend" in asked.text and "Ada Lovelace" in asked.text
        no_number_in(asked.text)
        accept = next(f.action for f in parse_forms(asked.text) if f.action.endswith("/accept"))
        accepted = await post_form(grace, base, accept, {})
        assert "you are now friends" in accepted.text
        no_number_in(accepted.text)

        # An error that names the other student names them by name.
        again = await post_form(ada, base, f"{FRIENDS}/requests", {"friend": code})
        assert again.status_code == 400 and "Grace Hopper is already your friend." in again.text
        no_number_in(again.text, but="009100001")
        grace_id = await campus_id_owner(campus, "009100002")
        week = await ada.get(f"{base}{FRIENDS}/{grace_id}")
        assert week.status_code == 200 and "Grace Hopper: busy times" in week.text
        no_number_in(week.text)

    # The tool (and so every app): the friend's name, no username, no number.
    ada_principal = await campus.student_principal("009100001")
    listed = await campus.call("list_friends", {}, principal=ada_principal)
    assert not listed.is_error, listed.content
    friends = (listed.structured_content or {})["friends"]
    assert [(f["display_name"]["untrusted_text"], f["username"]) for f in friends] == [("Grace Hopper", None)]
    no_number_in(json.dumps(listed.structured_content) + json.dumps([c.model_dump() for c in listed.content]))
    # Ada's own export names her friend as friends see her, with Ada's friend code, not Grace's number.
    exported = json.dumps(await student_export(campus.deployment, await campus_id_owner(campus, "009100001")))
    assert '"student": "Grace Hopper"' in exported
    no_number_in(exported, but="009100001")


async def campus_id_owner(campus: CampusHarness, campus_id: str) -> int:
    async with campus.sessions() as session:
        found = await session.scalar(text("SELECT id FROM students WHERE campus_id = :id"), {"id": campus_id})
    assert found is not None
    return int(found)
