"""What the server puts into a model's context, in bytes: each tool's definition in ``tools/list``
and each answer's text, measured the same way by ``bench/context_size.py`` and by
``tests/mcp/test_context_size.py`` (which holds the size goals so they cannot regress).

A definition is counted as the compact JSON of the listed tool (what a client forwards to the
model), less its ``icons``: a client shows them in its own interface and gives the model none (and
over stdio they are data URIs, which would count a picture as words); an answer as the UTF-8 bytes
of its text content (the JSON the model reads).
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import CallToolResult, TextContent
from mcp_types import Tool as ListedTool

KB = 1000
# Issue 16's goals.
TOOL_DEFINITION_GOAL = 6 * KB
# Issue 16 set 60 KB for 31 tools; issue 24's campus-time fields (12-hour text beside every time)
# and anyOf for nullable inputs (docs/tool-schema-dialects.md: clients that read no type lists)
# added about 4 KB to the same 31 tools. The goal moves with the tools a campus gets, about 2 KB a
# tool: a new field or a longer description still fails this, a new tool pays its own way.
TOOLS_LIST_GOAL = 60 * KB
TOOL_ALLOWANCE = 2 * KB
BASE_TOOLS = 31


def tools_list_goal(tools: int) -> int:
    """The bytes tools/list may take with ``tools`` tools: issue 16's 60 KB for its 31, 2 KB a
    tool more (or less) beside them, and 4 KB for issue 24's fields."""
    return TOOLS_LIST_GOAL + 4 * KB + (tools - BASE_TOOLS) * TOOL_ALLOWANCE


SEARCH_PAGE_GOAL = 8 * KB  # a default search_sections page (25 sections)
# Issue 38's goals: tools/list for a signed-in student with every family and the dining example,
# no definition over 3.5 KB, the default answers a model reads most (structured content), and a
# planning prompt's typical request (campus_mcp.mcp.prompt_walkthrough).
TOOLS_LIST_GOAL_38 = 45 * KB
TOOL_DEFINITION_GOAL_38 = 3500
DEFAULT_ANSWER_GOALS = {"my_calendar_settings": 3 * KB, "list_term_electives": 6 * KB}
PROMPT_RUN_CALLS_GOAL = 4
PROMPT_RUN_BYTES_GOAL = 10 * KB
ANSWER_GOAL = 16 * KB  # any example's answer, unless the student asked for more


# The parts of a definition, as tools/list names them; "other" is the rest (name, title, keys).
DEFINITION_PARTS = ("description", "inputSchema", "outputSchema", "annotations", "_meta")


def _compact_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def _for_the_model(tool: ListedTool) -> dict[str, Any]:
    listed: dict[str, Any] = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    listed.pop("icons", None)
    return listed


def definition_bytes(tool: ListedTool) -> int:
    return _compact_bytes(_for_the_model(tool))


def definition_parts(tool: ListedTool) -> dict[str, int]:
    """Where a definition's bytes are: each of DEFINITION_PARTS (its JSON value), and ``other``."""
    listed = _for_the_model(tool)
    parts = {part: _compact_bytes(listed[part]) if part in listed else 0 for part in DEFINITION_PARTS}
    parts["other"] = _compact_bytes(listed) - sum(parts.values())
    return parts


def structured_bytes(result: CallToolResult) -> int:
    """The compact JSON of an answer's structured content (what a client that reads it gives the model)."""
    return _compact_bytes(result.structured_content) if result.structured_content is not None else 0


def answer_bytes(result: CallToolResult) -> int:
    return sum(len(item.text.encode()) for item in result.content if isinstance(item, TextContent))
