"""The comparison server of ``bench/mcp_vs_rest.py``: FastMCP serving one tool that calls the
catalog's own ``sections.search_sections`` on the same database, stateless, JSON responses.

This is what a campus could write in an afternoon instead of running Campus MCP, so the
benchmark holds our ``/api/mcp`` to beating it. Run by the FastMCP virtualenv's Python (the
benchmark makes it), with the campus packages on its path:

    python bench/fastmcp_twin.py --port 8123     # CAMPUS_MCP_DATABASE_URL names the database
"""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn
from campus_catalog.catalog_settings import CatalogSettings
from campus_catalog.queries import sections
from campus_catalog.schemas import SectionSearch
from campus_mcp import Settings
from campus_mcp.base.db import make_engine, make_sessions
from fastmcp import FastMCP


def build(settings: Settings) -> FastMCP:
    catalog = CatalogSettings()
    sessions = make_sessions(make_engine(settings.database_url))
    server = FastMCP("catalog-twin")

    @server.tool
    async def search_sections(
        subject: str | None = None,
        q: str | None = None,
        semantic: bool = False,
        days: str | None = None,
        begins_after: str | None = None,
        ends_before: str | None = None,
        open_only: bool = False,
        term: str | None = None,
        offset: int = 0,
        limit: int = 25,
    ) -> dict[str, Any]:
        """Search the sections of a term (the catalog's own query)."""
        given = {
            "subject": subject,
            "q": q,
            "semantic": semantic,
            "days": days,
            "begins_after": begins_after,
            "ends_before": ends_before,
            "open_only": open_only,
            "term": term,
            "offset": offset,
            "limit": limit,
        }
        query = SectionSearch.model_validate({k: v for k, v in given.items() if v is not None})
        async with sessions() as session:
            page = await sections.search_sections(session, query, settings, catalog)
        answer: dict[str, Any] = page.model_dump(mode="json")
        return answer

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    options = parser.parse_args()
    app = build(Settings()).http_app(path="/mcp", stateless_http=True, json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=options.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
