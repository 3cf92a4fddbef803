"""The friends tools keep each student's data to the student (issue 11, point 2).

Through the real MCP client and the real REST twins on a demo campus: list_friends gives only the
caller's own friends and requests; friend_busy_times gives a friend's busy blocks with no course
code, title, CRN, room, instructor or meeting title anywhere in the answer (structured content,
text and resource links); a pending request, a removed friend, the caller themself and an id
nobody has get byte-identical answers, and a removed friend loses access on the next call.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from campus_friends.models import Friendship
from campus_mcp import Settings
from campus_mcp.testing import CampusFactory, CampusHarness, campus_today
from campus_mcp.testing.oauth import parse_forms
from campus_schedule.busy import busy_blocks
from sqlalchemy import delete, or_

MONDAY = campus_today() - timedelta(days=campus_today().weekday())
WEEK = {"start_date": MONDAY.isoformat(), "end_date": (MONDAY + timedelta(days=6)).isoformat()}
API = "/api/v1/me/friends"


async def _campus(campus_factory: CampusFactory) -> CampusHarness:
    return await campus_factory(demo=True)


async def sign_in(client: Any, username: str) -> None:
    page = await client.get("/login", params={"next": "/dashboard"})
    data = {f.name: f.value for f in parse_forms(page.text)[-1].fields if f.kind == "hidden"}
    signed_in = await client.post("/login", data=data | {"username": username, "password": "demo"})
    assert signed_in.status_code in (200, 303), signed_in.text


def strings_in(value: Any) -> list[str]:
    """Every string and number anywhere in a JSON value, keys included."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [str(k), *strings_in(v)]]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return [str(value)]


async def friend_details(campus: CampusHarness, student_id: int, settings: Settings) -> set[str]:
    """Every course and meeting detail of the student's own busy blocks this week."""
    async with campus.deployment.session() as session:
        blocks = await busy_blocks(session, student_id, MONDAY, MONDAY + timedelta(days=6), settings)
    details: set[str] = set()
    for block in blocks:
        for key, value in block.detail.items():
            if key in ("crn", "course_code", "title", "room", "instructor") and isinstance(value, str) and value:
                details.add(value)
    return details


async def test_list_friends_gives_friends_with_ids_and_requests_both_ways(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    student1 = await campus.student_principal("student1")
    result = await campus.call("list_friends", {}, principal=student1)
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer is not None
    assert [(f["friend_id"], f["username"]) for f in answer["friends"]] == [(2, "student2"), (3, "student3")]
    assert [r["username"] for r in answer["requests_received"]] == ["student4"]
    assert [r["username"] for r in answer["requests_sent"]] == ["student5"]
    # student2's own list names student2's friends, never student1's requests.
    student2 = await campus.student_principal("student2")
    theirs = (await campus.call("list_friends", {}, principal=student2)).structured_content
    assert theirs is not None
    assert [f["username"] for f in theirs["friends"]] == ["student1", "student3"]
    assert theirs["requests_received"] == [] and theirs["requests_sent"] == []
    async with campus.rest() as rest:
        await sign_in(rest, "student1")
        twin = await rest.get(API)
    assert twin.status_code == 200
    assert twin.json() == answer


async def test_a_friends_busy_times_carry_no_course_or_meeting_detail(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    student1 = await campus.student_principal("student1")
    result = await campus.call("friend_busy_times", {"friend_id": 2, **WEEK}, principal=student1)
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer is not None
    assert answer["busy"], "student2 attends the demo study meeting this week, so is busy at least then"
    # When and nothing else: the times also as text, as my_busy_times gives them (issue 24, point 2).
    times = {"start", "end", "date", "start_time", "end_time", "start_12h", "end_12h"}
    assert all(set(block) == times for block in answer["busy"])
    secrets = await friend_details(campus, 2, campus.settings) | {"Study group"}
    everything = [*strings_in(answer), *(json.dumps(item.model_dump(mode="json")) for item in result.content)]
    leaks = sorted({secret for secret in secrets for text in everything if secret in text})
    assert leaks == [], f"friend_busy_times shows {leaks}"
    for word in ("class", "final", "meeting", "crn", "course", "room", "instructor", "title", "kind", "detail"):
        assert not [key for key in strings_in(answer) if key.lower() == word], word
    async with campus.rest() as rest:
        await sign_in(rest, "student1")
        twin = await rest.get(f"{API}/2/busy_times", params=WEEK)
    assert twin.status_code == 200
    assert twin.json() == answer
    assert not [secret for secret in secrets if secret in twin.text]


async def test_not_a_friend_removed_self_and_unknown_ids_get_byte_identical_answers(
    campus_factory: CampusFactory,
) -> None:
    campus = await _campus(campus_factory)
    student1 = await campus.student_principal("student1")
    # 4 asked student1 (pending), 1 asked 5 (pending), 1 is the caller, 999999 nobody has.
    async with campus.deployment.session() as session, session.begin():
        # Take one friendship away to have a removed friend (student3 and student1).
        await session.execute(
            delete(Friendship).where(
                or_(Friendship.low_student_id == 1, Friendship.high_student_id == 1),
                or_(Friendship.low_student_id == 3, Friendship.high_student_id == 3),
            )
        )
    answers = []
    for friend_id in (4, 5, 1, 3, 999_999):
        result = await campus.call("friend_busy_times", {"friend_id": friend_id, **WEEK}, principal=student1)
        assert result.is_error and result.structured_content is None
        answers.append([item.model_dump(mode="json") for item in result.content])
    assert all(answer == answers[0] for answer in answers), answers
    text = answers[0][0]["text"]
    assert "list_friends" in text and "999999" not in text
    async with campus.rest() as rest:
        await sign_in(rest, "student1")
        replies = [
            (await rest.get(f"{API}/{friend_id}/busy_times", params=WEEK)) for friend_id in (4, 5, 1, 3, 999_999)
        ]
    assert {reply.status_code for reply in replies} == {404}
    assert len({reply.content for reply in replies}) == 1, [reply.text for reply in replies]


async def test_a_removed_friend_loses_access_on_the_next_call(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    student1 = await campus.student_principal("student1")
    student2 = await campus.student_principal("student2")
    before = await campus.call("friend_busy_times", {"friend_id": 1, **WEEK}, principal=student2)
    assert not before.is_error
    async with campus.rest() as browser:
        await sign_in(browser, "student1")
        page = await browser.get("/dashboard/friends")
        form = next(f for f in parse_forms(page.text) if f.action == "/dashboard/friends/2/remove")
        removed = await browser.post(form.action, data={f.name: f.value for f in form.fields if f.kind == "hidden"})
        assert removed.status_code == 200 and "Friend removed" in removed.text
    # Both ways, at once: no cache, no grace period.
    after = await campus.call("friend_busy_times", {"friend_id": 1, **WEEK}, principal=student2)
    mine = await campus.call("friend_busy_times", {"friend_id": 2, **WEEK}, principal=student1)
    assert after.is_error and mine.is_error
    assert after.content[0].text == mine.content[0].text  # type: ignore[union-attr]
    listed = (await campus.call("list_friends", {}, principal=student2)).structured_content
    assert listed is not None and [f["username"] for f in listed["friends"]] == ["student3"]


async def test_the_range_is_checked_the_same_for_every_id(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    student1 = await campus.student_principal("student1")
    too_long = {"start_date": "2026-01-01", "end_date": "2026-12-31"}
    texts = set()
    for friend_id in (2, 4, 999_999):
        result = await campus.call("friend_busy_times", {"friend_id": friend_id, **too_long}, principal=student1)
        assert result.is_error
        texts.add(result.content[0].text)  # type: ignore[union-attr]
    assert len(texts) == 1
    assert "120 days" in texts.pop()


async def test_the_friends_tools_need_a_signed_in_student_with_friends_read(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    async with campus.mcp() as anonymous:  # no student: the tools are not even listed
        listed = {tool.name for tool in (await anonymous.list_tools()).tools}
    assert not {"list_friends", "friend_busy_times"} & listed
    without = await campus.student_principal("student1", scopes=["schedule:read"])
    denied = await campus.call("friend_busy_times", {"friend_id": 2, **WEEK}, principal=without)
    assert denied.is_error and "friends:read" in denied.content[0].text  # type: ignore[union-attr]
    assert denied.structured_content is None
    async with campus.rest() as rest:
        lists = await rest.get(API)
        busy = await rest.get(f"{API}/2/busy_times", params=WEEK)
    # No credentials at all: 401 with a Bearer challenge (issue 37 point 9), not 403.
    assert lists.status_code == busy.status_code == 401, (lists.text, busy.text)
    assert "signed-in student" in lists.json()["message"]
    assert "student2" not in lists.text and "Demo Student" not in busy.text


async def test_the_rest_twin_names_a_bad_argument(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    async with campus.rest() as rest:
        await sign_in(rest, "student1")
        not_a_number = await rest.get(f"{API}/sam/busy_times", params=WEEK)
        no_end = await rest.get(f"{API}/2/busy_times", params={"start_date": WEEK["start_date"]})
        reversed_days = await rest.get(
            f"{API}/2/busy_times", params={"start_date": WEEK["end_date"], "end_date": WEEK["start_date"]}
        )
    assert not_a_number.status_code == 400 and "friend_id" in not_a_number.text
    assert no_end.status_code == 400 and "end_date" in no_end.text
    assert reversed_days.status_code == 400 and "before start_date" in reversed_days.text
    assert "Traceback" not in not_a_number.text + no_end.text + reversed_days.text
