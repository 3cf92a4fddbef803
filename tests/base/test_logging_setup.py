"""Building the app leaves the root logger alone; ``campus-mcp serve`` sets up its own log lines.

Litestar's default logging config replaces the root logger's handlers when an app is built. That
threw away an operator's own logging set-up, and pytest's ``caplog`` (a handler on the root logger)
saw nothing logged after the first app of a test session, so every "nothing was logged" test
passed whatever the code logged.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from campus_mcp.testing import CampusFactory, TestDatabases, serve


async def test_caplog_sees_a_line_logged_after_an_app_is_built(
    campus_factory: CampusFactory, caplog: pytest.LogCaptureFixture
) -> None:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    campus = await campus_factory(plugins=["dining"])
    async with campus.rest() as rest:  # the app has started (its lifespan ran) and served a request
        assert (await rest.get("/healthz")).status_code == 200
    assert root.handlers == handlers and root.level == level
    logging.getLogger("campus_mcp.probe").warning("a line the test looks for")
    assert "a line the test looks for" in caplog.text


async def test_serve_still_prints_its_log_lines(campus_databases: TestDatabases, tmp_path: Path) -> None:
    env = {
        "CAMPUS_MCP_DATABASE_URL": await campus_databases.empty(),
        "CAMPUS_MCP_PLUGINS": "dining",  # a quick start; its job reads the packaged demo feed
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
    }
    log = tmp_path / "serve.log"
    with serve(env, log_path=log):
        pass
    text = log.read_text()
    # An INFO line of a library logger, which reaches the terminal only through the root logger.
    assert "apscheduler.scheduler" in text and "Scheduler started" in text, text[-3000:]
    assert "Traceback" not in text
