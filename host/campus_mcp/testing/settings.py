"""The settings of a test campus: the kit's campuses and the contract tests' registry read them."""

from __future__ import annotations

from typing import Any

from campus_mcp.base.settings import Settings


def test_settings(database_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": database_url,
        "anonymous_access": True,
        "scheduler": False,
        "demo": True,
        "secret_key": "test-only-secret-key",
        # Every test of a session shares the demo campus and one client address, so request counts
        # would refuse tests at random; a test of the limits turns them on (rate_limits=True).
        "rate_limits": False,
    }
    values.update(overrides)
    return Settings(**values)
