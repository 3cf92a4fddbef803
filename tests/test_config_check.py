"""``campus-mcp check`` and ``serve`` outside demo mode refuse a configuration that is not ready
for production, one line per problem with its fix (issue 27, point 5), through the real CLI.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from campus_mcp.testing import free_port, private_redis

from tests.support.scale_out import (  # both_engines: the database_url fixture
    SHARED_KEY,
    both_engines,  # noqa: F401
    run_command,
)

READY = {
    "CAMPUS_MCP_DEMO": "false",
    "CAMPUS_MCP_SECRET_KEY": SHARED_KEY,
    "CAMPUS_MCP_PUBLIC_URL": "https://campus.example.edu",
    "CAMPUS_MCP_TRUSTED_PROXIES": "127.0.0.1",
    "CAMPUS_MCP_METRICS_TOKEN": "a-scraper-token-for-tests-only",
    "CAMPUS_MCP_PLUGINS": "catalog",
}


def base_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        "CAMPUS_MCP_DATABASE_URL": database_url,
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
        **READY,
    }


async def test_a_ready_configuration_passes_and_each_problem_is_one_line_with_its_fix(
    database_url: str, tmp_path: Path
) -> None:
    env = base_env(database_url, tmp_path)
    before = await asyncio.to_thread(run_command, "check", env=env)
    assert before.returncode == 1 and "the database is not migrated for" in before.stdout, before.stdout
    assert "campus-mcp db upgrade" in before.stdout
    migrated = await asyncio.to_thread(run_command, "db", "upgrade", env=env)
    assert migrated.returncode == 0, migrated.stderr
    ready = await asyncio.to_thread(run_command, "check", env=env)
    assert ready.returncode == 0, ready.stdout + ready.stderr
    assert "ready to serve" in ready.stdout

    cases = {
        "CAMPUS_MCP_SECRET_KEY": ("short", "CAMPUS_MCP_SECRET_KEY is 5 bytes; it must be at least 32"),
        "CAMPUS_MCP_PUBLIC_URL": ("http://campus.example.edu", "is not https"),
        "CAMPUS_MCP_DEMO": ("true", "demo mode is on"),
        "CAMPUS_MCP_SECRET_KY": ("a typo", "CAMPUS_MCP_SECRET_KY is not a setting"),
        "CAMPUS_MCP_ICON": (str(tmp_path / "seal.png"), "seal.png' cannot be read"),
    }
    for name, (value, complaint) in cases.items():
        answer = await asyncio.to_thread(run_command, "check", env={**env, name: value})
        assert answer.returncode == 1, (name, answer.stdout)
        lines = [line for line in answer.stdout.splitlines() if line.startswith("ERROR")]
        assert len(lines) == 1 and complaint in lines[0], (name, answer.stdout)
        assert value not in lines[0] or name in ("CAMPUS_MCP_PUBLIC_URL", "CAMPUS_MCP_ICON")  # never a secret's value
    # A disabled plugin's own setting is not a typo (READY enables only the catalog).
    disabled = await asyncio.to_thread(run_command, "check", env={**env, "CAMPUS_MCP_DINING_FEED_FILE": "x.json"})
    assert disabled.returncode == 0, disabled.stdout
    two = await asyncio.to_thread(run_command, "check", "--workers", "2", env=env)
    assert two.returncode == 1 and "2 processes without CAMPUS_MCP_REDIS_URL" in two.stdout, two.stdout
    with private_redis(tmp_path / "redis") as (redis_url, _redis):
        with_redis = {**env, "CAMPUS_MCP_REDIS_URL": redis_url}
        both = await asyncio.to_thread(run_command, "check", "--workers", "2", env=with_redis)
        assert both.returncode == 0, both.stdout


@pytest.mark.parametrize(
    ("name", "value", "complaint"),
    [
        ("CAMPUS_MCP_SECRET_KEY", "abc", "CAMPUS_MCP_SECRET_KEY is 3 bytes"),
        ("CAMPUS_MCP_PUBLIC_URL", "http://campus.example.edu", "is not https"),
    ],
)
def test_serve_outside_demo_mode_refuses_to_start_on_an_error(
    name: str, value: str, complaint: str, tmp_path: Path
) -> None:
    env = base_env(f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}", tmp_path) | {name: value, "CAMPUS_MCP_PORT": "1"}
    answer = run_command("serve", env=env)
    assert answer.returncode == 2 and complaint in answer.stderr, answer.stderr
    assert "Traceback" not in answer.stderr
    assert not (tmp_path / "campus.db").exists()  # refused before anything was written


async def test_a_saml_setup_that_cannot_sign_anyone_in_is_one_line_with_its_fix(
    database_url: str, tmp_path: Path
) -> None:
    env = base_env(database_url, tmp_path)
    assert (await asyncio.to_thread(run_command, "db", "upgrade", env=env)).returncode == 0
    cases = {
        "a metadata file that is not there": (
            {"CAMPUS_MCP_SAML_IDP_METADATA": str(tmp_path / "absent-idp.xml")},
            "its metadata file cannot be read",
        ),
        "half a key pair": (
            {"CAMPUS_MCP_SAML_IDP_METADATA": str(tmp_path / "idp.xml"), "CAMPUS_MCP_SAML_SP_KEY_FILE": "sp.key"},
            "set both (a key and its certificate) or neither",
        ),
    }
    for name, (settings, complaint) in cases.items():
        answer = await asyncio.to_thread(run_command, "check", env={**env, **settings})
        assert answer.returncode == 1, (name, answer.stdout)
        lines = [line for line in answer.stdout.splitlines() if line.startswith("ERROR")]
        assert len(lines) == 1 and complaint in lines[0], (name, answer.stdout)


async def test_a_configuration_nobody_can_use_is_not_ready(database_url: str, tmp_path: Path) -> None:
    """Issue 35, point 2: `check` said "ready" for a Redis where nothing answers, a proxy in front
    with no public URL, and local passwords off with no campus sign-in. Each is one error with its
    fix and exit 1; what a campus really runs still passes."""
    env = base_env(database_url, tmp_path)
    assert (await asyncio.to_thread(run_command, "db", "upgrade", env=env)).returncode == 0
    behind_proxy = {key: value for key, value in env.items() if key != "CAMPUS_MCP_PUBLIC_URL"}
    # Nothing listens there; the password in the URL must not be echoed.
    silent_redis = {**env, "CAMPUS_MCP_REDIS_URL": f"redis://:not-for-the-log@127.0.0.1:{free_port()}/0"}
    cases = {
        "a Redis where nothing answers": (silent_redis, "Redis at CAMPUS_MCP_REDIS_URL does not answer"),
        "a proxy in front and no public URL": (behind_proxy, "but CAMPUS_MCP_PUBLIC_URL is unset"),
        "no local passwords and no campus sign-in": (
            {**env, "CAMPUS_MCP_LOCAL_ACCOUNTS": "false"},
            "nobody can sign in",
        ),
    }
    fixes = {
        "a Redis where nothing answers": "Check the host, port, password",
        "a proxy in front and no public URL": "Set CAMPUS_MCP_PUBLIC_URL",
        "no local passwords and no campus sign-in": "or set CAMPUS_MCP_LOCAL_ACCOUNTS=true",
    }
    for name, (settings, complaint) in cases.items():
        answer = await asyncio.to_thread(run_command, "check", env=settings)
        assert answer.returncode == 1, (name, answer.stdout)
        assert "ready to serve" not in answer.stdout, (name, answer.stdout)
        lines = [line for line in answer.stdout.splitlines() if line.startswith("ERROR")]
        assert len(lines) == 1 and complaint in lines[0] and fixes[name] in lines[0], (name, answer.stdout)
        assert "not-for-the-log" not in answer.stdout + answer.stderr
    # A campus that signs in with CAS only, passwords off, Redis answering: ready.
    with private_redis(tmp_path / "redis") as (redis_url, _redis):
        campus = {
            **env,
            "CAMPUS_MCP_LOCAL_ACCOUNTS": "false",
            "CAMPUS_MCP_CAS_SERVER_URL": "https://cas.campus.example.edu/cas",
            "CAMPUS_MCP_REDIS_URL": redis_url,
        }
        ready = await asyncio.to_thread(run_command, "check", "--workers", "2", env=campus)
    assert ready.returncode == 0 and "ready to serve" in ready.stdout, ready.stdout + ready.stderr
