"""The catalog's upstream sources: Banner 9 class search, the academic calendar, finals schedules.

Each module here knows one upstream and nothing of MCP: the client fetches, the parser turns
what came back into plain dataclasses, the importer writes the catalog's tables. Jobs and the
command line (``campus_catalog.jobs``, ``campus_catalog.cli``) put them together.
"""
