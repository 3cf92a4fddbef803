"""Statements kept per shape of question (``statement_shapes``): a search page's statement built
once per shape of its filters, then run with each call's own values.

Building a search page's statement (its filters, two correlated JSON subqueries, the count) and
SQLAlchemy's cache key of it cost several times what running it costs on SQLite
(docs/performance.md). Two searches that differ only in values (another subject, another offset)
have the same statement but for its bound parameters. So a statement is kept per *shape*: the
structure of its conditions as SQLAlchemy's own cache key sees it (everything but the bound
values). A call takes its conditions' cache keys and runs the kept statement with its own values
in place of the first call's: the bound parameters of two conditions of one structure come in
the same order, which is how SQLAlchemy itself reuses one compiled statement for both.

Private names of SQLAlchemy (``ClauseElement._generate_cache_key``, ``CacheKey.bindparams``,
``BindParameter.effective_value``): checked once at first use, and when they moved the mechanism
logs one line and builds every statement (the plain path, also what ``statement_shapes=false``
or ``CAMPUS_MCP_SPEEDUPS=off`` gives). A condition SQLAlchemy cannot key is built each call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, Executable, column

from campus_mcp.base.lru import LRU
from campus_mcp.base.speedups import Switches, turned_off

if TYPE_CHECKING:
    from campus_mcp.base.settings import Settings

# Shapes kept per kind of statement: a campus's questions have a few dozen (which filters are set).
MAX_SHAPES = 256


@functools.cache
def shapes_supported() -> tuple[str, ...]:
    """What the mechanism needs of SQLAlchemy and is missing (empty: all there), checked on a
    condition built here, once per process."""
    try:
        key = (column("probe") == 1)._generate_cache_key()
        if key is None or [bound.effective_value for bound in key.bindparams] != [1]:
            return ("ClauseElement._generate_cache_key no longer keys a comparison with its bound value",)
    except AttributeError as exc:
        return (f"sqlalchemy: {exc}",)
    return ()


def shapes_on(settings: Settings) -> bool:
    """Whether statements are kept per shape under ``settings`` (and SQLAlchemy is as written for)."""
    if not Switches.of(settings).statement_shapes:
        return False
    missing = shapes_supported()
    if missing:
        _log_once(missing)
        return False
    return True


@functools.cache
def _log_once(missing: tuple[str, ...]) -> None:
    turned_off("statement_shapes", missing)


class ShapedStatements:
    """One kind of statement (a search page), kept per dialect and shape of its conditions."""

    def __init__(self, build: Callable[[str, Sequence[ColumnElement[bool]]], Executable]) -> None:
        self._build = build
        self._kept: LRU[tuple[Any, ...], tuple[Executable, tuple[str, ...]]] = LRU(MAX_SHAPES)

    def statement(
        self, settings: Settings, dialect: str, where: Sequence[ColumnElement[bool]], **params: Any
    ) -> tuple[Executable, dict[str, Any]]:
        """The statement for these conditions and the parameters to run it with (``params``: the
        statement's own named ones, such as a page's offset and limit)."""
        if not shapes_on(settings):
            return self._build(dialect, where), params
        keys = [condition._generate_cache_key() for condition in where]
        if any(key is None for key in keys):
            return self._build(dialect, where), params
        shape = (dialect, *(key.key for key in keys if key is not None))
        kept = self._kept.get(shape)
        if kept is None:
            names = tuple(bound.key for key in keys if key is not None for bound in key.bindparams)
            kept = self._kept.put(shape, (self._build(dialect, where), names))
        statement, names = kept
        values = [bound.effective_value for key in keys if key is not None for bound in key.bindparams]
        return statement, {**dict(zip(names, values, strict=True)), **params}

    def forget(self) -> None:
        self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)
