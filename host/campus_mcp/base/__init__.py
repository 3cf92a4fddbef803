"""The ground floor: what every other part needs and that needs nothing of ours above it.

Settings, the database (engines, sessions, read-only sessions and the SQLite speed-ups in
:mod:`campus_mcp.base.speedups`), Redis, log lines and request ids, metrics, client addresses, the
body of an ASGI request, and small tools (an LRU, escaping for logs). Imports nothing of campus_mcp
but itself (held by import-linter's contracts in pyproject.toml).
"""
