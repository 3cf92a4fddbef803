"""Sign-in limits that lock out an attacker, not a campus (issue 30, point 2), and the client's
address behind a proxy (issue 26, points 2 and 5), over real HTTP on loopback.

A NAT or a proxy puts a whole campus behind one address: failures are counted per account and per
address, and the address is the X-Forwarded-For client only when the peer is a trusted proxy. The
forged headers below come from the test's own connection, so the peer is 127.0.0.1: "trusted"
lists it in CAMPUS_MCP_TRUSTED_PROXIES, "untrusted" lists another network.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import free_port, parse_forms, serve_on_loopback


@dataclass
class Live:
    base: str
    campus: CampusHarness


@pytest.fixture
async def live(campus_factory: CampusFactory, request: pytest.FixtureRequest) -> AsyncIterator[Live]:
    port = free_port()
    overrides: dict[str, Any] = getattr(request, "param", {})
    campus = await campus_factory(plugins=[], demo=True, public_url=f"http://127.0.0.1:{port}", **overrides)
    # As ``campus-mcp serve`` runs it: uvicorn's own X-Forwarded-For handling off, the campus decides.
    async with serve_on_loopback(campus.app, port, proxy_headers=False) as base:
        yield Live(base=base, campus=campus)


def _from(address: str | None) -> dict[str, str]:
    return {"X-Forwarded-For": address} if address else {}


async def _sign_in(base: str, username: str, password: str, *, address: str | None = None) -> httpx.Response:
    """One sign-in from a fresh browser (its own session and CSRF token)."""
    async with httpx.AsyncClient(timeout=60, headers=_from(address)) as browser:
        page = await browser.get(base + "/login")
        csrf = next(f.value for f in parse_forms(page.text)[0].fields if f.name == "csrf_token")
        form = {"csrf_token": csrf, "username": username, "password": password, "next": "/dashboard"}
        return await browser.post(base + "/login", data=form)


async def _cli(campus: CampusHarness, *arguments: str) -> tuple[int, str]:
    """``campus-mcp ARGUMENTS`` in its own process, on the served campus's database."""
    environment = {**os.environ, "CAMPUS_MCP_DATABASE_URL": campus.settings.database_url}
    command = Path(sys.executable).with_name("campus-mcp")
    process = await asyncio.create_subprocess_exec(
        str(command), *arguments, env=environment, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    output, _ = await process.communicate()
    return int(process.returncode or 0), output.decode()


# per account, not per address ---------------------------------------------------------------


async def test_one_attackers_ten_failures_do_not_stop_another_student_on_the_address(live: Live) -> None:
    # Before: the tenth failure locked the address, and student2's right password got 429.
    for _ in range(10):
        assert (await _sign_in(live.base, "student1", "guess")).status_code == 401
    other = await _sign_in(live.base, "student2", "demo")
    assert other.status_code == 303, other.text
    locked = await _sign_in(live.base, "student1", "guess")
    assert locked.status_code == 429
    assert "Too many failed sign-ins for this account" in locked.text


@pytest.mark.parametrize("live", [{"trusted_proxies": ["127.0.0.1"]}], indirect=True)
async def test_forty_guesses_at_one_account_are_stopped_from_any_address_and_unlock_clears_it(live: Live) -> None:
    # Each guess from another address (a botnet, through the campus's proxy): before, each address
    # had ten guesses of its own, so all forty were checked.
    answers = [await _sign_in(live.base, "Student1", f"guess-{n}", address=f"203.0.113.{n}") for n in range(40)]
    statuses = [answer.status_code for answer in answers]
    assert statuses == [401] * 10 + [429] * 30, statuses
    assert "ask your campus IT to unlock it" in answers[-1].text and answers[-1].headers["retry-after"]
    # The account is locked, so even its right password waits (the guesser must not learn it)...
    assert (await _sign_in(live.base, "student1", "demo", address="198.51.100.1")).status_code == 429
    # ...while another student at the same addresses signs in.
    assert (await _sign_in(live.base, "student2", "demo", address="203.0.113.1")).status_code == 303

    code, output = await _cli(live.campus, "students", "unlock", "STUDENT1")
    assert code == 0, output
    assert "Unlocked the account 'student1': cleared 10 failed sign-in(s)" in output
    assert (await _sign_in(live.base, "student1", "demo", address="203.0.113.1")).status_code == 303


async def test_unlock_refuses_what_it_cannot_unlock(live: Live) -> None:
    code, output = await _cli(live.campus, "students", "unlock")
    assert code != 0 and "give a USERNAME to unlock, or --address ADDRESS" in output
    code, output = await _cli(live.campus, "students", "unlock", "--address", "not-an-address")
    assert code != 0 and "'not-an-address' is not an IPv4 or IPv6 address" in output


# the address's soft and hard phases ---------------------------------------------------------


@pytest.mark.parametrize("live", [{"login_address_max_failures": 2}], indirect=True)
async def test_past_the_address_threshold_wrong_passwords_are_slowed_and_right_ones_sign_in(live: Live) -> None:
    # A guesser sprays one guess at each of many names: no account reaches its own limit.
    for n in range(2):
        assert (await _sign_in(live.base, f"nobody{n}", "guess")).status_code == 401
    started = time.perf_counter()
    slowed = await _sign_in(live.base, "nobody2", "guess")
    assert slowed.status_code == 401 and time.perf_counter() - started >= 2.0
    started = time.perf_counter()
    assert (await _sign_in(live.base, "student2", "demo")).status_code == 303
    assert time.perf_counter() - started < 2.0  # a right password is not slowed

    # Ten times the threshold (20) is an attack: then the address is refused, students included.
    burst = await asyncio.gather(*(_sign_in(live.base, f"spray{n}", "guess") for n in range(17)))
    assert {answer.status_code for answer in burst} == {401}
    blocked = await _sign_in(live.base, "student3", "demo")
    assert blocked.status_code == 429 and "from your network address" in blocked.text

    code, output = await _cli(live.campus, "students", "unlock", "--address", "127.0.0.1")
    assert code == 0 and "Unlocked the address 127.0.0.1" in output, output
    assert (await _sign_in(live.base, "student3", "demo")).status_code == 303


# behind a proxy (issue 26, point 2) ---------------------------------------------------------

BLOCKING = {"login_address_max_failures": 1, "login_max_failures": 100}


async def _spray(base: str, address: Callable[[int], str]) -> None:
    """Ten failures at ten names (the address's hard phase is past 10 here), the slowed ones at once."""
    assert (await _sign_in(base, "spray0", "guess", address=address(0))).status_code == 401
    burst = await asyncio.gather(*(_sign_in(base, f"spray{n}", "guess", address=address(n)) for n in range(1, 10)))
    assert {answer.status_code for answer in burst} == {401}


@pytest.mark.parametrize("live", [BLOCKING | {"trusted_proxies": ["127.0.0.1"]}], indirect=True)
async def test_behind_a_trusted_proxy_the_address_limit_counts_the_forwarded_client(live: Live) -> None:
    # Before: the proxy (the peer) was counted, so one client's failures locked out everyone.
    await _spray(live.base, lambda n: "203.0.113.7")
    assert (await _sign_in(live.base, "student1", "demo", address="203.0.113.7")).status_code == 429
    # The campus behind the proxy, and a client that puts a forged entry of its own in front.
    assert (await _sign_in(live.base, "student1", "demo", address="198.51.100.9")).status_code == 303
    assert (await _sign_in(live.base, "student2", "demo", address="10.9.9.9, 198.51.100.9")).status_code == 303


@pytest.mark.parametrize("live", [BLOCKING | {"trusted_proxies": ["10.0.0.0/8"]}], indirect=True)
async def test_from_an_untrusted_peer_a_forged_forwarded_for_does_not_escape_the_limit(live: Live) -> None:
    await _spray(live.base, lambda n: f"203.0.113.{n}")
    refused = await _sign_in(live.base, "student1", "demo", address="198.51.100.9")
    assert refused.status_code == 429 and "from your network address" in refused.text


async def _register(base: str, address: str) -> int:
    metadata = {"client_name": "Probe", "redirect_uris": ["http://127.0.0.1:9/callback"]}
    async with httpx.AsyncClient(timeout=30) as client:
        answer = await client.post(base + "/api/oauth/register", json=metadata, headers=_from(address))
        return answer.status_code


REGISTER_LIMITED = {"rate_limits": True, "rate_limit_overrides": ["oauth/register=2/600"]}


@pytest.mark.parametrize("live", [REGISTER_LIMITED | {"trusted_proxies": ["127.0.0.1"]}], indirect=True)
async def test_registration_limit_counts_the_forwarded_client_of_a_trusted_proxy(live: Live) -> None:
    assert [await _register(live.base, "203.0.113.7") for _ in range(3)] == [201, 201, 429]
    assert await _register(live.base, "198.51.100.9") == 201


@pytest.mark.parametrize("live", [REGISTER_LIMITED | {"trusted_proxies": ["10.0.0.0/8"]}], indirect=True)
async def test_registration_limit_ignores_forwarded_for_from_an_untrusted_peer(live: Live) -> None:
    assert [await _register(live.base, f"203.0.113.{n}") for n in range(3)] == [201, 201, 429]


# /metrics behind a proxy (issue 26, point 5) ------------------------------------------------


async def _metrics(base: str, address: str | None) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as client:
        return await client.get(base + "/metrics", headers=_from(address))


async def test_metrics_are_not_readable_through_a_same_host_proxy_by_default(live: Live) -> None:
    # A same-host proxy connects from loopback and says whom it forwards for. Before: 200.
    through_proxy = await _metrics(live.base, "203.0.113.7")
    assert through_proxy.status_code == 403
    assert "CAMPUS_MCP_TRUSTED_PROXIES" in through_proxy.text and "Traceback" not in through_proxy.text
    assert (await _metrics(live.base, None)).status_code == 200  # a scraper on the host itself


@pytest.mark.parametrize("live", [{"trusted_proxies": ["127.0.0.1"]}], indirect=True)
async def test_metrics_through_a_trusted_proxy_check_the_forwarded_client(live: Live) -> None:
    assert (await _metrics(live.base, "203.0.113.7")).status_code == 403
    assert (await _metrics(live.base, "127.0.0.1")).status_code == 200  # a scraper through the proxy


# local passwords switched off (issue 26, point 5) -------------------------------------------

CAMPUS_ONLY = {
    "local_accounts": False,
    "oidc_issuer": "https://idp.campus.example",
    "oidc_client_id": "campus-mcp",
}


@pytest.mark.parametrize("live", [CAMPUS_ONLY], indirect=True)
async def test_without_local_accounts_the_page_offers_the_campus_button_only(live: Live) -> None:
    async with httpx.AsyncClient(timeout=30) as browser:
        page = await browser.get(live.base + "/login?next=/dashboard")
        assert page.status_code == 200
        assert "Sign in with your campus account" in page.text and "/login/oidc?next=" in page.text
        assert 'type="password"' not in page.text and "local account" not in page.text
        # An old page or a script still posting a password: refused with words, nothing checked.
        refused = await browser.post(live.base + "/login", data={"username": "student1", "password": "demo"})
    assert refused.status_code == 403
    assert "Sign-in with a username and password is switched off on this campus" in refused.text
    assert "campus sign-in button" in refused.text and 'type="password"' not in refused.text


@pytest.mark.parametrize("live", [{"local_accounts": False}], indirect=True)
async def test_without_local_accounts_or_a_campus_provider_the_page_says_whom_to_ask(live: Live) -> None:
    async with httpx.AsyncClient(timeout=30) as browser:
        page = await browser.get(live.base + "/login")
    assert 'type="password"' not in page.text
    assert "no campus sign-in is set up. Ask your campus IT" in page.text
