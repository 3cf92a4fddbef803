"""Alembic over every enabled plugin: one version branch per plugin, applied together."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from campus_mcp.registry import Registry

SCRIPT_LOCATION = Path(__file__).parent / "migrations"


def alembic_config(registry: Registry, database_url: str | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    locations = [str(m.path) for m in registry.migrations]
    # Alembic splits version_locations on this separator; paths never contain a newline.
    config.set_main_option("path_separator", "newline")
    config.set_main_option("version_locations", "\n".join(locations))
    config.attributes["database_url"] = database_url or registry.settings.database_url
    config.attributes["registry"] = registry
    return config


def upgrade(registry: Registry, database_url: str | None = None) -> None:
    """Apply every enabled plugin's migrations (``campus-mcp db upgrade``). Blocking."""
    command.upgrade(alembic_config(registry, database_url), "heads")
