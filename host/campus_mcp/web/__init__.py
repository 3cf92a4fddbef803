"""The Litestar app (:mod:`.app`) and what only it needs: the REST twins of operations,
OpenAPI, CORS, health checks.
"""
