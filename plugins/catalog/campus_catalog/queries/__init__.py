"""The catalog's query functions: each REST route, MCP tool and GraphQL field is one call to one
of them. They take an AsyncSession and a pydantic argument model and return answer models from
:mod:`campus_catalog.schemas`. Import the module you need (``from campus_catalog.queries import
sections``); this package imports nothing itself, so ``schemas`` can use ``queries.clock``.
"""
