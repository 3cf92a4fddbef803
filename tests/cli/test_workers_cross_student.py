"""Several workers on PostgreSQL under cross-student probes (issue 30, point 5): ``serve --workers 2``
on the demo campus, three students' tokens, every call on a connection of its own (the kernel hands
each new connection to either worker). A student's token reads its own friends' busy times and
nobody else's: a non-friend's id and an id nobody has get the same refusal, from any worker, and a
student's list of friends is their own whichever worker answers.
"""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from campus_mcp.testing import TestDatabases
from campus_mcp.testing.oauth import free_port

from tests.support.endpoints import MODERN, mcp_client
from tests.support.scale_out import SHARED_KEY, campus_mcp, run_command, running, tail, wait_for

STUDENTS = ("student1", "student2", "student3")
ROUNDS = 2  # each probe this many times, each on a new connection


async def call(mcp_url: str, token: str, tool: str, arguments: dict[str, Any]) -> tuple[bool, str, Any]:
    async with mcp_client(mcp_url, token, MODERN) as client:
        result = await client.call_tool(tool, arguments)
    text = " ".join(getattr(part, "text", "") for part in result.content)
    return result.is_error, text, result.structured_content


async def test_on_two_workers_a_students_token_reads_only_their_friends(
    campus_databases: TestDatabases, tmp_path: Path
) -> None:
    database_url = await campus_databases.demo_copy()
    try:
        if not database_url.startswith("postgresql"):
            pytest.skip("several workers need PostgreSQL (set CAMPUS_MCP_TEST_DATABASE_URL)")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        env = {
            "CAMPUS_MCP_DATABASE_URL": database_url,
            "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
            "CAMPUS_MCP_PUBLIC_URL": base,
            "CAMPUS_MCP_SCHEDULER": "false",
            # Several workers outside demo mode want Redis for shared limits; these probes are about data.
            "CAMPUS_MCP_RATE_LIMITS": "false",
            "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
            "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        }
        log = tmp_path / "serve.log"
        server = campus_mcp(
            "serve", "--no-prepare", "--host", "127.0.0.1", "--port", str(port), "--workers", "2", env=env, log=log
        )
        with running(server):
            # The tokens while the workers start.
            issued = await asyncio.gather(
                *(
                    asyncio.to_thread(run_command, "token", "--student", username, "--scopes", "friends:read", env=env)
                    for username in STUDENTS
                )
            )
            assert all(done.returncode == 0 for done in issued), [done.stderr for done in issued]
            tokens = {username: done.stdout.strip() for username, done in zip(STUDENTS, issued, strict=True)}
            async with httpx.AsyncClient(timeout=5) as http:

                async def healthy() -> bool:
                    return (await http.get(f"{base}/healthz")).status_code == 200

                await wait_for(healthy, within=150, what="serve --workers 2 answering", log=log)
            mcp_url = f"{base}/api/mcp"
            today = date.today()
            week = {"start_date": today.isoformat(), "end_date": (today + timedelta(days=6)).isoformat()}

            friends: dict[str, set[int]] = {}
            for username, token in tokens.items():
                seen = set()
                for failed, text, listed in await asyncio.gather(
                    *(call(mcp_url, token, "list_friends", {}) for _ in range(ROUNDS))
                ):
                    assert not failed, text
                    seen.add(frozenset(f["friend_id"] for f in listed["friends"]))
                    assert username not in {f["username"] for f in listed["friends"]}
                assert len(seen) == 1, f"{username}'s friends differ between calls: {seen}"
                friends[username] = set(next(iter(seen)))
            assert friends["student1"], "the demo campus gives student1 friends"

            for username, token in tokens.items():
                nobody = await call(mcp_url, token, "friend_busy_times", {"friend_id": 99_999, **week})
                assert nobody[0], nobody
                # At once, so both workers answer some of them while busy with the others.
                probes = [other for other in range(1, 6) for _ in range(ROUNDS)]
                answers = await asyncio.gather(
                    *(call(mcp_url, token, "friend_busy_times", {"friend_id": other, **week}) for other in probes)
                )
                for other, (failed, text, answer) in zip(probes, answers, strict=True):
                    if other in friends[username]:
                        assert not failed, text
                        assert answer is not None and "busy" in answer
                    else:
                        # Refused, in the words an id nobody has gets: no busy times, no oracle.
                        assert failed, (username, other, text)
                        assert answer is None or not answer.get("busy"), answer
                        assert text.replace(str(other), "N") == nobody[1].replace("99999", "N"), (text, nobody[1])
    finally:
        await campus_databases.drop(database_url)
    said = log.read_text(errors="replace")
    assert "Traceback" not in said, tail(log)
