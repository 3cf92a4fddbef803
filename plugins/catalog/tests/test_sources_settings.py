"""The catalog's source settings: what counts as configured, and errors that say what to fix.

They are loaded as the host loads them at start-up (``CAMPUS_MCP_CATALOG_*``, ``[plugins.catalog]``),
so a bad value is a ``PluginError`` naming the variable and the rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from campus_catalog.catalog_settings import CatalogSettings
from campus_mcp import PluginError, Settings
from campus_mcp.testing import load_plugins

VARIABLES = ("BANNER_URL", "BANNER_FILE", "CALENDAR_URL", "CALENDAR_FILE", "ALLOW_LOOPBACK_HTTP")


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in VARIABLES:
        monkeypatch.delenv(f"CAMPUS_MCP_CATALOG_{name}", raising=False)
    monkeypatch.setenv("CAMPUS_MCP_CONFIG", str(tmp_path / "no-config.toml"))
    return monkeypatch


def load_catalog_settings() -> CatalogSettings:
    settings: CatalogSettings = load_plugins(Settings(plugins=["catalog"])).plugin_settings["catalog"]
    return settings


def test_nothing_set_means_no_source(env: pytest.MonkeyPatch) -> None:
    env.setenv("CAMPUS_MCP_CATALOG_BANNER_FILE", "")  # an empty variable is unset, not "."
    settings = load_catalog_settings()
    assert (settings.banner_configured, settings.banner_live, settings.calendar_configured) == (False, False, False)
    assert settings.banner_requests_per_minute == 30  # under the ~40 a minute at which Banner failed


def test_file_mode_and_live_mode(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env.setenv("CAMPUS_MCP_CATALOG_BANNER_FILE", str(tmp_path))
    assert (load_catalog_settings().banner_configured, load_catalog_settings().banner_live) == (True, False)
    env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", "https://selfservice.example.edu/StudentRegistrationSsb/ssb/")
    settings = load_catalog_settings()
    assert settings.banner_live and settings.banner_url.endswith("/ssb")


def test_a_plain_http_upstream_is_refused_with_the_variable_named(env: pytest.MonkeyPatch) -> None:
    env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", "http://selfservice.example.edu/StudentRegistrationSsb/ssb")
    with pytest.raises(PluginError) as caught:
        load_catalog_settings()
    assert str(caught.value).startswith(
        "the settings of plugin 'catalog' are not valid: CAMPUS_MCP_CATALOG_BANNER_URL: must be an https:// URL "
        "(it is read unattended on a schedule)."
    )
    # Loopback http is for the tests' fake Banner, and only with the test allowance.
    env.setenv("CAMPUS_MCP_CATALOG_BANNER_URL", "http://127.0.0.1:8123/StudentRegistrationSsb/ssb")
    with pytest.raises(PluginError):
        load_catalog_settings()
    env.setenv("CAMPUS_MCP_CATALOG_ALLOW_LOOPBACK_HTTP", "true")
    assert load_catalog_settings().banner_live


def test_a_bad_number_names_the_variable(env: pytest.MonkeyPatch) -> None:
    env.setenv("CAMPUS_MCP_CATALOG_BANNER_REQUESTS_PER_MINUTE", "0")
    with pytest.raises(
        PluginError, match="CAMPUS_MCP_CATALOG_BANNER_REQUESTS_PER_MINUTE: Input should be greater than 0"
    ):
        load_catalog_settings()


def test_a_plain_http_url_in_the_toml_table_names_its_key(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "campus-mcp.toml"
    config.write_text('[plugins.catalog]\ncalendar_url = "http://calendar.example.edu/academic.ics"\n')
    env.setenv("CAMPUS_MCP_CONFIG", str(config))
    with pytest.raises(PluginError) as caught:
        load_catalog_settings()
    assert f"[plugins.catalog] calendar_url in {config}: must be an https:// URL" in str(caught.value)
