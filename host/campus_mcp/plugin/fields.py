"""Argument types a plugin's input models share.

A row id that a client sends is compared with an integer column, which PostgreSQL keeps in 32
bits: an id past 2**31 - 1 makes the query itself fail there (asyncpg refuses to bind it), so the
caller would get "something failed" instead of the "no such ..." answer every other unknown id
gets. The bound belongs to the argument, so the refusal names the field and the range.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

# The largest value of a PostgreSQL ``integer`` (and of SQLite's row ids that we hand out).
MAX_ROW_ID = 2**31 - 1

RowId = Annotated[int, Field(ge=1, le=MAX_ROW_ID)]
