"""A campus of its own built from saved Banner pages, as ``campus-mcp import banner --file`` builds
one, for the tests of real imports (TAMU's and TRU's fixtures)."""

from __future__ import annotations

from pathlib import Path

from campus_catalog.semantic import fill_vectors_after_import
from campus_catalog.sources.banner_sync import import_banner_file
from campus_mcp.testing import CampusHarness, TestDatabases, harness_app, load_plugins
from campus_mcp.testing import test_settings as settings_of

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
TAMU = FIXTURES / "banner9-searchResults-tamu-202131-csce.json"
TRU = FIXTURES / "banner9-searchResults-tru-201820-all.json"


async def imported_campus(databases: TestDatabases, saved: Path) -> CampusHarness:
    """The saved pages (a file or a folder) imported and their vectors filled, as the command does
    (campus_catalog.cli import_banner), then served: a campus with no catalog source lists the
    catalog's tools when it starts with data (campus_catalog.availability)."""
    url = await databases.migrated_copy(["catalog"])
    registry = load_plugins(settings_of(url, plugins=["catalog"], demo=False))
    importer = CampusHarness(app=harness_app(registry), registry=registry)
    report = await import_banner_file(importer.sessions, saved)
    assert report.stored and not report.refused, report.summary()
    assert (await fill_vectors_after_import(importer.sessions, "banner")).startswith("vectors for")
    await importer.close()
    registry = load_plugins(settings_of(url, plugins=["catalog"], demo=False))
    return CampusHarness(app=harness_app(registry), registry=registry)
