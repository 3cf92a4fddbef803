"""Sign-in hardening (issue 9): an atomic per-address limit, sessions that end for real on sign-out
and on a password change, and one password verification on every path, over real HTTP on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from campus_mcp.assembly.migrate import upgrade
from campus_mcp.assembly.registry import load_registry
from campus_mcp.base.settings import Settings
from campus_mcp.cli.main import main
from campus_mcp.oauth import accounts
from campus_mcp.oauth.accounts import authenticate, create_local_student, student_by_username
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import free_port, parse_forms, serve_on_loopback
from click.testing import CliRunner


@dataclass
class Live:
    base: str
    campus: CampusHarness


@pytest.fixture
async def live(campus_factory: CampusFactory, request: pytest.FixtureRequest) -> AsyncIterator[Live]:
    port = free_port()
    overrides: dict[str, Any] = getattr(request, "param", {})
    campus = await campus_factory(plugins=[], demo=True, public_url=f"http://127.0.0.1:{port}", **overrides)
    async with serve_on_loopback(campus.app, port) as base:
        yield Live(base=base, campus=campus)


async def _csrf(browser: httpx.AsyncClient, base: str) -> str:
    page = await browser.get(base + "/login")
    return next(f.value for f in parse_forms(page.text)[0].fields if f.name == "csrf_token")


async def _sign_in(browser: httpx.AsyncClient, base: str, username: str, password: str) -> httpx.Response:
    csrf = await _csrf(browser, base)
    return await browser.post(
        base + "/login", data={"csrf_token": csrf, "username": username, "password": password, "next": "/dashboard"}
    )


# the per-address limit ----------------------------------------------------------------------

PARALLEL = 24


@pytest.mark.parametrize("live", [{"login_max_failures": 2}], indirect=True)
async def test_parallel_wrong_passwords_are_checked_at_most_the_limit(live: Live) -> None:
    # Before: each attempt counted the failures, then verified (a fraction of a second), then
    # recorded: all 24 were checked against a limit of 2.
    async with httpx.AsyncClient(timeout=120) as browser:
        csrf = await _csrf(browser, live.base)
        form = {"csrf_token": csrf, "username": "student1", "password": "guess"}
        answers = await asyncio.gather(*(browser.post(live.base + "/login", data=form) for _ in range(PARALLEL)))
        statuses = [answer.status_code for answer in answers]
        checked = statuses.count(401)
        assert checked <= 2, statuses
        assert statuses.count(429) == PARALLEL - checked, statuses
        refused = next(answer for answer in answers if answer.status_code == 429)
        assert "Too many failed sign-ins" in refused.text and refused.headers["retry-after"]
        # What the burst did not use of the limit is still there, and no more.
        for _ in range(2 - checked):
            assert (await browser.post(live.base + "/login", data=form)).status_code == 401
        assert (await browser.post(live.base + "/login", data=form)).status_code == 429
        # The right password is refused too while the window lasts: the limit is per address.
        right = await browser.post(live.base + "/login", data=form | {"password": "demo"})
        assert right.status_code == 429


@pytest.mark.parametrize("live", [{"login_max_failures": 2}], indirect=True)
async def test_a_successful_sign_in_does_not_count_against_the_limit(live: Live) -> None:
    async with httpx.AsyncClient(timeout=30) as browser:
        for _ in range(4):
            signed_in = await _sign_in(browser, live.base, "student1", "demo")
            assert signed_in.status_code == 303, signed_in.text
        wrong = await _sign_in(browser, live.base, "student1", "guess")
        assert wrong.status_code == 401


# sessions end for real ----------------------------------------------------------------------


async def test_a_copied_session_cookie_stops_working_after_sign_out(live: Live) -> None:
    async with httpx.AsyncClient(timeout=30) as original, httpx.AsyncClient(timeout=30) as thief:
        assert (await _sign_in(original, live.base, "student1", "demo")).status_code == 303
        thief.cookies = httpx.Cookies(original.cookies)
        assert (await thief.get(live.base + "/dashboard")).status_code == 200
        page = await original.get(live.base + "/dashboard")
        sign_out = next(form for form in parse_forms(page.text) if form.action == "/logout")
        signed_out = await original.post(live.base + "/logout", data={f.name: f.value for f in sign_out.fields})
        assert signed_out.status_code == 303
        stale = await thief.get(live.base + "/dashboard")
        assert stale.status_code == 303 and stale.headers["location"].startswith("/login"), stale.text
        # The stale cookie is cleared, and the student can sign in again.
        assert "campus_session=null" in stale.headers.get("set-cookie", "")
        assert (await _sign_in(original, live.base, "student1", "demo")).status_code == 303
        assert (await original.get(live.base + "/dashboard")).status_code == 200


async def test_a_password_change_ends_every_session_of_the_student(live: Live) -> None:
    async with live.campus.sessions() as session, session.begin():
        await create_local_student(session, "grace", "cobol-1959")
    async with httpx.AsyncClient(timeout=30) as browser:
        assert (await _sign_in(browser, live.base, "grace", "cobol-1959")).status_code == 303
        assert (await browser.get(live.base + "/dashboard")).status_code == 200
        async with live.campus.sessions() as session, session.begin():
            student = await student_by_username(session, "grace")
            assert student is not None
            await accounts.set_password(session, student, "fortran-1957")
        ended = await browser.get(live.base + "/dashboard")
        assert ended.status_code == 303 and ended.headers["location"].startswith("/login")
        assert (await _sign_in(browser, live.base, "grace", "cobol-1959")).status_code == 401
        assert (await _sign_in(browser, live.base, "grace", "fortran-1957")).status_code == 303


def test_students_password_changes_the_password(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}"
    monkeypatch.setenv("CAMPUS_MCP_DATABASE_URL", url)
    upgrade(load_registry(Settings(plugins=[])))
    runner = CliRunner()
    assert runner.invoke(main, ["students", "add", "grace", "--password", "cobol-1959"]).exit_code == 0
    changed = runner.invoke(main, ["students", "password", "Grace", "--password", "fortran-1957"])
    assert changed.exit_code == 0, changed.output
    assert "signed out" in changed.output and "fortran" not in changed.output
    unknown = runner.invoke(main, ["students", "password", "nobody", "--password", "x"])
    assert unknown.exit_code != 0 and "no student named 'nobody'" in unknown.output

    async def check(password: str) -> bool:
        from campus_mcp.base.db import make_engine, make_sessions

        engine = make_engine(url)
        try:
            async with make_sessions(engine)() as session:
                return await authenticate(session, Settings(), "grace", password) is not None
        finally:
            await engine.dispose()

    assert not asyncio.run(check("cobol-1959"))
    assert asyncio.run(check("fortran-1957"))


# the same cost whoever asks -----------------------------------------------------------------


class CountingHasher(PasswordHasher):
    """The project's hasher, counting the verifications (the costly step timing would show)."""

    verified = 0

    def verify(self, hash: str | bytes, password: str | bytes) -> bool:
        type(self).verified += 1
        return super().verify(hash, password)


async def test_every_sign_in_costs_one_password_verification(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    async with live.campus.sessions() as session, session.begin():
        await create_local_student(session, "grace", "cobol-1959")
    accounts.dummy_hash()  # made once, outside what is counted
    monkeypatch.setattr(accounts, "password_hasher", CountingHasher())
    cases = [
        ("nobody", "guess", 401),  # an unknown username
        ("student1", "guess", 401),  # a demo student, wrong password
        ("student1", "demo", 303),  # a demo student, right password
        ("grace", "guess", 401),  # a local student, wrong password
        ("grace", "cobol-1959", 303),  # a local student, right password
        ("grace", "", 401),  # no password at all
    ]
    for username, password, status in cases:
        async with httpx.AsyncClient(timeout=30) as browser:
            CountingHasher.verified = 0
            answer = await _sign_in(browser, live.base, username, password)
            assert answer.status_code == status, (username, answer.text)
            assert CountingHasher.verified == 1, (username, password, CountingHasher.verified)


async def test_a_demo_student_outside_demo_mode_costs_one_verification(
    monkeypatch: pytest.MonkeyPatch, campus_factory: CampusFactory
) -> None:
    campus = await campus_factory(plugins=[], demo=True, demo_mode=False)
    accounts.dummy_hash()
    monkeypatch.setattr(accounts, "password_hasher", CountingHasher())
    CountingHasher.verified = 0
    async with campus.sessions() as session:
        assert await authenticate(session, campus.settings, "student1", "demo") is None
    assert CountingHasher.verified == 1
