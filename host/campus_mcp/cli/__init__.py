"""The ``campus-mcp`` command (:mod:`.main`) and what only it runs: the configuration check, the
workers of ``serve``, ``stdio``, the demo loader and the ``new-plugin`` scaffold.
"""
