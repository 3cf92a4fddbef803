"""A link to a page of the campus site: what a tool's answer points the student to, and what an
error offers to fix itself (a permission's settings page)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, kw_only=True)
class PageLink:
    """A ``resource_link`` to a page of the campus site that shows the same data."""

    name: str
    title: str
    url: str
    description: str | None = None
