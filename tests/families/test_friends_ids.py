"""An id too big for the database's integer columns is one more id nobody has, not a server error
(PostgreSQL refuses a comparison of an int4 column with a number past 2**31 - 1)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from campus_mcp.testing import CampusFactory, campus_today
from campus_mcp.testing.oauth import parse_forms

HUGE = 2**40
MONDAY = campus_today() - timedelta(days=campus_today().weekday())
WEEK = {"start_date": MONDAY.isoformat(), "end_date": (MONDAY + timedelta(days=6)).isoformat()}


async def sign_in(client: Any, username: str) -> None:
    page = await client.get("/login", params={"next": "/dashboard"})
    data = {f.name: f.value for f in parse_forms(page.text)[-1].fields if f.kind == "hidden"}
    await client.post("/login", data=data | {"username": username, "password": "demo"})


async def test_a_huge_id_gets_the_answer_of_an_unknown_one(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(demo=True)
    student1 = await campus.student_principal("student1")
    unknown = await campus.call("friend_busy_times", {"friend_id": 999_999, **WEEK}, principal=student1)
    huge = await campus.call("friend_busy_times", {"friend_id": HUGE, **WEEK}, principal=student1)
    assert huge.is_error and "failed on the server" not in huge.content[0].text  # type: ignore[union-attr]
    async with campus.rest() as client:
        await sign_in(client, "student1")
        rest_unknown = await client.get("/api/v1/me/friends/999999/busy_times", params=WEEK)
        rest_huge = await client.get(f"/api/v1/me/friends/{HUGE}/busy_times", params=WEEK)
        page = await client.get(f"/dashboard/friends/{HUGE}")
        form = await client.get("/dashboard/friends")
        token = next(f for f in parse_forms(form.text) if f.action == "/dashboard/friends/requests").fields
        hidden = {f.name: f.value for f in token if f.kind == "hidden"}
        posts = [
            await client.post(f"/dashboard/friends/requests/{HUGE}/accept", data=hidden),
            await client.post(f"/dashboard/friends/requests/{HUGE}/decline", data=hidden),
            await client.post(f"/dashboard/friends/{HUGE}/remove", data=hidden),
            await client.post(f"/dashboard/friends/meetings/{HUGE}/delete", data=hidden),
        ]
    assert huge.content == unknown.content
    assert rest_huge.status_code == rest_unknown.status_code == 404
    assert rest_huge.content == rest_unknown.content
    assert page.status_code == 404
    assert [p.status_code for p in posts] == [400, 400, 400, 400], [p.text[:200] for p in posts]
