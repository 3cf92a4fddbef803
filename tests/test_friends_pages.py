"""The Friends pages and the page links of the friends tools (issue 11, points 3 and 4).

A student sends a request by username, the other accepts, declines or the first withdraws; a
friend is removed; a friend meeting made on the page shows in both students' busy times. Every
form post needs the session's CSRF token. Every link a tool returns opens with 200 for the
signed-in student and shows another student nothing of the first.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from campus_catalog.models import Section
from campus_mcp.oauth.pages import security_headers
from campus_mcp.oauth.testkit import parse_forms
from campus_mcp.testing import CampusFactory, CampusHarness, StudentBrowser, campus_today
from campus_schedule.enrollment import has_courses
from campus_schedule.models import Enrollment
from mcp_types import ResourceLink
from sqlalchemy import select
from sqlalchemy.orm import selectinload

FRIENDS = "/dashboard/friends"
MONDAY = campus_today() - timedelta(days=campus_today().weekday())
WEEK = {"start_date": MONDAY.isoformat(), "end_date": (MONDAY + timedelta(days=6)).isoformat()}


async def browsers(client: Any, *usernames: str) -> list[StudentBrowser]:
    return [await StudentBrowser(client).sign_in(username) for username in usernames]


async def sign_in(client: Any, username: str) -> None:
    page = await client.get("/login", params={"next": "/dashboard"})
    data = {f.name: f.value for f in parse_forms(page.text)[-1].fields if f.kind == "hidden"}
    signed_in = await client.post("/login", data=data | {"username": username, "password": "demo"})
    assert signed_in.status_code in (200, 303), signed_in.text


def hidden_fields(html: str, action: str) -> dict[str, str]:
    form = next(f for f in parse_forms(html) if f.action == action)
    return {f.name: f.value for f in form.fields if f.kind == "hidden"}


async def post_form(browser: Any, action: str, extra: dict[str, Any] | None = None) -> Any:
    """Post one form of the Friends page as the browser would: its hidden fields (the CSRF token) and ``extra``."""
    page = await browser.get(FRIENDS)
    return await browser.post(action, data=hidden_fields(page.text, action) | (extra or {}))


async def onboard(campus: CampusHarness, student_id: int) -> None:
    """Give the student one section, so that the onboarded rule lets links through."""
    async with campus.deployment.session() as session, session.begin():
        if await has_courses(session, student_id):
            return
        section = (
            await session.scalars(
                select(Section).options(selectinload(Section.term)).where(Section.cancelled.is_(False)).limit(1)
            )
        ).one()
        session.add(
            Enrollment(
                student_id=student_id, term_uid=section.term.uid, section_id=section.id, crn=section.crn, source="demo"
            )
        )


async def test_the_friends_page_lists_friends_and_requests_with_the_consent_pages_headers(
    campus_factory: CampusFactory,
) -> None:
    campus = await campus_factory(demo=True)
    async with campus.rest() as browser:
        assert (await browser.get(FRIENDS, follow_redirects=False)).headers[
            "location"
        ] == "/login?next=%2Fdashboard%2Ffriends"
        await sign_in(browser, "student1")
        page = await browser.get(FRIENDS)
    assert page.status_code == 200
    for name in ("Demo Student 2", "Demo Student 3", "Demo Student 4", "Demo Student 5"):
        assert name in page.text
    for header, value in security_headers().items():
        assert page.headers[header.lower()] == value, header
    forms = parse_forms(page.text)
    posts = [f for f in forms if f.method.lower() == "post" and f.action.startswith(FRIENDS)]
    assert posts and all(any(field.name == "csrf_token" and field.value for field in f.fields) for f in posts)
    assert '<a href="/dashboard/friends" aria-current="page">Friends</a>' in page.text


async def test_a_post_without_the_csrf_token_changes_nothing(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True)
    async with campus.rest() as browser:
        await sign_in(browser, "student1")
        refused = await browser.post(f"{FRIENDS}/2/remove", data={"csrf_token": "forged"})
        assert refused.status_code == 403 and "The form expired" in refused.text
        no_token = await browser.post(f"{FRIENDS}/requests", data={"friend": "student4"})
        assert no_token.status_code == 403
    listed = (
        await campus.call("list_friends", {}, principal=await campus.student_principal("student1"))
    ).structured_content
    assert listed is not None and [f["friend_id"] for f in listed["friends"]] == [2, 3]
    assert [r["username"] for r in listed["requests_received"]] == ["student4"]


async def test_request_accept_decline_withdraw_by_username(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True)
    async with campus.rest() as client:
        five, four, one = await browsers(client, "student5", "student4", "student1")
        # Issue 30 changes this answer: an unknown username answers as a request sent (no hint).
        unknown = await post_form(five, f"{FRIENDS}/requests", {"friend": "nobody-here"})
        assert unknown.status_code == 200 and "Request sent if that friend code (or username)" in unknown.text
        itself = await post_form(five, f"{FRIENDS}/requests", {"friend": "student5"})
        assert itself.status_code == 400 and "That is you" in itself.text
        # student1 had asked student5: student5 asking back accepts it.
        back = await post_form(five, f"{FRIENDS}/requests", {"friend": "STUDENT1"})
        assert back.status_code == 200 and "you are now friends" in back.text
        sent = await post_form(five, f"{FRIENDS}/requests", {"friend": "student4"})
        assert sent.status_code == 200 and "Request sent" in sent.text
        page = await four.get(FRIENDS)
        accept = next(
            f.action for f in parse_forms(page.text) if f.action.endswith("/accept") and "Demo Student 5" in page.text
        )
        # student4 also has a request out to student1: student1 declines it.
        declined = await post_form(
            one, next(f.action for f in parse_forms((await one.get(FRIENDS)).text) if f.action.endswith("/decline"))
        )
        assert declined.status_code == 200 and "Request declined" in declined.text
        accepted = await post_form(four, accept)
        assert accepted.status_code == 200 and "you are now friends" in accepted.text
        # Accepting the same request again is refused with what to do.
        again = await four.post(accept, data=hidden_fields((await four.get(FRIENDS)).text, f"{FRIENDS}/requests"))
        assert again.status_code == 400 and "no longer waiting" in again.text
    for username, friends in (("student5", ["student1", "student4"]), ("student4", ["student5"])):
        listed = (
            await campus.call("list_friends", {}, principal=await campus.student_principal(username))
        ).structured_content
        assert listed is not None and sorted(f["username"] for f in listed["friends"]) == friends, username
        assert listed["requests_received"] == [] and listed["requests_sent"] == []


async def test_a_meeting_shows_in_both_students_busy_times(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True)
    zone = ZoneInfo(campus.settings.timezone)
    # Next week's Saturday: no class in the way, and never already past (the page lists meetings to come).
    day = date.fromisoformat(WEEK["start_date"]) + timedelta(days=12)
    next_week = {"start_date": (day - timedelta(days=5)).isoformat(), "end_date": (day + timedelta(days=1)).isoformat()}
    async with campus.rest() as one:
        await sign_in(one, "student1")
        not_a_friend = await post_form(
            one,
            f"{FRIENDS}/meetings",
            {"title": "Lunch", "day": day.isoformat(), "start": "12:00", "end": "13:00", "invite": "4"},
        )
        assert not_a_friend.status_code == 400 and "Invite at least one of your friends" in not_a_friend.text
        made = await post_form(
            one,
            f"{FRIENDS}/meetings",
            {"title": "Lunch", "day": day.isoformat(), "start": "12:00", "end": "13:00", "invite": "3"},
        )
        assert made.status_code == 200 and "Meeting added" in made.text and "Lunch" in made.text
    start = datetime.combine(day, time(12, 0), tzinfo=zone)
    seen = (
        await campus.call(
            "friend_busy_times", {"friend_id": 3, **next_week}, principal=await campus.student_principal("student1")
        )
    ).structured_content
    assert seen is not None
    assert any(datetime.fromisoformat(b["start"]) <= start < datetime.fromisoformat(b["end"]) for b in seen["busy"])
    other = (
        await campus.call(
            "friend_busy_times", {"friend_id": 1, **next_week}, principal=await campus.student_principal("student2")
        )
    ).structured_content
    assert other is not None
    assert any(datetime.fromisoformat(b["start"]) <= start < datetime.fromisoformat(b["end"]) for b in other["busy"])


async def test_every_link_opens_for_the_student_and_shows_another_student_nothing(
    campus_factory: CampusFactory,
) -> None:
    campus = await campus_factory(demo=True)
    await onboard(campus, 1)
    student1 = await campus.student_principal("student1")
    calls = [("list_friends", {}), ("friend_busy_times", {"friend_id": 2, **WEEK})]
    links: list[ResourceLink] = []
    async with campus.mcp(principal=student1) as client:
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error
            assert result.content[0].type == "text"  # the JSON first, links after
            found = [item for item in result.content[1:] if isinstance(item, ResourceLink)]
            assert len(found) == 1, tool
            links += found
    assert [str(link.uri).removeprefix(campus.settings.base_url) for link in links] == [
        FRIENDS,
        f"{FRIENDS}/2?week_start={WEEK['start_date']}",
    ]
    async with campus.rest() as client:
        mine, theirs = await browsers(client, "student1", "student4")
        for link in links:
            path = str(link.uri).removeprefix(campus.settings.base_url)
            assert (await mine.get(path)).status_code == 200, path
            other = await theirs.get(path)
            assert "Demo Student 2" not in other.text and "Demo Student 3" not in other.text, path
            assert "Study group" not in other.text, path
        assert (await theirs.get(f"{FRIENDS}/2?week_start={WEEK['start_date']}")).status_code == 404


async def test_a_student_with_no_courses_gets_no_links(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True)
    student4 = await campus.student_principal("student4")
    async with campus.deployment.session() as session:
        if await has_courses(session, student4.user_id or 0):
            await session.execute(Enrollment.__table__.delete().where(Enrollment.student_id == student4.user_id))
            await session.commit()
    result = await campus.call("list_friends", {}, principal=student4)
    assert not result.is_error
    assert [item.type for item in result.content] == ["text"]


async def test_a_friends_week_page_is_the_same_404_for_anyone_who_is_not_a_friend(
    campus_factory: CampusFactory,
) -> None:
    campus = await campus_factory(demo=True)
    async with campus.rest() as client:
        (one,) = await browsers(client, "student1")
        week = f"?week_start={WEEK['start_date']}"
        mine = await one.get(f"{FRIENDS}/2{week}")
        assert mine.status_code == 200 and "Demo Student 2: busy times" in mine.text
        assert "18:00–19:30" in mine.text and "Study group" not in mine.text
        # 4 asked student1 (pending), 5 was asked by student1, 1 is the student, 999999 nobody.
        others = [await one.get(f"{FRIENDS}/{friend_id}{week}") for friend_id in (4, 5, 1, 999_999)]
        assert {page.status_code for page in others} == {404}
        assert len({page.content for page in others}) == 1
        assert "Demo Student 4" not in others[0].text
        bad_day = await one.get(f"{FRIENDS}/2?week_start=next-tuesday")
        assert bad_day.status_code == 400 and "YYYY-MM-DD" in bad_day.text


async def test_a_meeting_is_checked_and_only_its_owner_deletes_it(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True)
    day = (date.fromisoformat(WEEK["start_date"]) + timedelta(days=12)).isoformat()
    async with campus.rest() as client:
        one, two = await browsers(client, "student1", "student2")
        backwards = await post_form(
            one, f"{FRIENDS}/meetings", {"title": "Gym", "day": day, "start": "10:00", "end": "09:00", "invite": "2"}
        )
        assert backwards.status_code == 400 and "ends before it starts" in backwards.text
        no_time = await post_form(one, f"{FRIENDS}/meetings", {"title": "Gym", "day": day, "start": "", "invite": "2"})
        assert no_time.status_code == 400 and "HH:MM" in no_time.text
        made = await post_form(
            one, f"{FRIENDS}/meetings", {"title": "Gym", "day": day, "start": "09:00", "end": "10:00", "invite": "2"}
        )
        assert made.status_code == 200 and "Meeting added" in made.text
        owned = [f.action for f in parse_forms(made.text) if f.action.startswith(f"{FRIENDS}/meetings/")]
        assert owned
        # student2 is invited: sees it, with no Delete button, and a forged delete is refused.
        page = await two.get(FRIENDS)
        assert "Gym" in page.text and "A friend invited you." in page.text
        assert not [f.action for f in parse_forms(page.text) if f.action in owned]
        for action in owned:
            forged = await two.post(action, data=hidden_fields(page.text, f"{FRIENDS}/requests"))
            assert forged.status_code == 400 and "not one of yours" in forged.text
        gym = next(a for a in owned if f'action="{a}"' in made.text.split("Gym", 1)[1][:400])
        deleted = await post_form(one, gym)
        assert deleted.status_code == 200 and "Meeting deleted" in deleted.text and "Gym" not in deleted.text
