"""Secrets a plugin keeps at rest, sealed with the deployment's key (``campus_mcp.seal_secret``), and
the campus clock every family writes times with (``campus_mcp.campus_time_text``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from campus_mcp import SecretUnreadable, campus_time_text, open_secret, seal_secret
from campus_mcp.testing import test_settings as settings_of

SETTINGS = settings_of("sqlite+aiosqlite:///never-opened.db", secret_key="k" * 48)
TOKEN = "7~Hx3kP0secretCanvasToken"


def test_a_sealed_secret_opens_with_its_purpose_and_owner_only() -> None:
    sealed = seal_secret(SETTINGS, TOKEN, purpose="canvas-tokens", bound_to="student:4")
    assert TOKEN not in sealed and sealed.startswith("v1.")
    # A new nonce each time: two seals of one token do not show they are the same.
    assert sealed != seal_secret(SETTINGS, TOKEN, purpose="canvas-tokens", bound_to="student:4")
    assert open_secret(SETTINGS, sealed, purpose="canvas-tokens", bound_to="student:4") == TOKEN
    for purpose, owner in (("other-tokens", "student:4"), ("canvas-tokens", "student:5"), ("canvas-tokens", "")):
        with pytest.raises(SecretUnreadable):
            open_secret(SETTINGS, sealed, purpose=purpose, bound_to=owner)


def test_another_deployment_key_or_a_damaged_value_does_not_open_and_says_nothing_of_the_secret() -> None:
    sealed = seal_secret(SETTINGS, TOKEN, purpose="canvas-tokens")
    rotated = settings_of("sqlite+aiosqlite:///never-opened.db", secret_key="r" * 48)
    damaged = sealed[:-4] + ("AAAA" if not sealed.endswith("AAAA") else "BBBB")
    for settings, value in ((rotated, sealed), (SETTINGS, damaged), (SETTINGS, "v1."), (SETTINGS, TOKEN)):
        with pytest.raises(SecretUnreadable) as refused:
            open_secret(settings, value, purpose="canvas-tokens")
        assert TOKEN not in str(refused.value)
    with pytest.raises(ValueError, match="needs a purpose"):
        seal_secret(SETTINGS, TOKEN, purpose="")


def test_campus_time_text_is_the_campus_clock_in_12_hours_with_the_weekday() -> None:
    # 03:59 UTC on a Saturday is Friday evening in Boston (EDT, UTC-4): the weekday is the campus's.
    assert campus_time_text(datetime(2026, 9, 12, 3, 59, tzinfo=UTC), "America/New_York") == (
        "Friday, September 11, 11:59 PM"
    )
    assert (
        campus_time_text(datetime(2026, 12, 1, 17, 5, tzinfo=UTC), "America/New_York")
        == "Tuesday, December 1, 12:05 PM"
    )
    assert (
        campus_time_text(datetime(2026, 12, 1, 5, 0, tzinfo=UTC), "America/New_York") == "Tuesday, December 1, 12:00 AM"
    )
