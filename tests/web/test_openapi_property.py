"""Property-based test of the REST API over its own OpenAPI document (issue 14 point 4).

schemathesis reads ``/api/v1/openapi.json`` from a real ``campus-mcp serve`` on loopback (the demo
campus, every installed family) and sends each route generated arguments, valid ones and broken
ones: the public routes anonymously, the student routes with student1's personal access token as
``Authorization: Bearer`` (made on the dashboard's Access tokens page with every permission, as a
student makes one: the ``personal_token`` scheme the document declares). Every answer must be no 5xx, of the declared
content type, and match the declared schema of its status (the answer model, or the error body
of a 400/401/403/404). Seeded and bounded (``MAX_EXAMPLES`` per route, no coverage or stateful
phase), so a failure reproduces and the test stays within about a minute of CI.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
import schemathesis
from campus_mcp.testing import TestDatabases, serve
from campus_mcp.testing.oauth import parse_forms
from campus_mcp.testing.serve import ServedCampus
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

MAX_EXAMPLES = 8
SEED = 14_4
CHECKS = [not_a_server_error, content_type_conformance, response_schema_conformance]
PAT = re.compile(r"cmcp_pat_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")


@pytest_asyncio.fixture(scope="module")
async def served(
    campus_databases: TestDatabases, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[ServedCampus]:
    folder = tmp_path_factory.mktemp("openapi_property")
    env = {
        "CAMPUS_MCP_DATABASE_URL": await campus_databases.demo_copy(),
        "CAMPUS_MCP_SCHEDULER": "false",
        "CAMPUS_MCP_CONFIG": str(folder / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(folder / "var"),
        # The limits would answer most of the student routes' examples with a 429 (one student,
        # one address, hundreds of requests a minute): off, so each route's own answers are tried.
        "CAMPUS_MCP_RATE_LIMITS": "false",
    }
    # The demo copy is migrated and loaded already: no preparing (it took most of the start-up).
    with serve(env, log_path=folder / "serve.log", args=["--no-prepare"]) as campus:
        yield campus


@pytest.fixture(scope="module")
def student_token(served: ServedCampus) -> str:
    """student1's personal access token with every permission the page offers (the write ones too,
    so that the write routes answer rather than 403), made through the real login and token forms."""
    with httpx.Client(base_url=served.base, follow_redirects=False, timeout=30) as browser:
        login = next(form for form in parse_forms(browser.get("/login").text) if form.action == "/login")
        data = {field.name: field.value for field in login.fields if field.kind == "hidden"}
        answer = browser.post("/login", data={**data, "username": "student1", "password": "demo"})
        assert answer.status_code == 303, answer.text
        page = browser.get("/dashboard/tokens")
        form = next(form for form in parse_forms(page.text) if form.action == "/dashboard/tokens")
        fields = {field.name: field.value for field in form.fields if field.kind == "hidden"}
        choice = {"name": "openapi property test", "expiry_days": "7", "scope_choice": list(form.checkboxes)}
        # The post redirects to the page that shows the token once (post/redirect/get).
        made = browser.post("/dashboard/tokens", data={**fields, **choice}, follow_redirects=True)
        (token,) = PAT.findall(made.text)
        return token


@pytest.fixture(scope="module")
def rest_api(served: ServedCampus) -> Any:
    config = SchemathesisConfig.from_dict(
        {
            "seed": SEED,
            "phases": {"coverage": {"enabled": False}, "stateful": {"enabled": False}},
            "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True},
        }
    )
    return schemathesis.openapi.from_url(f"{served.base}/api/v1/openapi.json", config=config)


schema = schemathesis.pytest.from_fixture("rest_api")


def _public(operation: dict[str, Any]) -> bool:
    return {} in operation.get("security", [])


@schema.parametrize()
def test_the_rest_api_answers_what_its_document_says(case: Any, student_token: str) -> None:
    headers = None if _public(case.operation.definition.raw) else {"Authorization": f"Bearer {student_token}"}
    response = case.call(headers=headers, timeout=60)
    case.validate_response(response, checks=CHECKS)
    # The document declares a 401 for a refused token: this token is live, so it must never get one.
    assert response.status_code != 401, response.text[:300]


def test_the_server_logged_no_crash(served: ServedCampus) -> None:
    # Runs after the generated tests (file order): nothing they sent made the server log a traceback.
    log = Path(served.log).read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
