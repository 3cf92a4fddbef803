"""Input of a plugin route that breaks a rule is the caller's mistake: a 400 naming each field.

A plugin route builds the pydantic model its tool shares and lets the ``ValidationError``
escape (docs/plugin-authoring.md), or Litestar refuses a typed parameter it cannot convert
(``ValidationException``). Both answer the JSON every :class:`~campus_mcp.plugin.errors.CampusError`
answers, plus the list of fields::

    {"error": "InvalidInput", "message": "Invalid request: slug: String should have ...",
     "field": "slug", "fields": [{"field": "slug", "rule": "string_too_long", "message": "..."}]}

Only plugin routes get these handlers (``app.plugin_routers``): a ValidationError in a host route
is a bug of the server and stays a logged 500. The values sent are never echoed back or logged
(a query string may hold something private); pydantic's own messages name the rule, not the value.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any, TypedDict

from litestar import MediaType, Request, Response
from litestar.exceptions import ValidationException
from litestar.types import ExceptionHandlersMap
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from campus_mcp.plugin.errors import InvalidInput

log = logging.getLogger(__name__)


class FieldProblem(TypedDict):
    field: str | None  # None: the rule is about the arguments together (e.g. two times in order)
    rule: str
    message: str


def _message(error: ErrorDetails) -> str:
    # A validator's ValueError is a sentence of its own; drop pydantic's "Value error, " before it.
    if error["type"] == "value_error" and "error" in error.get("ctx", {}):
        return str(error["ctx"]["error"])
    return error["msg"]


def field_problems(exc: ValidationError) -> list[FieldProblem]:
    """Each error of ``exc`` as the field, the rule it broke (pydantic's error type) and a sentence."""
    return [
        FieldProblem(
            field=".".join(str(part) for part in error["loc"]) or None,
            rule=error["type"],
            message=_message(error),
        )
        for error in exc.errors(include_url=False, include_input=False)
    ]


def describe_problems(problems: Iterable[FieldProblem]) -> str:
    """``field: sentence; field: sentence``, without the full stop of each sentence, so the caller
    can end the whole with one of its own (not "title words.. Fix")."""
    parts = []
    for problem in problems:
        sentence = problem["message"].strip().rstrip(".")
        parts.append(f"{problem['field']}: {sentence}" if problem["field"] else sentence)
    return "; ".join(parts)


_MISSING = re.compile(r"^(Missing required \w+ parameter '([^']+)')")


def _litestar_problems(exc: ValidationException) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    # A missing parameter comes as a sentence with no list; keep it up to the URL it goes on with.
    if missing := _MISSING.match(str(exc.detail)):
        problems.append(FieldProblem(field=missing.group(2), rule="missing", message=missing.group(1)))
    for item in exc.extra if isinstance(exc.extra, list) else []:
        if not isinstance(item, dict):
            continue
        message = str(item.get("message") or "Invalid value")
        problems.append(FieldProblem(field=item.get("key") or None, rule="invalid_value", message=message))
    return problems


def invalid_request(problems: list[FieldProblem]) -> Response[Any]:
    described = describe_problems(problems) or "a parameter is not valid"
    body: dict[str, Any] = {
        "error": InvalidInput.__name__,
        "message": f"Invalid request: {described}. Fix {'these' if len(problems) > 1 else 'it'} and ask again.",
        "fields": problems,
    }
    named = [problem["field"] for problem in problems if problem["field"]]
    if named:
        body["field"] = named[0]
    return Response(body, status_code=InvalidInput.status, media_type=MediaType.JSON)


def pydantic_error_handler(request: Request[Any, Any, Any], exc: ValidationError) -> Response[Any]:
    problems = field_problems(exc)
    # Logged by model and rule only: if a plugin's answer model broke, the server log shows which.
    log.info(
        "refused input of %s %s (%s): %s",
        request.method,
        request.url.path,
        exc.title,
        ", ".join(f"{p['field'] or '(whole)'}={p['rule']}" for p in problems),
    )
    return invalid_request(problems)


def litestar_validation_handler(_request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    return invalid_request(_litestar_problems(exc))


PLUGIN_ROUTE_HANDLERS: ExceptionHandlersMap = {
    ValidationError: pydantic_error_handler,
    ValidationException: litestar_validation_handler,
}
"""The exception handlers of every plugin router."""
