"""A watched seat's opening reaches the student by e-mail (issue 39, point 5).

A real SMTP server (``aiosmtpd``) on loopback receives what the campus sends. The campus is
:mod:`tests.mcp.test_seat_subscriptions`'s: a fake Banner (the recorded TAMU term) whose seats a test
opens and closes, the catalog's own seat refresh reading it. What a student sees is checked: the
watch answer's sentence, the e-mail (one per opening, not per refresh), its stop link, the Seat
watches page; a refusing SMTP server's mail is retried, counted and shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.policy
import re
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from aiosmtpd.controller import Controller
from campus_mcp.base.metrics import value
from campus_mcp.cli.check import mail_server_problems, settings_problems
from campus_mcp.oauth.accounts import Student
from campus_mcp.testing import CampusFactory, TestDatabases, load_plugins, private_redis, serve
from campus_mcp.testing import test_settings as settings_for
from campus_mcp.testing.oauth import free_port, parse_forms
from campus_schedule.models import SeatMail
from campus_schedule.seat_mail import MAX_ATTEMPTS
from campus_schedule.watch_notice import how_told
from sqlalchemy import select, update

from tests.mcp.test_seat_subscriptions import (
    PASSWORD,
    TERM,
    answer_of,
    answering_yes,
    open_a_seat,
    prepared_campus,
    registration_campus,
)
from tests.support.endpoints import MODERN, mcp_client, token_for

ADDRESS = "jane.doe@wit.edu"
MAIL_WITHIN_SECONDS = 20.0


class Mailbox:
    """What the SMTP server received, or the answer it gives instead (``refuse``)."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.refuse = ""

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.refuse:
            return self.refuse
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.messages.append(parsed)
        return "250 Message accepted"

    async def received(self, count: int) -> list[EmailMessage]:
        with anyio.fail_after(MAIL_WITHIN_SECONDS):
            for _ in range(int(MAIL_WITHIN_SECONDS / 0.05) + 1):  # the server's thread appends
                if len(self.messages) >= count:
                    break
                await asyncio.sleep(0.05)
        return self.messages


@contextlib.contextmanager
def smtp_server() -> Iterator[tuple[Mailbox, int]]:
    box = Mailbox()
    port = free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield box, port
    finally:
        controller.stop()


def mail_settings(port: int) -> dict[str, Any]:
    return {"smtp_host": "127.0.0.1", "smtp_port": port, "smtp_tls": "none", "smtp_sender": "seats@wit.edu"}


def fill_the_seat(fake: Any, crn: str) -> None:
    for section in fake.sections:
        if str(section["courseReferenceNumber"]) == crn:
            section["seatsAvailable"], section["enrollment"] = 0, section["maximumEnrollment"]


async def give_address(campus: Any, address: str | None) -> None:
    async with campus.sessions() as session:
        await session.execute(update(Student).where(Student.username == "student1").values(email=address))
        await session.commit()


def stop_link_in(message: EmailMessage) -> str:
    body = message.get_content()
    found = re.search(r"Stop watching this section: (\S+)", body)
    assert found is not None, body
    return found.group(1)


async def signed_in_page(base: str, path: str) -> str:
    """``path`` as student1 signed in with their password (the sign-in of on_the_dashboard)."""
    async with httpx2.AsyncClient(base_url=base, timeout=30, follow_redirects=True) as browser:
        login = await browser.get("/login", params={"next": "/dashboard"})
        data = {f.name: f.value for f in parse_forms(login.text)[-1].fields if f.kind == "hidden"}
        signed_in = await browser.post("/login", data=data | {"username": "student1", "password": PASSWORD})
        assert signed_in.status_code == 200, signed_in.text
        page = await browser.get(path)
        assert page.status_code == 200, page.text
        return page.text


async def test_one_email_per_opening_with_a_link_that_stops_the_watch(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    with smtp_server() as (box, smtp_port):
        async with registration_campus(campus_factory, monkeypatch, **mail_settings(smtp_port)) as (
            url,
            campus,
            fake,
            crn,
        ):
            base = url.removesuffix("/api/mcp")
            await give_address(campus, ADDRESS)
            token = await token_for(campus.deployment, ["schedule:read", "schedule:write"])
            yes = answering_yes()
            async with mcp_client(url, token, MODERN, elicitation_callback=yes) as client:
                watched = answer_of(await client.call_tool("watch_section", {"term": TERM, "crn": crn}))
                # Refreshes of a full section send nothing.
                assert (await campus.run_job("catalog.seat_refresh")).outcome == "ok"
                assert (await campus.run_job("schedule.seat_mail")).outcome == "ok"
                assert box.messages == []
                open_a_seat(fake, crn)
                for _ in range(2):  # the opening, then a refresh that finds the seat still open
                    assert (await campus.run_job("catalog.seat_refresh")).outcome == "ok"
                    assert (await campus.run_job("schedule.seat_mail")).outcome == "ok"
                first = (await box.received(1))[0]
                fill_the_seat(fake, crn)
                assert (await campus.run_job("catalog.seat_refresh")).outcome == "ok"
                assert (await campus.run_job("schedule.seat_mail")).outcome == "ok"
                open_a_seat(fake, crn)  # it filled and opened again: a new opening
                assert (await campus.run_job("catalog.seat_refresh")).outcome == "ok"
                assert (await campus.run_job("schedule.seat_mail")).outcome == "ok"
                both = await box.received(2)
                page = await signed_in_page(base, "/dashboard/watches")
                link = stop_link_in(first)
                async with httpx2.AsyncClient(timeout=30) as someone:
                    shown = await someone.get(link)  # a mail scanner's GET stops nothing
                    still = answer_of(await client.call_tool("list_watches", {}))
                    tampered = await someone.post(link[:-3] + "AAA")
                    stopped = await someone.post(link)
                    again = await someone.post(link)
                after = answer_of(await client.call_tool("list_watches", {}))
    told = watched["how_told"]
    assert "one e-mail at j***@wit.edu" in told and "every 30 minutes" in told, told
    assert ADDRESS not in str(watched) and "j***@wit.edu" in yes.asked[0], yes.asked
    assert len(both) == 2, [m["Subject"] for m in both]
    assert first["To"] == ADDRESS and first["From"] == "seats@wit.edu"
    assert first["Subject"].startswith("A seat opened in ") and f"(CRN {crn})" in first["Subject"]
    assert first["List-Unsubscribe"] == f"<{link}>" and link.startswith(f"{base}/dashboard/watches/stop?t=")
    assert "does not register you" in first.get_content()
    assert page.count("e-mailed to j***@wit.edu") == 2, page
    assert shown.status_code == 200 and "Stop watching" in shown.text and f"CRN {crn}" in shown.text
    assert [w["crn"] for w in still["watches"]] == [crn]
    assert tampered.status_code == 404 and [w["crn"] for w in still["watches"]] == [crn]
    assert stopped.status_code == 200 and "You no longer watch" in stopped.text, stopped.text
    assert again.status_code == 404 and "Nothing to stop" in again.text
    assert after["watches"] == []


async def test_mail_the_smtp_server_refuses_is_retried_counted_and_shown_until_given_up(
    campus_factory: CampusFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    with smtp_server() as (box, smtp_port):
        box.refuse = "451 4.3.0 Mailbox temporarily unavailable"
        async with registration_campus(campus_factory, monkeypatch, **mail_settings(smtp_port)) as (
            url,
            campus,
            fake,
            crn,
        ):
            base = url.removesuffix("/api/mcp")
            token = await token_for(campus.deployment, ["schedule:read", "schedule:write"])
            async with mcp_client(url, token, MODERN, elicitation_callback=answering_yes()) as client:
                # student1 is a local account made without an address: told so, then given one.
                no_address = answer_of(await client.call_tool("watch_section", {"term": TERM, "crn": crn}))
                await give_address(campus, ADDRESS)
                with_address = answer_of(await client.call_tool("list_watches", {}))
            failed_before = value("seat_mail", outcome="failed")
            open_a_seat(fake, crn)
            assert (await campus.run_job("catalog.seat_refresh")).outcome == "ok"
            assert (await campus.run_job("schedule.seat_mail")).outcome == "ok"
            # The listener of this process may have tried first; either way one try is recorded.
            async with campus.sessions() as session:
                (mail,) = list(await session.scalars(select(SeatMail)))
            waiting = await signed_in_page(base, "/dashboard/watches")
            # The retry is due (as after its delay), and this is the last try.
            async with campus.sessions() as session:
                await session.execute(
                    update(SeatMail).values(attempts=MAX_ATTEMPTS - 1, next_attempt_at=mail.created_at)
                )
                await session.commit()
            assert (await campus.run_job("schedule.seat_mail")).outcome == "ok"
            async with campus.sessions() as session:
                (given_up,) = list(await session.scalars(select(SeatMail)))
            shown = await signed_in_page(base, "/dashboard/watches")
    assert no_address["how_told"].startswith("You won't be e-mailed: WIT has no e-mail address for you")
    assert with_address["how_told"].startswith("When a seat opens you get one e-mail at j***@wit.edu")
    assert box.messages == []
    assert (mail.status, mail.attempts) == ("pending", 1) and "451" in (mail.last_error or "")
    assert mail.next_attempt_at > mail.created_at
    assert f"not sent yet (try 1 of {MAX_ATTEMPTS}: the SMTP server answered 451" in waiting, waiting
    assert (given_up.status, given_up.attempts) == ("failed", MAX_ATTEMPTS)
    assert "not e-mailed</strong>: the SMTP server answered 451" in shown, shown
    assert value("seat_mail", outcome="failed") >= failed_before + 1
    assert value("seat_mail", outcome="gave_up") == 1


def test_the_watch_sentence_says_when_nobody_is_emailed_and_when_seats_are_not_refreshed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A campus without SMTP, and one without Banner (so no seat refresh), with their own plugins."""
    for name in ("BANNER_URL", "BANNER_FILE"):
        monkeypatch.delenv(f"CAMPUS_MCP_CATALOG_{name}", raising=False)
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", "https://banner.wit.edu/StudentRegistrationSsb")
    live = settings_for("sqlite+aiosqlite://", plugins=["catalog", "schedule"])
    no_mail = how_told(live, load_plugins(live).jobs, ADDRESS)
    monkeypatch.delenv("CAMPUS_MCP_CATALOG_BANNER_URL")
    unrefreshed = settings_for("sqlite+aiosqlite://", plugins=["catalog", "schedule"], **mail_settings(25))
    by_hand = how_told(unrefreshed, load_plugins(unrefreshed).jobs, ADDRESS)
    assert no_mail.startswith("You won't be e-mailed: WIT has not set up e-mail"), no_mail
    assert "Seats are refreshed every 30 minutes" in no_mail, no_mail
    assert by_hand.startswith("When a seat opens you get one e-mail at j***@wit.edu"), by_hand
    assert "Seats are not refreshed on this campus" in by_hand, by_hand


async def test_check_names_smtp_problems_without_echoing_the_password(tmp_path: Path) -> None:
    password = "a-secret-smtp-password"
    loose = settings_for(
        "sqlite+aiosqlite://",
        smtp_host="mail.wit.edu",
        smtp_tls="none",
        smtp_username="seats",
        smtp_password=password,
        smtp_sender="not an address",
    )
    found = [str(p) for p in settings_problems(loose)]
    with smtp_server() as (_box, smtp_port):
        reachable = await mail_server_problems(settings_for("sqlite+aiosqlite://", **mail_settings(smtp_port)))
    nobody = await mail_server_problems(settings_for("sqlite+aiosqlite://", **mail_settings(free_port())))
    assert any("CAMPUS_MCP_SMTP_SENDER 'not an address' is not an e-mail address" in p for p in found), found
    assert any("password would cross the network in the clear" in p for p in found), found
    assert reachable == []
    assert len(nobody) == 1 and "could not be reached" in nobody[0].text, nobody
    assert all(password not in text for text in [*found, *(p.text for p in nobody)])


async def test_two_workers_with_redis_send_one_email_per_opening(
    campus_factory: CampusFactory,
    campus_databases: TestDatabases,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """``campus-mcp serve --workers 2`` on PostgreSQL with a private Redis, scheduler off: the seat
    refresh runs in this process and publishes through Redis, every worker hears it and looks for
    the opening at once, and the claim in the database lets exactly one of them send."""
    if not campus_databases.postgres:
        pytest.skip("several workers need PostgreSQL (CAMPUS_MCP_TEST_DATABASE_URL)")
    port = free_port()
    with smtp_server() as (box, smtp_port), private_redis(tmp_path / "redis") as (redis_url, _redis):
        mail = mail_settings(smtp_port)
        async with prepared_campus(campus_factory, monkeypatch, port, redis_url=redis_url, **mail) as (
            campus,
            fake,
            crn,
            banner_url,
        ):
            await give_address(campus, ADDRESS)
            env = {
                "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url,
                "CAMPUS_MCP_SECRET_KEY": campus.settings.secret_key.get_secret_value(),
                "CAMPUS_MCP_REDIS_URL": redis_url,
                "CAMPUS_MCP_PLUGINS": "catalog,schedule",
                "CAMPUS_MCP_ANONYMOUS_ACCESS": "false",
                "CAMPUS_MCP_SCHEDULER": "false",
                "CAMPUS_MCP_RATE_LIMITS": "false",
                "CAMPUS_MCP_PUBLIC_URL": f"http://127.0.0.1:{port}",
                "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
                "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
                "CAMPUS_MCP_CATALOG_BANNER_URL": banner_url,
                "CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP": "true",
                "CAMPUS_MCP_CATALOG_BANNER_REQUESTS_PER_MINUTE": "6000",
                "CAMPUS_MCP_CATALOG_BANNER_PAGE_SIZE": "50",
                **{f"CAMPUS_MCP_{name.upper()}": str(setting) for name, setting in mail.items()},
            }
            token = await token_for(campus.deployment, ["schedule:read", "schedule:write"])
            log_path = tmp_path / "serve.log"
            with contextlib.ExitStack() as stack:
                served = await asyncio.to_thread(
                    stack.enter_context,
                    serve(env, port=port, log_path=log_path, args=["--no-prepare", "--workers", "2"]),
                )
                async with mcp_client(served.mcp_url, token, MODERN, elicitation_callback=answering_yes()) as client:
                    answer_of(await client.call_tool("watch_section", {"term": TERM, "crn": crn}))
                open_a_seat(fake, crn)
                assert (await campus.run_job("catalog.seat_refresh")).outcome == "ok"
                await box.received(1)
                # Both workers looked (each logs its pass); only then is "exactly one" meaningful.
                for _ in range(int(MAIL_WITHIN_SECONDS / 0.1)):
                    if log_path.read_text().count("seat mail pass:") >= 2:
                        break
                    await asyncio.sleep(0.1)
                async with campus.sessions() as session:
                    mails = list(await session.scalars(select(SeatMail)))
    assert log_path.read_text().count("seat mail pass:") >= 2, log_path.read_text()[-3000:]
    assert len(box.messages) == 1, [m["Subject"] for m in box.messages]
    assert [(m.opening, m.status, m.attempts) for m in mails] == [(1, "sent", 1)]
