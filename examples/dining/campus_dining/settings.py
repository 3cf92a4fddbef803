"""The dining plugin's own setting: where the hours feed is.

A plugin may read its own environment variables (here ``CAMPUS_MCP_DINING_FEED``) with its own
pydantic-settings class; the host's :class:`campus_mcp.Settings` ignores names it does not know.
"""

from __future__ import annotations

from pathlib import Path

from campus_mcp import Settings
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEMO_FEED = Path(__file__).parent / "demo_feed.json"


class DiningSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CAMPUS_MCP_DINING_", extra="ignore")

    feed: Path | None = Field(
        default=None, description="A JSON file with the dining halls and their weekly hours (see demo_feed.json)."
    )


def hours_feed(settings: Settings) -> Path | None:
    """The feed the hours come from; the packaged demo feed in demo mode; None when there is none.

    None means the plugin has no data, so it registers no tool, route or job (DESIGN section 3).
    """
    configured = DiningSettings().feed
    if configured is not None:
        return configured
    return DEMO_FEED if settings.demo else None
