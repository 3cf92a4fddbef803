"""Demo mode seals sessions and requestState with a random key of its own (issue 9, point 4).

Before, demo mode with no ``CAMPUS_MCP_SECRET_KEY`` derived its key from a constant published in
the source, so anyone could forge a session cookie for any student.
"""

from __future__ import annotations

import hashlib
import re
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from campus_mcp.base.settings import Settings
from campus_mcp.oauth.session import SESSION_COOKIE
from campus_mcp.testing import CampusFactory, RestClient, harness_app
from campus_mcp.testing.oauth import parse_forms
from litestar.middleware.session.client_side import ClientSideSessionBackend, CookieBackendConfig

# What the session key was derived from in every demo deployment until now.
PUBLIC_DEMO_SECRET = b"campus-mcp-demo-only-key"


def forged_session_cookie(username: str, user_id: int) -> str:
    """A session cookie sealed with the key the old demo mode used, for a student of our choice."""
    old_key = hashlib.sha256(b"campus-mcp session\0" + hashlib.sha256(PUBLIC_DEMO_SECRET).digest()).digest()
    backend = ClientSideSessionBackend(CookieBackendConfig(secret=old_key, key=SESSION_COOKIE))
    data = {"uid": user_id, "username": username, "generation": 0, "expires": time.time() + 3600, "csrf": "x"}
    chunks = backend.dump_data(data)
    assert len(chunks) == 1
    return chunks[0].decode()


async def _sign_in(client: Any) -> None:
    page = await client.get("/login")
    data = {f.name: f.value for f in parse_forms(page.text)[-1].fields if f.kind == "hidden"}
    signed_in = await client.post(
        "/login", data=data | {"username": "student1", "password": "demo"}, follow_redirects=False
    )
    assert signed_in.status_code == 303, signed_in.text


async def test_a_session_forged_with_the_old_public_key_is_refused(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    var = tmp_path / "var"
    campus = await campus_factory(plugins=[], demo=True, secret_key="", var_dir=str(var))
    assert campus.settings.key_is_generated
    async with campus.rest() as client:
        client.cookies.set(SESSION_COOKIE, forged_session_cookie("student2", 2))
        forged = await client.get("/dashboard", follow_redirects=False)
        assert forged.status_code == 303 and forged.headers["location"].startswith("/login"), forged.text
        assert "student2" not in forged.text
    key_file = var / "secret.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert len(key_file.read_bytes()) == 32


async def test_a_restart_reuses_the_generated_key_and_a_configured_key_replaces_it(
    campus_factory: CampusFactory, tmp_path: Path
) -> None:
    var = tmp_path / "var"
    first = await campus_factory(plugins=[], demo=True, secret_key="", var_dir=str(var))
    key = (var / "secret.key").read_bytes()
    async with first.rest() as client:
        await _sign_in(client)
        cookie = client.cookies[SESSION_COOKIE]
        assert (await client.get("/dashboard")).status_code == 200

    # A second start on the same folder: the same key, so the student is still signed in.
    restarted = harness_app(first.registry)
    async with RestClient(restarted, base_url=first.settings.base_url) as client:
        client.cookies.set(SESSION_COOKIE, cookie)
        assert (await client.get("/dashboard", follow_redirects=False)).status_code == 200
    assert (var / "secret.key").read_bytes() == key

    # A configured key wins: the generated key's sessions end, the file is left alone.
    configured = await campus_factory(plugins=[], demo=True, secret_key="k" * 48, var_dir=str(var))
    assert not configured.settings.key_is_generated
    assert configured.settings.seal_key() != first.settings.seal_key()
    async with configured.rest() as client:
        client.cookies.set(SESSION_COOKIE, cookie)
        assert (await client.get("/dashboard", follow_redirects=False)).status_code == 303
    assert (var / "secret.key").read_bytes() == key


def test_the_key_file_is_made_once_even_by_parallel_starts(tmp_path: Path) -> None:
    settings = Settings(demo=True, secret_key="", var_dir=str(tmp_path / "var"))
    keys: list[bytes] = []
    threads = [threading.Thread(target=lambda: keys.append(settings.seal_key())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(keys) == 8 and len(set(keys)) == 1
    assert [p.name for p in (tmp_path / "var").iterdir()] == ["secret.key"]  # no temporary file left


def test_outside_demo_mode_a_missing_key_still_stops_start_up(tmp_path: Path) -> None:
    settings = Settings(demo=False, secret_key="", var_dir=str(tmp_path / "var"))
    with pytest.raises(RuntimeError, match="CAMPUS_MCP_SECRET_KEY is not set"):
        settings.seal_key()
    assert not (tmp_path / "var").exists()


def test_a_key_file_others_can_read_or_a_damaged_one_is_refused_with_what_to_do(tmp_path: Path) -> None:
    settings = Settings(demo=True, secret_key="", var_dir=str(tmp_path))
    key_file = tmp_path / "secret.key"
    settings.seal_key()
    key_file.chmod(0o644)
    with pytest.raises(RuntimeError, match=re.escape("other users of this machine. Run: chmod 600")):
        settings.seal_key()
    key_file.chmod(0o600)
    key_file.write_bytes(b"short")
    with pytest.raises(RuntimeError, match=re.escape("holds 5 bytes, not 32: it is damaged. Delete it")):
        settings.seal_key()
