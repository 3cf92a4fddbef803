"""``campus-mcp token``: the printed token works on /api/mcp for the scopes it was given, and only
those; outside demo mode it refuses without --yes-i-am-an-admin; a bad scope or student is named.

The command runs as a real subprocess (what ``$(campus-mcp token ...)`` does) against the
database of a demo campus that is served on loopback; the real SDK client sends the token.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import httpx2
from campus_mcp.testing import CampusFactory
from campus_mcp.testing.oauth import free_port, serve_on_loopback
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import select

CLI = Path(sys.executable).parent / "campus-mcp"
TOKEN_SHAPE = re.compile(r"cmcp_at_[A-Za-z0-9_-]{40,}")


async def run_token(tmp_path: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    env.update(
        {
            "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
            "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
            **{f"CAMPUS_MCP_{key.upper()}": value for key, value in settings.items()},
        }
    )
    return await asyncio.to_thread(
        subprocess.run,
        [str(CLI), "token", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def call_tools(mcp_url: str, token: str, calls: dict[str, dict[str, Any]]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(mcp_url, http_client=http), mode="2026-07-28") as client,  # type: ignore[arg-type]
    ):
        for name, arguments in calls.items():
            results[name] = await client.call_tool(name, arguments)
    return results


async def test_the_printed_token_works_for_its_scopes_only(campus_factory: CampusFactory, tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    campus = await campus_factory(demo=True, anonymous_access=False, public_url=base)
    database_url = campus.settings.database_url
    made = await run_token(
        tmp_path, "--student", "student1", "--scopes", "schedule:read", database_url=database_url, public_url=base
    )
    assert made.returncode == 0, made.stderr
    # Only the token on stdout, so $(campus-mcp token ...) is the token; what it is for on stderr.
    assert TOKEN_SHAPE.fullmatch(made.stdout.strip()), made.stdout
    token = made.stdout.strip()
    assert token not in made.stderr
    assert "student1" in made.stderr and "schedule:read" in made.stderr and "friends:read" not in made.stderr

    from campus_schedule.models import Enrollment

    async with campus.sessions() as session:
        crns = set((await session.scalars(select(Enrollment.crn).where(Enrollment.student_id == 1))).all())
    async with serve_on_loopback(campus.app, port):
        results = await call_tools(f"{base}/api/mcp", token, {"my_courses": {}, "list_friends": {}})

    courses = results["my_courses"]
    assert not courses.is_error, courses.content
    shown = {course["crn"] for course in courses.structured_content["courses"]}
    assert shown and shown <= crns  # student1's own sections
    friends = results["list_friends"]
    assert friends.is_error  # friends:read was not given
    assert "friends:read" in friends.content[0].text
    assert "student2" not in str(friends.content)


async def test_the_token_lasts_the_minutes_asked_for(campus_factory: CampusFactory, tmp_path: Path) -> None:
    campus = await campus_factory(demo=True, anonymous_access=False)
    made = await run_token(
        tmp_path, "--student", "Student2", "--minutes", "5", database_url=campus.settings.database_url
    )
    assert made.returncode == 0, made.stderr

    from campus_mcp.oauth.models import OAuthClient, OAuthToken

    async with campus.sessions() as session:
        row = (await session.execute(select(OAuthToken))).scalar_one()
        client = await session.get(OAuthClient, row.client_id)
    assert row.user_id == 2 and row.refresh_token_hash is None
    assert 290 <= (row.access_expires_at - row.created_at).total_seconds() <= 300
    assert row.access_token_hash != made.stdout.strip()  # stored as a hash only
    # Default scopes: every read scope a first consent page starts checked, plus the always-on ones.
    assert set(row.scope.split()) >= {"schedule:read", "friends:read", "catalog"}
    assert row.resource == campus.settings.mcp_url
    assert client is not None and client.client_name == "campus-mcp cli" and client.redirect_uris == []


async def test_outside_demo_mode_it_refuses_without_the_admin_flag(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    campus = await campus_factory(demo=True, anonymous_access=False)
    url = campus.settings.database_url
    refused = await run_token(tmp_path, "--student", "student1", database_url=url, demo="false", secret_key="k" * 32)
    assert refused.returncode != 0 and refused.stdout == ""
    assert "not in demo mode" in refused.stderr and "--yes-i-am-an-admin" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr

    from campus_mcp.oauth.models import OAuthToken

    async with campus.sessions() as session:
        assert (await session.execute(select(OAuthToken))).first() is None  # nothing written

    allowed = await run_token(
        tmp_path, "--student", "student1", "--yes-i-am-an-admin", database_url=url, demo="false", secret_key="k" * 32
    )
    assert allowed.returncode == 0, allowed.stderr
    assert TOKEN_SHAPE.fullmatch(allowed.stdout.strip())


async def test_a_bad_scope_or_student_is_named(campus_factory: CampusFactory, tmp_path: Path) -> None:
    campus = await campus_factory(demo=True, anonymous_access=False)
    url = campus.settings.database_url
    bad_scope = await run_token(tmp_path, "--student", "student1", "--scopes", "schedule:read,grades", database_url=url)
    assert bad_scope.returncode != 0 and bad_scope.stdout == ""
    assert "'grades'" in bad_scope.stderr and "schedule:read" in bad_scope.stderr  # the unknown one, and the known
    nobody = await run_token(tmp_path, "--student", "nobody", database_url=url)
    assert nobody.returncode != 0 and nobody.stdout == ""
    assert "no student named 'nobody'" in nobody.stderr and "campus-mcp students list" in nobody.stderr
    too_long = await run_token(tmp_path, "--student", "student1", "--minutes", "100000", database_url=url)
    assert too_long.returncode != 0 and "--minutes" in too_long.stderr
    for result in (bad_scope, nobody, too_long):
        assert "Traceback" not in result.stderr


async def test_a_plugin_or_setting_that_cannot_load_is_named(tmp_path: Path) -> None:
    # The command is the host's own: a plugin that cannot load is reported, not "No such command".
    url = f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}"
    unknown = await run_token(tmp_path, "--student", "student1", database_url=url, plugins="catalog,nosuchfamily")
    assert unknown.returncode != 0 and unknown.stdout == ""
    assert "nosuchfamily" in unknown.stderr and "No such command" not in unknown.stderr, unknown.stderr
    bad_port = await run_token(tmp_path, "--student", "student1", database_url=url, port="eighty")
    assert bad_port.returncode != 0 and bad_port.stdout == ""
    assert "CAMPUS_MCP_PORT" in bad_port.stderr and "eighty" not in bad_port.stderr, bad_port.stderr
    for result in (unknown, bad_port):
        assert "Traceback" not in result.stderr


async def test_a_token_made_for_another_url_is_refused_with_both_urls_named(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    """Issue 24, point 7: a token made without the server's URL (``:8000``) is refused by a server on
    another port with a sentence naming the URL the token is for and this endpoint's, not the token."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    campus = await campus_factory(demo=True, anonymous_access=False, public_url=base)
    made = await run_token(tmp_path, "--student", "student1", database_url=campus.settings.database_url)
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    async with serve_on_loopback(campus.app, port), httpx2.AsyncClient() as http:
        answer = await http.post(
            f"{base}/api/mcp",
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
            },
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
    assert answer.status_code == 401
    description = answer.json()["error_description"]
    assert "http://127.0.0.1:8000/api/mcp" in description and f"{base}/api/mcp" in description
    assert "campus-mcp token --url" in description and token not in answer.text


async def test_url_makes_the_token_for_the_url_the_client_calls(campus_factory: CampusFactory, tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # The campus knows its URL; the command's environment does not (no CAMPUS_MCP_PORT or PUBLIC_URL).
    campus = await campus_factory(demo=True, anonymous_access=False, public_url=base)
    database_url = campus.settings.database_url
    refused = await run_token(tmp_path, "--student", "student1", "--url", "not a url", database_url=database_url)
    assert refused.returncode != 0 and "--url" in refused.stderr and "http" in refused.stderr
    made = await run_token(tmp_path, "--student", "student1", "--url", f"{base}/api/mcp", database_url=database_url)
    assert made.returncode == 0, made.stderr
    assert f"{base}/api/mcp" in made.stderr
    async with serve_on_loopback(campus.app, port):
        results = await call_tools(f"{base}/api/mcp", made.stdout.strip(), {"my_courses": {}})
    assert not results["my_courses"].is_error, results["my_courses"].content


async def test_the_cli_connection_shows_each_live_tokens_permissions(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    """Issue 24, point 10: two runs with different scopes showed one "campus-mcp cli" connection
    with both lists merged, as if one token held them all."""
    from campus_mcp.testing.browser import StudentBrowser

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    campus = await campus_factory(demo=True, anonymous_access=False, public_url=base)
    settings = {"database_url": campus.settings.database_url, "public_url": base}
    made = await asyncio.gather(
        run_token(tmp_path, "--student", "student1", "--scopes", "schedule:read", **settings),
        run_token(tmp_path, "--student", "student1", "--scopes", "friends:read", **settings),
    )
    assert all(run.returncode == 0 for run in made), [run.stderr for run in made]
    async with serve_on_loopback(campus.app, port), httpx.AsyncClient(base_url=base, timeout=30) as http:
        browser = await StudentBrowser(http).sign_in("student1")
        page = (await browser.get("/dashboard/settings")).text
    (card,) = re.findall(r"<h3>campus-mcp cli</h3>(.*?)</form>", page, re.S)
    assert "2 live tokens, each with its own permissions" in card
    tokens = re.findall(r"<li>Token \d: (.*?)</ul></li>", card, re.S)
    assert len(tokens) == 2
    assert all(("<code>schedule:read</code>" in t) != ("<code>friends:read</code>" in t) for t in tokens)


async def test_an_empty_database_and_two_commands_at_once_each_get_their_own_answer(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    """An empty database says how to fill it; two token commands at once on one SQLite file both
    get a token (the one refused by SQLite's lock tries again), where one was told the database
    had no student accounts."""
    empty = await run_token(tmp_path, "--student", "student1", database_url=f"sqlite+aiosqlite:///{tmp_path}/empty.db")
    assert empty.returncode != 0 and "has no student accounts yet" in empty.stderr, empty.stderr
    campus = await campus_factory(demo=True, anonymous_access=False)
    made = await asyncio.gather(
        *(run_token(tmp_path, "--student", "student1", database_url=campus.settings.database_url) for _ in range(4))
    )
    assert [run.returncode for run in made] == [0, 0, 0, 0], [run.stderr for run in made if run.returncode]
    assert len({run.stdout.strip() for run in made}) == 4
