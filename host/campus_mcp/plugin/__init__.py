"""The plugin contract: what ``campus_mcp.__all__`` hands a plugin author, readable end to end here.

The hooks (:mod:`.hookspecs`), what a plugin contributes (:mod:`.contributions`, :mod:`.operations`),
what a tool and a job are given (:mod:`.tool_context`, :mod:`.job_context`), the errors a tool raises,
confirmation of changes, plugin settings, the caller (:mod:`.principal`), student text, answer caches
and data versions. Stands on :mod:`campus_mcp.base` only.
"""
