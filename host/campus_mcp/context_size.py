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


def definition_bytes(tool: ListedTool) -> int:
    listed: dict[str, Any] = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return len(json.dumps(listed, ensure_ascii=False, separators=(",", ":")).encode())


def answer_bytes(result: CallToolResult) -> int:
    return sum(len(item.text.encode()) for item in result.content if isinstance(item, TextContent))
