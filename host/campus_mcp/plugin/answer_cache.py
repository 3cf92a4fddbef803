"""An optional cache of public answers: the same question on the same data gets the answer
computed the first time, without asking the database again.

A plugin asks for it with one line, ``Operation(cache=AnswerCache(depends_on=...))``, for answers
that are the same for every caller (the public catalog): never a student's own answer, which
would then be one student's data served to another. The key is the operation, its validated
arguments, the database, and what ``depends_on`` reads (such as the version of the data the
answer comes from); a new version makes every older answer unreachable, so nothing is ever
invalidated by hand and a stale entry simply ages out.

Two stores behind one interface:

- :class:`MemoryAnswers`: in the process, a bounded LRU of answer objects (the default). Each
  worker keeps its own; they agree because the data version is read from the database.
- :class:`RedisAnswers`: in the shared store when ``CAMPUS_MCP_REDIS_URL`` is set, as JSON with
  a time to live, so every worker and every host share one copy. Redis failing is not the
  answer failing: the answer is computed as if nothing were cached.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from campus_mcp.base.lru import LRU
from campus_mcp.base.redis_client import redis_client

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from campus_mcp.plugin.tool_context import ToolContext

log = logging.getLogger(__name__)

Answer = TypeVar("Answer", bound=BaseModel)

DEFAULT_ENTRIES = 2048
# In the shared store, an entry of an older version is garbage: let Redis drop it within a day.
REDIS_TTL_SECONDS = 86_400
REDIS_PREFIX = "campus-mcp:answer:"
REDIS_TIMEOUT_SECONDS = 1.0


def answer_key(tool: str, arguments: BaseModel | Mapping[str, Any], *parts: object) -> str:
    """The key of an answer: the tool, its arguments (canonical JSON, so argument order and
    defaults left out or written do not matter) and whatever else the answer depends on, such
    as the data version and the campus date."""
    data = arguments.model_dump(mode="json") if isinstance(arguments, BaseModel) else dict(arguments)
    canonical = json.dumps([tool, data, [str(p) for p in parts]], sort_keys=True, separators=(",", ":"))
    return f"{tool}:{hashlib.sha256(canonical.encode()).hexdigest()}"


class AnswerStore(Protocol):
    async def get(self, key: str, model: type[Answer]) -> Answer | None: ...

    async def put(self, key: str, answer: BaseModel) -> None: ...


class MemoryAnswers:
    """The newest ``entries`` answers of this process. Answers are kept as the objects the query
    returned and handed out as they are: callers treat answers as read-only (they dump them)."""

    def __init__(self, entries: int = DEFAULT_ENTRIES) -> None:
        self.entries = entries
        self._answers: LRU[str, BaseModel] = LRU(entries)
        self.hits = 0
        self.misses = 0

    async def get(self, key: str, model: type[Answer]) -> Answer | None:
        answer = self._answers.get(key)
        if answer is None or not isinstance(answer, model):
            self.misses += 1
            return None
        self.hits += 1
        return answer

    async def put(self, key: str, answer: BaseModel) -> None:
        self._answers.put(key, answer)

    def clear(self) -> None:
        self._answers.clear()


class RedisAnswers:
    """Answers in Redis as JSON, read back through the answer's model."""

    def __init__(self, client: Any, ttl_seconds: int = REDIS_TTL_SECONDS) -> None:
        self.client = client  # a redis.asyncio.Redis
        self.ttl_seconds = ttl_seconds

    async def get(self, key: str, model: type[Answer]) -> Answer | None:
        try:
            data = await self.client.get(REDIS_PREFIX + key)
        except Exception as exc:  # the store is an optimisation: answer without it
            log.warning("answer cache: Redis read failed (%s); answering without the cache", type(exc).__name__)
            return None
        if data is None:
            return None
        try:
            return model.model_validate_json(data)
        except ValidationError:  # an entry an older release wrote in another shape
            return None

    async def put(self, key: str, answer: BaseModel) -> None:
        try:
            await self.client.set(REDIS_PREFIX + key, answer.model_dump_json(), ex=self.ttl_seconds)
        except Exception as exc:
            log.warning("answer cache: Redis write failed (%s)", type(exc).__name__)


def redis_answers(url: str) -> RedisAnswers:
    """The shared store at ``url`` (``redis://host:6379/0``, the host's ``redis_url``). The client
    connects on first use; a Redis that does not answer in a second is skipped, not waited for."""

    return RedisAnswers(redis_client(url, timeout_seconds=REDIS_TIMEOUT_SECONDS))


async def cached(
    store: AnswerStore | None, key: str, model: type[Answer], compute: Callable[[], Awaitable[Answer]]
) -> Answer:
    """The stored answer of ``key``, else ``compute()``'s, stored. No store: just ``compute()``."""
    if store is None:
        return await compute()
    hit = await store.get(key, model)
    if hit is not None:
        return hit
    answer = await compute()
    await store.put(key, answer)
    return answer


def _default_entries(_plugin_settings: Any) -> int:
    return DEFAULT_ENTRIES


@dataclasses.dataclass(frozen=True, kw_only=True)
class AnswerCache:
    """``Operation(cache=AnswerCache(...))``: the operation's answer is public and kept.

    ``depends_on`` is ``async (context, session) -> parts``: everything besides the arguments the
    answer depends on (the data's version, the campus date, the code's release), read in the
    read-only session the operation's own reads then share (``context.session(read_only=True)``
    hands it on). ``entries`` is ``(plugin settings) -> int``: how many answers a process keeps;
    0 turns the cache off. With the host's ``redis_url`` set the answers are shared in Redis.
    ``around`` is ``(args) -> async context manager``, entered around the lookup and the run: for
    what a cached answer must pay too (a rate limit counted per question, not per computation).
    """

    depends_on: Callable[[ToolContext, AsyncSession], Awaitable[Sequence[object]]]
    entries: Callable[[Any], int] = _default_entries
    around: Callable[[Any], AbstractAsyncContextManager[None]] | None = None
    # ``(context) -> bool``: this caller's answer is their own (a signed-in student's plan checked
    # against their schedule), so it is neither read from nor kept in the store.
    personal: Callable[[ToolContext], bool] | None = None


# One store per served app (per session factory) and size; gone with the app.
_stores: weakref.WeakKeyDictionary[Any, dict[int, AnswerStore]] = weakref.WeakKeyDictionary()


def _store_of(context: ToolContext, entries: int) -> AnswerStore | None:
    if entries <= 0:
        return None
    kept = _stores.setdefault(context.sessions, {})
    store = kept.get(entries)
    if store is None:
        redis_url = context.settings.redis_url.get_secret_value()
        store = kept[entries] = redis_answers(redis_url) if redis_url else MemoryAnswers(entries)
    return store


def _database(context: ToolContext) -> str:
    # Hashed: the URL may hold a password, and keys are visible to whoever reads the store.
    return hashlib.sha256(context.settings.database_url.encode()).hexdigest()[:16]


async def cached_call(
    cache: AnswerCache,
    context: ToolContext,
    args: Any,
    *,
    name: str,
    output_model: type[BaseModel],
    run: Callable[[ToolContext, Any], Awaitable[BaseModel]],
) -> BaseModel:
    """``run``'s answer (the operation ``name``'s), from the store when it has the answer of this key."""
    store = _store_of(context, cache.entries(context.plugin_settings))
    if store is None or (cache.personal is not None and cache.personal(context)):
        return await run(context, args)
    async with (
        cache.around(args) if cache.around is not None else contextlib.nullcontext(),
        context.session(read_only=True) as session,
    ):
        parts = await cache.depends_on(context, session)
        key = answer_key(name, args, _database(context), *parts)
        sharing = dataclasses.replace(context, _reading=session)
        return await cached(store, key, output_model, lambda: run(sharing, args))
