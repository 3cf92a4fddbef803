"""The plugin-author kit: ``from campus_mcp.testing import CampusHarness`` and the rest of its public
names (the kit's ``__all__``), with ``campus_mcp`` the only modules a plugin imports.

The fixtures and pytest hooks live in :mod:`campus_mcp.testing.kit`, the ``pytest11`` entry point;
the kit's parts beside it (:mod:`.rest`, :mod:`.serve`, :mod:`.browser`, :mod:`.contract`,
:mod:`.oauth`) are its own. Nothing in the runtime imports this package.
"""

# A local student with a password, for a test that signs in as one (the kit's campuses make the demo
# students); the offer checks' module, whose RECHECK_SECONDS a test of tools appearing may shorten.
from campus_mcp.oauth.accounts import create_local_student
from campus_mcp.plugin import offers as offer_checks
from campus_mcp.testing.kit import (
    CampusFactory,
    CampusHarness,
    JobRunRecord,
    RestClient,
    ServedCampus,
    StudentBrowser,
    TestDatabases,
    campus_today,
    cli_main,
    free_port,
    harness_app,
    load_plugins,
    plugin_contract,
    prepare_database,
    private_redis,
    serve,
    test_settings,
)

__all__ = [
    "CampusFactory",
    "CampusHarness",
    "JobRunRecord",
    "RestClient",
    "ServedCampus",
    "StudentBrowser",
    "TestDatabases",
    "campus_today",
    "cli_main",
    "create_local_student",
    "free_port",
    "harness_app",
    "load_plugins",
    "offer_checks",
    "plugin_contract",
    "prepare_database",
    "private_redis",
    "serve",
    "test_settings",
]
