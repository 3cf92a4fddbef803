"""Every catalog read gives the same answer in a read-only session (``ToolContext.session(
read_only=True)``: no transaction, one round trip per statement on PostgreSQL) as in the
ordinary one: each operation's query, with each of its example calls, on the demo campus and on
the sparse catalog. The read session refuses any write, so this also shows that no catalog read
writes (the stale-section refresh of get_section and check_schedule is their ``after``, which
keeps its own session and is not run here)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from campus_catalog.examples import add_sparse_catalog
from campus_catalog.operations import OPERATIONS, CatalogOperation
from campus_mcp import Principal, ToolContext, ToolExample, testing
from campus_mcp.testing import CampusHarness, TestDatabases, harness_app, load_plugins

_CALLS = [
    pytest.param(row, example, id=f"{row.name}-{example.data}-{number}")
    for row in OPERATIONS
    for number, example in enumerate(row.operation.examples)
]


@pytest.fixture(scope="module")
async def sparse_campus(campus_databases: TestDatabases) -> AsyncIterator[CampusHarness]:
    """The sparse catalog of the examples (``add_sparse_catalog``), once for the module."""
    # testing.test_settings by its module: imported by name, pytest would collect it as a test.
    registry = load_plugins(
        testing.test_settings(await campus_databases.migrated_copy(["catalog"]), plugins=["catalog"])
    )
    harness = CampusHarness(app=harness_app(registry), registry=registry)
    async with harness.sessions() as session:
        await add_sparse_catalog(session)
    yield harness
    await harness.close()
    await campus_databases.drop(harness.settings.database_url)


async def _answer(context: ToolContext, row: CatalogOperation, args: Any, *, read_only: bool) -> Any:
    async with context.session(read_only=read_only) as session:
        answer = await row.query(session, args, context.settings, context.plugin_settings)
    return answer.model_dump(mode="json")


@pytest.mark.parametrize(("row", "example"), _CALLS)
async def test_a_catalog_read_answers_the_same_without_a_transaction(
    row: CatalogOperation, example: ToolExample, demo_campus: CampusHarness, sparse_campus: CampusHarness
) -> None:
    campus = demo_campus if example.data == "demo" else sparse_campus
    context = ToolContext(
        principal=Principal(user_id=None, username=None, client_id=None, scopes=frozenset()),  # anonymous
        settings=campus.settings,
        sessions=campus.sessions,
        plugin_settings=campus.deployment.plugin_settings("catalog"),
    )
    args = row.operation.input_model.model_validate(dict(example.arguments))
    expected = await _answer(context, row, args, read_only=False)
    assert await _answer(context, row, args, read_only=True) == expected
