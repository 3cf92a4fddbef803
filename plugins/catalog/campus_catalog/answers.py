"""The catalog's use of the host's answer cache (``campus_mcp.plugin.answer_cache``).

Every catalog answer is public: the same for every caller, signed in or not, so the tool call
and its REST twin share one cached answer. The key holds the operation, its validated
arguments, the catalog's data version (bumped by every import and refresh,
:mod:`campus_catalog.data_version`), the campus date (which term is current, what is upcoming)
and the database, so two campuses served by one process never see each other's answers; and
the code version (:func:`code_version`), so an answer a previous release stored in Redis is not
handed out, in its old shape, by the next one.

Each catalog row declares it (``Operation(cache=cache_of(model))``); the host keeps one store per
served app (per session factory), in process unless the host has a shared store configured.
``CAMPUS_MCP_CATALOG_ANSWER_CACHE_ENTRIES=0`` turns the cache off.
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from typing import Any

from campus_mcp import AnswerCache, ToolContext, __version__
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import data_version, semantic
from campus_catalog.queries.clock import campus_today

# The advisory's freshness times (cached ten minutes, seed 000) are forgotten by the host when a
# commit of this process bumps the data version (campus_mcp.version_bump), so an import job or a
# section refresh shows at once; other processes' changes show within the ten minutes.

# The releases whose code computes the answers: the host's (the tool layer, the shared schemas)
# and the catalog plugin's (the queries).
RELEASE = f"campus-mcp {__version__}, campus-mcp-catalog {metadata.version('campus-mcp-catalog')}"
_schema_hashes: dict[type[BaseModel], str] = {}


def code_version(model: type[BaseModel]) -> str:
    """The version of the code an answer of ``model`` comes from: the releases, and a hash of the
    model's JSON schema. The hash changes with the answer's shape even between two builds of one
    release number (a field added, renamed or retyped), so a worker of a new build never reads
    an entry of the old shape from the shared store; an entry the new model would still accept
    (a new field with a default) would otherwise be served with that field made up."""
    schema = _schema_hashes.get(model)
    if schema is None:
        text = json.dumps(model.model_json_schema(), sort_keys=True, separators=(",", ":"))
        schema = _schema_hashes[model] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return f"{RELEASE}, answer schema {schema}"


def _entries(catalog: Any) -> int:
    return int(getattr(catalog, "answer_cache_entries", 0) or 0)


def _signed_in(context: ToolContext) -> bool:
    return context.principal.user_id is not None


def cache_of(model: type[BaseModel], *, personal_when_signed_in: bool = False) -> AnswerCache:
    """``Operation(cache=...)`` of a catalog answer of ``model``: kept while the data version, the
    campus date and the code version stay as they are. ``personal_when_signed_in``: a signed-in
    student's answer reads their own record (check_schedule), so only anonymous answers are kept."""

    async def depends_on(context: ToolContext, session: AsyncSession) -> tuple[object, ...]:
        version = await data_version.current(session)
        return (version, campus_today(context.settings.timezone), code_version(model))

    # A search by meaning is counted against its rate limit before the cache is asked (issue 30).
    return AnswerCache(
        depends_on=depends_on,
        entries=_entries,
        around=semantic.counted_search,
        personal=_signed_in if personal_when_signed_in else None,
    )
