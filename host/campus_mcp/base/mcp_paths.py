"""Where the MCP endpoint and its OAuth metadata are served: names only, importing nothing.

Kept apart from :mod:`campus_mcp.mcp.endpoint` (the MCP SDK, ~2 s of CPU to import) so the pages and
OAuth routes that only link to these paths, which the plugins' dashboards import, leave the SDK
unloaded in the commands that never serve MCP (``db upgrade``, ``jobs list``, ``token``: each a
subprocess of many tests).
"""

from __future__ import annotations

MCP_PATH = "/api/mcp"
TOOLBOXES_PATH = f"{MCP_PATH}/toolboxes"
PRM_PATH = "/.well-known/oauth-protected-resource"
