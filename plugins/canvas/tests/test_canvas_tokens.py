"""The student's Canvas connection: Canvas's OAuth2 flow with its state bound to the browser session,
tokens sealed at rest, refreshed before they expire, a token Canvas stopped taking turned into
"connect again", a student who never connected answered with the link, and no token or secret in
any log line or page."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from campus_canvas import pages
from campus_mcp import open_secret
from campus_mcp.testing import CampusFactory, CampusHarness, StudentBrowser
from sqlalchemy import text

from .conftest import WEEK, canvas_campus, connect, csrf_of, student_id
from .fake_canvas import CLIENT_SECRET, FakeCanvas

pytestmark = pytest.mark.asyncio(loop_scope="session")
SCOPE = ["canvas:read"]


async def due(campus: CampusHarness, username: str = "student1") -> Any:
    principal = await campus.student_principal(username, scopes=SCOPE)
    return await campus.call("canvas_due_work", WEEK, principal=principal)


async def row_of(campus: CampusHarness, student: int) -> dict[str, Any] | None:
    async with campus.sessions() as session:
        found = (
            (await session.execute(text("SELECT * FROM canvas_connections WHERE student_id = :s"), {"s": student}))
            .mappings()
            .first()
        )
    return dict(found) if found else None


async def test_connecting_seals_the_tokens_at_rest_and_asks_for_the_scopes_when_the_key_enforces_them(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await canvas_campus(campus_factory, canvas, canvas={"enforce_scopes": True})
    async with campus.rest() as client:
        back = await connect(await StudentBrowser(client).sign_in("student1"), canvas)
    assert "Your Canvas account is connected" in back.text and "Connected as Jimi Hendrix" in back.text
    asked = canvas.authorizations[-1]
    assert asked["redirect_uri"] == f"{campus.settings.base_url}/dashboard/canvas/callback"
    assert asked["scope"].split(" ") == [
        "url:GET|/api/v1/courses",
        "url:GET|/api/v1/courses/:course_id/assignments",
        "url:GET|/api/v1/planner/items",
        "url:GET|/api/v1/users/:user_id/missing_submissions",
        "url:GET|/api/v1/announcements",
    ]
    [live] = canvas.live_tokens()
    refresh = canvas.tokens[live].refresh
    row = await row_of(campus, await student_id(campus))
    assert row is not None and row["canvas_user_id"] == "42" and row["canvas_user_name"] == "Jimi Hendrix"
    # Sealed: neither token is in the table; the deployment's key (and only with this student) opens them.
    assert live not in str(row) and refresh not in str(row)
    owner = f"student:{row['student_id']}"
    assert open_secret(campus.settings, row["access_token"], purpose="canvas-tokens", bound_to=owner) == live
    assert open_secret(campus.settings, row["refresh_token"], purpose="canvas-tokens", bound_to=owner) == refresh
    assert not (await due(campus)).is_error

    # A key that does not enforce scopes is not sent any.
    plain = await canvas_campus(campus_factory, canvas)
    async with plain.rest() as client:
        await connect(await StudentBrowser(client).sign_in("student1"), canvas)
    assert "scope" not in canvas.authorizations[-1]


async def test_a_token_about_to_expire_is_refreshed_before_the_call(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await canvas_campus(campus_factory, canvas)
    canvas.expires_in = 60  # under the five minutes left at which a token is refreshed first
    async with campus.rest() as client:
        await connect(await StudentBrowser(client).sign_in("student1"), canvas)
    before = await row_of(campus, await student_id(campus))
    canvas.seen.clear()
    canvas.expires_in = 3600
    assert not (await due(campus)).is_error
    assert [s.path for s in canvas.seen][:2] == ["/login/oauth2/token", "/api/v1/planner/items"]
    assert len(canvas.grants("refresh_token")) == 1
    after = await row_of(campus, await student_id(campus))
    assert before is not None and after is not None
    assert after["refreshed_at"] is not None and after["access_token"] != before["access_token"]
    assert after["refresh_token"] == before["refresh_token"]  # Canvas keeps the refresh token


async def test_a_token_canvas_rejects_early_is_refreshed_once_and_the_call_retried(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await canvas_campus(campus_factory, canvas)
    async with campus.rest() as client:
        await connect(await StudentBrowser(client).sign_in("student1"), canvas)
    canvas.seen.clear()
    canvas.expire_access_tokens()  # Canvas's clock: expired there, still an hour here
    answer = await due(campus)
    assert not answer.is_error and answer.structured_content["count"] == 9
    assert [s.path for s in canvas.seen][:3] == [
        "/api/v1/planner/items",
        "/login/oauth2/token",
        "/api/v1/planner/items",
    ]


async def test_a_token_revoked_at_canvas_asks_the_student_to_connect_again(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await canvas_campus(campus_factory, canvas)
    async with campus.rest() as client:
        browser = await StudentBrowser(client).sign_in("student1")
        await connect(browser, canvas)
        canvas.revoke_everything()  # the student removed the app under Approved Integrations in Canvas
        answer = await due(campus)
        link = f"{campus.settings.base_url}/dashboard/canvas"
        assert answer.is_error and "stopped working" in answer.content[0].text and link in answer.content[0].text
        row = await row_of(campus, await student_id(campus))
        assert row is not None and row["access_token"] is None and row["refresh_token"] is None and row["lost_at"]
        canvas.seen.clear()
        again = await due(campus)
        assert again.is_error and "Connect it again" in again.content[0].text and canvas.seen == []
        settings_page = (await browser.get("/dashboard/settings")).text
        assert "Stopped working on" in settings_page
        assert "Connect Canvas again" in (await browser.get("/dashboard/canvas")).text
        # Connecting again works as the first time did.
        await connect(browser, canvas)
    assert not (await due(campus)).is_error


async def test_a_student_who_never_connected_gets_the_link_not_a_failure(
    campus_factory: CampusFactory, canvas: FakeCanvas
) -> None:
    campus = await canvas_campus(campus_factory, canvas)
    answer = await due(campus)
    words = answer.content[0].text
    assert answer.is_error and "You have not connected your Canvas account yet" in words
    assert f"{campus.settings.base_url}/dashboard/canvas" in words and "Traceback" not in words
    async with campus.rest() as client:
        browser = await StudentBrowser(client).sign_in("student1")
        twin = await browser.get("/api/v1/me/canvas/grades")
        settings_page = (await browser.get("/dashboard/settings")).text
    assert twin.status_code == 409 and "/dashboard/canvas" in twin.json()["message"]
    # A bad argument is named first, whatever the connection (year 1 overflowed the campus-time window).
    async with campus.rest() as client:
        browser = await StudentBrowser(client).sign_in("student1")
        bad = await browser.get("/api/v1/me/canvas/due_work", params={"start_date": "0001-10-02"})
    assert bad.status_code == 400 and bad.json()["field"] == "start_date"
    # Settings offers it beside the connected apps, with the way to connect.
    assert '<a href="/dashboard/canvas" aria-label="Connect Canvas">Connect</a>' in settings_page
    assert canvas.api_requests() == []


async def test_a_callback_that_this_browser_did_not_start_connects_nothing(
    campus_factory: CampusFactory, canvas: FakeCanvas, monkeypatch: pytest.MonkeyPatch
) -> None:
    campus = await canvas_campus(campus_factory, canvas)
    callback = "/dashboard/canvas/callback"
    async with campus.rest() as client:
        mine = await StudentBrowser(client).sign_in("student1")
        theirs = await StudentBrowser(client).sign_in("student2")

        async def start(browser: StudentBrowser) -> dict[str, str]:
            page = await browser.get("/dashboard/canvas")
            went = await browser.post(
                "/dashboard/canvas/connect", data={"csrf_token": csrf_of(page.text)}, follow_redirects=False
            )
            return {k: v[0] for k, v in parse_qs(urlsplit(went.headers["location"]).query).items()}

        asked = await start(mine)
        canvas.approve = True
        async with httpx.AsyncClient() as canvas_side:
            approved = await canvas_side.get(f"{canvas.origin}/login/oauth2/auth", params=asked)
        code = parse_qs(urlsplit(approved.headers["location"]).query)["code"][0]
        # Another student's browser, a forged state, no state: refused, nothing connected.
        for browser, state in ((theirs, asked["state"]), (mine, "forged"), (mine, "")):
            refused = await browser.get(callback, params={"code": code, "state": state})
            assert refused.status_code == 400 and "nothing was connected" in refused.text
        # The state was used by the first answer (even a refused one): the right one now is a replay.
        replay = await mine.get(callback, params={"code": code, "state": asked["state"]})
        assert replay.status_code == 400
        # Too late: a state older than STATE_MINUTES.
        asked = await start(mine)
        monkeypatch.setattr(pages, "STATE_MINUTES", 0)
        late = await mine.get(callback, params={"code": "any", "state": asked["state"]})
        assert late.status_code == 400
        monkeypatch.setattr(pages, "STATE_MINUTES", 10)
        # The student said no at Canvas.
        asked = await start(mine)
        denied = await mine.get(callback, params={"error": "access_denied", "state": asked["state"]})
        assert "You did not allow access in Canvas" in denied.text
    assert canvas.grants("authorization_code") == []
    async with campus.sessions() as session:
        assert (await session.execute(text("SELECT count(*) FROM canvas_connections"))).scalar_one() == 0


async def test_no_token_or_secret_reaches_a_log_line_or_a_page(
    campus_factory: CampusFactory, canvas: FakeCanvas, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    campus = await canvas_campus(campus_factory, canvas, canvas={"cache_seconds": 0})
    canvas.expires_in = 60  # a refresh too
    async with campus.rest() as client:
        browser = await StudentBrowser(client).sign_in("student1")
        shown = [(await connect(browser, canvas)).text]
        canvas.expires_in = 3600
        await due(campus)
        canvas.fail["/api/v1/planner/items"] = 500
        await due(campus)  # an error, logged as such
        shown.append((await browser.get("/dashboard/canvas")).text)
        shown.append((await browser.get("/dashboard/settings")).text)
        shown.append((await browser.get("/dashboard/activity/export")).text)
        page = await browser.get("/dashboard/canvas")
        shown.append((await browser.post("/dashboard/canvas/disconnect", data={"csrf_token": csrf_of(page.text)})).text)
    secrets = [CLIENT_SECRET, *canvas.tokens, *canvas.refresh_tokens]
    logged = "\n".join(f"{record.getMessage()} {record.exc_text or ''}" for record in caplog.records)
    assert len(secrets) == 4  # the key's secret, two access tokens (one refreshed) and the refresh token
    for secret in secrets:
        assert secret not in logged
        assert all(secret not in page for page in shown)
