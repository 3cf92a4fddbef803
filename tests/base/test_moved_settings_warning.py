"""Host settings that moved to a plugin (issue 10): ``CAMPUS_MCP_OVERRIDE_OFFICE`` and
``CAMPUS_MCP_STUDENT_SYSTEM_NAME`` are the catalog's now (``CAMPUS_MCP_CATALOG_...``). A deployment
that still sets an old name would have it ignored in silence; start-up warns once per old name,
naming the new one and never the value. Checked at registry load, before any app is built (building
one may change the root logger's handlers, which caplog relies on)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from campus_mcp.plugin import settings as plugin_settings
from campus_mcp.testing import load_plugins
from campus_mcp.testing import test_settings as settings_for

VALUE = "Office-of-the-Registrar-7f3a"  # what the old variable holds: never in the log


@pytest.fixture
def fresh_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A process that has not warned yet, with its own config file and no old names set."""
    monkeypatch.setattr(plugin_settings, "_warned", set(), raising=False)
    config = tmp_path / "campus-mcp.toml"
    monkeypatch.setenv("CAMPUS_MCP_CONFIG", str(config))
    for name in ("CAMPUS_MCP_OVERRIDE_OFFICE", "CAMPUS_MCP_STUDENT_SYSTEM_NAME"):
        monkeypatch.delenv(name, raising=False)
    return config


def _moved_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "no longer read" in r.getMessage()
    ]


def _load(tmp_path: Path) -> None:
    load_plugins(settings_for(f"sqlite+aiosqlite:///{tmp_path / 'never-opened.db'}", plugins=["catalog"]))


def test_each_old_variable_set_is_named_once_with_its_new_name_and_not_its_value(
    fresh_start: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("CAMPUS_MCP_OVERRIDE_OFFICE", VALUE)
    monkeypatch.setenv("CAMPUS_MCP_STUDENT_SYSTEM_NAME", VALUE)
    with caplog.at_level(logging.WARNING):
        _load(tmp_path)
        _load(tmp_path)  # the command line loads the registry twice: still one warning each
    warnings = _moved_warnings(caplog)
    assert len(warnings) == 2, warnings
    office = next(w for w in warnings if "CAMPUS_MCP_OVERRIDE_OFFICE " in w)
    assert "CAMPUS_MCP_CATALOG_OVERRIDE_OFFICE" in office
    system = next(w for w in warnings if "CAMPUS_MCP_STUDENT_SYSTEM_NAME " in w)
    assert "CAMPUS_MCP_CATALOG_STUDENT_SYSTEM_NAME" in system
    assert VALUE not in caplog.text


def test_an_old_key_at_the_top_of_the_config_file_is_named_with_its_plugin_table(
    fresh_start: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fresh_start.write_text(f'student_system_name = "{VALUE}"\n', encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        _load(tmp_path)
    warnings = _moved_warnings(caplog)
    assert len(warnings) == 1, warnings
    assert "student_system_name" in warnings[0] and "[plugins.catalog] student_system_name" in warnings[0]
    assert VALUE not in caplog.text


def test_the_new_names_alone_log_no_warning(
    fresh_start: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("CAMPUS_MCP_CATALOG_OVERRIDE_OFFICE", VALUE)
    with caplog.at_level(logging.WARNING):
        _load(tmp_path)
        logging.getLogger("campus_mcp.plugin.settings").warning("capture works")
    assert _moved_warnings(caplog) == []
    assert "capture works" in caplog.text  # the absence above is not a capture that saw nothing
