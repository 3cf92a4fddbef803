"""The MCP protocol side: the ``/api/mcp`` endpoint, the server that answers it, toolboxes,
resources and subscriptions, the read fast path, and the write protocol as one group
(:mod:`.writes` with :mod:`.confirmation_state`, :mod:`.confirmation_code` and
:mod:`.idempotency`). Below OAuth: the endpoint is handed a token resolver, it builds none.
"""
