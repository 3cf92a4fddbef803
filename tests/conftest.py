"""The host's tests: which of them run once only, on SQLite (the marker ``engine_independent``).

CI runs the suite twice, on SQLite and on PostgreSQL (``CAMPUS_MCP_TEST_DATABASE_URL``), and the
second run leaves out the tests marked ``engine_independent`` (``.ci/run``). A test is marked here
only when it never reaches the PostgreSQL server: it opens no database of the kit
(``campus_databases`` and the fixtures built on it) and its subprocesses run on a SQLite file of
their own, with every ``CAMPUS_MCP_`` variable of the test's environment removed, or on no
database at all. Such a test runs the very same code on both passes, so the second pass only costs
time (the files below were ~600 s of the PostgreSQL pass). A test that touches SQL through the kit
is never listed: :func:`pytest_collection_modifyitems` refuses the marker on a test that asks for
one of the kit's database fixtures, so a database test added to one of these files later still
runs on both engines or fails loudly here.

One more kind is marked without a listing: the SQLite half of ``both_engines``
(tests/support/scale_out.py), the ``database_url`` fixture of the scale-out tests (faults, leader,
shutdown). Its ``sqlite`` parameter is a SQLite file in the test's ``tmp_path`` on either pass, so
the PostgreSQL pass ran it a second time for nothing (~180 s); its ``postgresql`` half still runs
there, and is skipped on SQLite as before.

A second, looser kind is marked ``once`` (the ``ONCE`` listing below), and the PostgreSQL pass
leaves it out too. These tests do reach the database, but what they assert is made outside it: a
page as Chromium renders it and a keyboard drives it, or the wire of a client program nobody here
wrote (the Node MCP clients, a CAS server). The database work under them (the tool's or page's
queries, the sign-in's rows, a confirmed write) is the same code that other tests, named in each
reason, run on PostgreSQL; what the browser or the client adds cannot differ by engine. Chromium
and Node cost the same on either pass, and the PostgreSQL pass is CI's longest step. Unlike
``engine_independent`` this is a judgement per file, so each reason names where its database side
is proven on both engines.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiosqlite.core
import pytest

HERE = Path(__file__).resolve().parent

# Module (its path under tests/, mcp/test_stdio.py) or test (path::name) -> why it cannot differ by engine.
ENGINE_INDEPENDENT: dict[str, str] = {
    "cli/test_cli.py": "campus-mcp subprocesses on a SQLite file of the module's, CAMPUS_MCP_ variables removed",
    "cli/test_cli_startup.py": "what the command imports at start-up; no database",
    "assembly/test_parity.py": "REST/tool parity of registries on a SQLite URL; its CLI runs on a SQLite file",
    "limits/test_rate_limits_redis.py": "two serve processes on one SQLite file and a private redis-server",
    "assembly/test_plugin_selection.py": "plugin allow lists, in process and through test_cli's SQLite subprocesses",
    "assembly/test_registry.py": "plugin discovery and loading; no database",
    "assembly/test_tool_selection.py": "which tools a registry offers; a SQLite URL never opened",
    "base/test_moved_settings_warning.py": "start-up warnings of settings; a SQLite URL",
    "oauth/test_oauth_students_cli.py": "the students command on a SQLite file",
    "mcp/test_advisory_freshness_cache.py": "a per-process cache on SQLite files of its own",
    "testing/test_kit_extra.py": "the kit's import error in a fresh interpreter; no database",
    "test_docs.py": "the hooks documentation against the hookspecs; no database",
    "oauth/test_security_ssrf.py": "address checks of the SSRF guard; no database",
    "plugin/test_sealed_secrets.py": "sealing with a key of the settings, and the campus clock; no database",
    "cli/test_workers.py": "refusals of serve --workers and worker before any connection (SQLite, or a port never reached)",
    "testing/test_free_port.py": "the kit's choice of a loopback port; no database",
    "test_deploy_compose.py": "deploy/compose.yaml read and scripts/deploy_check.sh refused before it checks; no database",
    "test_imports.py": "the product's imports, read from its files and by lint-imports; no database",
    "plugin/test_tool_context.py": "what a tool context hands out, from a registry; no database",
    "testing/test_rest_client_loop.py": "the kit's REST client on a Litestar app with no database",
    "base/test_db_read_sessions.py": "aiosqlite's rollbacks on a SQLite file of the test's own, built by make_engine",
    "oauth/test_token_cli.py::test_a_plugin_or_setting_that_cannot_load_is_named": (
        "campus-mcp token refused at plugin or settings load; its SQLite URL is never opened"
    ),
    "assembly/test_icons.py::test_an_icon_that_cannot_be_read_stops_the_start": (
        "campus-mcp serve refused before a SQLite URL is opened, CAMPUS_MCP_ variables removed"
    ),
    "test_distributions.py::test_server_json_is_in_step_with_the_product_and_the_registry_rules": "files only",
    "test_distributions.py::test_server_json_out_of_step_is_named_with_what_to_do": "files only",
    "test_distributions.py::test_every_dependency_is_a_range_and_the_pins_are_inside_it": "files only",
    "test_engine_independent_marker.py": "collects a copy of this conftest in a folder of its own; no database",
    "cli/test_demo_per_plugin.py::test_serve_loads_the_demo_of_a_plugin_new_on_the_demo_campus_once": (
        "campus-mcp serve twice on a SQLite file, CAMPUS_MCP_ variables removed"
    ),
    "test_readme_campus_data.py": "the README's commands on the README's SQLite file, CAMPUS_MCP_ variables removed",
}

# Module -> what it asserts outside the database, and the tests that run its database side on
# PostgreSQL (the marker ``once``; see the module's docstring).
ONCE: dict[str, str] = {
    "families/test_apps_browser.py": (
        "the four app views in Chromium (postMessage, CSP, layout); the tool results they show come "
        "from the tools that test_apps_resources.py and the plugins' contract tests call on PostgreSQL"
    ),
    "oauth/test_asking_app_browser.py": (
        "how the consent page names the asking app in Chromium; the client records it reads are "
        "test_oauth_cimd.py's and test_security_registration.py's on PostgreSQL"
    ),
    "dashboard/test_calendar_feed_connections_browser.py": (
        "the settings page at phone width in Chromium; the feed and its connections are "
        "test_calendar_feed_connections.py's on PostgreSQL"
    ),
    "oauth/test_consent_browser.py": (
        "the consent page answered with the keyboard in Chromium; the grants it makes are "
        "test_oauth_end_to_end.py's and test_oauth_rules.py's on PostgreSQL"
    ),
    "families/test_friends_browser.py": "the friends page in Chromium; its links and rows are test_friends_pages.py's on PostgreSQL",
    "dashboard/test_pages_browser.py": (
        "the student pages in Chromium (layout, CSP, keyboard); their data is test_dashboard.py's "
        "and plugins/settings/tests/test_settings_pages.py's on PostgreSQL"
    ),
    "dashboard/test_pages_readable_browser.py": (
        "word breaks and heights of the dashboard's pages in Chromium; what they show is test_dashboard.py's "
        "and plugins/settings/tests/test_settings_pages.py's on PostgreSQL"
    ),
    "oauth/test_personal_tokens_browser.py": (
        "the token pages in Chromium; making, listing and revoking tokens is test_personal_tokens.py's on PostgreSQL"
    ),
    "oauth/test_secrets_shown_once_browser.py": (
        "a secret shown once and gone after a reload, in Chromium; the stored secrets are "
        "test_personal_tokens.py's and test_security_registration.py's on PostgreSQL"
    ),
    "dashboard/test_student_access_browser.py": (
        "the access-log page in Chromium; the entries are written and read by test_student_access.py on PostgreSQL"
    ),
    "mcp/test_confirmation_clients.py": (
        "what the Node clients (TypeScript SDK, Inspector CLI, mcp-remote) do with the question and the code; "
        "the confirmed and refused writes are test_confirmation.py's and test_confirmation_in_band.py's on PostgreSQL"
    ),
    "test_proxy_feed_log.py": (
        "nginx's logs of a calendar app's fetches through the shipped proxy configuration; the feed it "
        "proxies is families/test_calendar_feed.py's on PostgreSQL"
    ),
    "oauth/test_cas_server.py": (
        "the CAS 3.0 protocol with a real CAS server and its login page in Chromium; the student it signs "
        "in is found by oidc_student, which test_oidc_provider.py and test_oauth_oidc.py run on PostgreSQL"
    ),
}

# The kit's fixtures that open a database on the run's engine (PostgreSQL on the second pass).
ENGINE_FIXTURES = frozenset({"campus_databases", "campus_factory", "demo_campus", "database_url"})


def _module(item: pytest.Item) -> str:
    """The test's file under tests/ (``mcp/test_stdio.py``), as the listings name it."""
    return item.path.relative_to(HERE).as_posix()


def _listed(item: pytest.Item) -> bool:
    module = _module(item)
    return module in ENGINE_INDEPENDENT or f"{module}::{item.name.split('[', 1)[0]}" in ENGINE_INDEPENDENT


def _sqlite_half_of_both_engines(item: pytest.Item) -> bool:
    """The ``sqlite`` parameter of scale_out's ``both_engines`` (the ``database_url`` fixture)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or callspec.params.get("database_url") != "sqlite":
        return False
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {}).get("database_url", ())
    return bool(definitions) and getattr(definitions[-1].func, "__name__", "") == "both_engines"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "once: reaches the database, but asserts a browser's page or a client's wire; CI's PostgreSQL pass "
        "leaves it out (set in tests/conftest.py, with the tests that prove its database side there)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    misused: list[str] = []
    for item in items:
        if HERE not in item.path.parents:
            continue
        if _module(item) in ONCE:
            item.add_marker(pytest.mark.once)
        if _sqlite_half_of_both_engines(item):
            item.add_marker(pytest.mark.engine_independent)
            continue
        if not _listed(item):
            continue
        touched = ENGINE_FIXTURES & set(getattr(item, "fixturenames", ()))
        if touched:
            misused.append(f"{item.nodeid} uses {', '.join(sorted(touched))}")
        item.add_marker(pytest.mark.engine_independent)
    if misused:
        raise pytest.UsageError(
            "tests/conftest.py lists these tests as engine_independent, but they open a database on "
            "the run's engine, so the PostgreSQL pass must run them: remove them from ENGINE_INDEPENDENT "
            "(or move the database test to another file): " + "; ".join(misused)
        )


@pytest.fixture
def thread_runs(monkeypatch: pytest.MonkeyPatch) -> list[Callable[[], Any]]:
    """Every function aiosqlite's connection threads run, in order (connections opened after):
    how the SQLite driver tests (base/test_sqlite_one_trip.py) count trips."""
    ran: list[Callable[[], Any]] = []
    worker = aiosqlite.core._connection_worker_thread

    class Counted:
        def __init__(self, queue: Any) -> None:
            self.queue = queue

        def get(self) -> Any:
            future, function = self.queue.get()
            ran.append(function)
            return future, function

    monkeypatch.setattr(aiosqlite.core, "_connection_worker_thread", lambda queue: worker(Counted(queue)))
    return ran


@pytest.fixture(params=["on", "off"])
def both_ways(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Runs a test with every speed-up on, then with every one off (``CAMPUS_MCP_SPEEDUPS``, read
    by the settings of whatever the test builds after asking for this): each mechanism of
    campus_mcp.base.speedups has its tests run both ways, the plain path being the reference. True: on."""
    monkeypatch.setenv("CAMPUS_MCP_SPEEDUPS", request.param)
    return bool(request.param == "on")


@pytest.fixture
def speedups_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every speed-up on, whatever the run's ``CAMPUS_MCP_SPEEDUPS``: for a test of one mechanism."""
    monkeypatch.setenv("CAMPUS_MCP_SPEEDUPS", "on")
