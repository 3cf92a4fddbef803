"""The catalog's use of the host's answer cache (``campus_mcp.answer_cache``).

Every catalog answer is public: the same for every caller, signed in or not, so the tool call
and its REST twin share one cached answer. The key holds the operation, its validated
arguments, the catalog's data version (bumped by every import and refresh,
:mod:`campus_catalog.data_version`), the campus date (which term is current, what is upcoming)
and the database, so two campuses served by one process never see each other's answers; and
the code version (:func:`code_version`), so an answer a previous release stored in Redis is not
handed out, in its old shape, by the next one.

One store per served app (per session factory), in process unless the host has a shared store
configured. ``CAMPUS_MCP_CATALOG_ANSWER_CACHE_ENTRIES=0`` turns the cache off.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from importlib import metadata
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from campus_mcp import (
    AnswerStore,
    MemoryAnswers,
    ToolContext,
    __version__,
    answer_key,
    cached_answer,
    forget_freshness,
    redis_answers,
)
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from campus_catalog import data_version, semantic
from campus_catalog.queries.clock import campus_today

Answer = TypeVar("Answer", bound=BaseModel)

_stores: WeakKeyDictionary[Any, AnswerStore | None] = WeakKeyDictionary()


def _forget_freshness(_moved: frozenset[str]) -> None:
    """The advisory's freshness times are cached ten minutes (seed 000); a change committed in
    this process (an import job, a section refresh, whatever it moved) shows at once instead.
    Other processes' changes show within the ten minutes, as the seed allows."""
    forget_freshness()


data_version.on_change.append(_forget_freshness)


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


def store_of(context: ToolContext) -> AnswerStore | None:
    """The answer store of the app ``context`` belongs to; None when the cache is off."""
    sessions = context.sessions
    if sessions in _stores:
        return _stores[sessions]
    entries = int(getattr(context.plugin_settings, "answer_cache_entries", 0) or 0)
    redis_url = context.settings.redis_url.get_secret_value()
    store: AnswerStore | None
    if entries <= 0:
        store = None
    elif redis_url:
        store = redis_answers(redis_url)
    else:
        store = MemoryAnswers(entries)
    _stores[sessions] = store
    return store


def _database(context: ToolContext) -> str:
    # Hashed: the URL may hold a password, and keys are visible to whoever reads the store.
    return hashlib.sha256(context.settings.database_url.encode()).hexdigest()[:16]


async def answer(
    context: ToolContext,
    session: AsyncSession,
    name: str,
    args: BaseModel,
    model: type[Answer],
    compute: Callable[[], Awaitable[Answer]],
) -> Answer:
    store = store_of(context)
    if store is None:
        return await compute()
    version = await data_version.current(session)
    key = answer_key(
        name, args, version, campus_today(context.settings.timezone), _database(context), code_version(model)
    )
    async with semantic.counted_search(args):
        return await cached_answer(store, key, model, compute)
