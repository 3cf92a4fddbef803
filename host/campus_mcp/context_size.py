"""What the server puts into a model's context, in bytes: each tool's definition in ``tools/list``
and each answer's text, measured the same way by ``bench/context_size.py`` and by
``tests/test_context_size.py`` (which holds the goals of issue 16 so they cannot regress).

A definition is counted as the compact JSON of the listed tool (what a client forwards to the
model); an answer as the UTF-8 bytes of its text content (the JSON the model reads).
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import CallToolResult, TextContent
from mcp_types import Tool as ListedTool

KB = 1000
# Issue 16's goals.
TOOL_DEFINITION_GOAL = 6 * KB
TOOLS_LIST_GOAL = 60 * KB
SEARCH_PAGE_GOAL = 8 * KB  # a default search_sections page (25 sections)
ANSWER_GOAL = 16 * KB  # any example's answer, unless the student asked for more


# The parts of a definition, as tools/list names them; "other" is the rest (name, title, keys).
DEFINITION_PARTS = ("description", "inputSchema", "outputSchema", "annotations", "_meta")


def _compact_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def definition_bytes(tool: ListedTool) -> int:
    return _compact_bytes(tool.model_dump(mode="json", by_alias=True, exclude_none=True))


def definition_parts(tool: ListedTool) -> dict[str, int]:
    """Where a definition's bytes are: each of DEFINITION_PARTS (its JSON value), and ``other``."""
    listed: dict[str, Any] = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    parts = {part: _compact_bytes(listed[part]) if part in listed else 0 for part in DEFINITION_PARTS}
    parts["other"] = _compact_bytes(listed) - sum(parts.values())
    return parts


def answer_bytes(result: CallToolResult) -> int:
    return sum(len(item.text.encode()) for item in result.content if isinstance(item, TextContent))
