"""Campus sign-in against a real SAML 2.0 identity provider: pysaml2's own IdP (its ``Server``) on
loopback, behind a small login app (tests/support/saml_idp.py), one for the module.

The IdP registers each campus from the campus's SP metadata URL, as a campus's IT registers it.
End to end: the MCP SDK's OAuthClientProvider registers, is sent to our login page, and headless
Chromium takes the SAML button through the IdP's login page and its auto-posting form to our ACS,
our consent page, and back to the client, which calls ``my_courses`` and gets the rows the
enrollment feed imported for that campus id before the student ever signed in. The other tests
post, over HTTP, answers made by the same IdP that are wrong in one way each (forged, unsigned,
altered, replayed, expired, for another audience), a person the campus does not admit, the
attribute mapping of the docs' Shibboleth recipe, and metadata fetched from a URL.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from campus_mcp.accounts import Student
from campus_mcp.oauth.testkit import (
    free_port,
    serve_on_loopback,
)
from campus_mcp.testing import CampusFactory, CampusHarness
from sqlalchemy import select

from tests.support.chromium import require_chromium
from tests.support.saml_idp import (
    AFFILIATION,
    DISPLAY_NAME,
    EPPN,
    STUDENT_ID,
    SamlIdp,
    form_value,
    running_saml_idp,
)

require_chromium("the SAML sign-in from an MCP client")

ACCOUNTS: dict[str, dict[str, list[str]]] = {
    # A student: the attributes a campus IdP releases, by OID name.
    "ada": {
        EPPN: ["ada@campus.example"],
        DISPLAY_NAME: ["Ada Lovelace"],
        AFFILIATION: ["student", "member"],
        STUDENT_ID: ["S1001"],
    },
    "grace": {
        EPPN: ["grace@campus.example"],
        DISPLAY_NAME: ["Grace Hopper"],
        AFFILIATION: ["member", "student"],
        STUDENT_ID: ["S1002"],
    },
    # Signed in by the IdP, not a student: staff.
    "alan": {EPPN: ["alan@campus.example"], DISPLAY_NAME: ["Alan Turing"], AFFILIATION: ["staff", "member"]},
}
HELP = "the Registrar's help desk (help@campus.example)"
# The campus's mapping: the student id is the campus's own attribute (by OID), admission by affiliation.
MAPPING = {
    "saml_student_id_attribute": STUDENT_ID,
    "saml_admit_attribute": "eduPersonAffiliation",
    "saml_admit_values": ["student"],
    "oidc_help_contact": HELP,
}


@pytest.fixture(scope="module")
def idp_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("saml-idp")


@pytest.fixture
async def idp(idp_folder: Path) -> AsyncIterator[SamlIdp]:
    # One per test: the IdP app is served in the test's event loop (each test has its own).
    async with running_saml_idp(idp_folder, ACCOUNTS, free_port()) as provider:
        metadata = idp_folder / f"idp-{provider.base.rsplit(':', 1)[1]}.xml"
        metadata.write_text(provider.metadata())
        provider.metadata_file = metadata
        yield provider


@contextlib.asynccontextmanager
async def saml_campus(
    campus_factory: CampusFactory, idp: SamlIdp, **settings: Any
) -> AsyncIterator[tuple[CampusHarness, str]]:
    """A campus with the IdP configured, served, and registered at the IdP from its metadata URL."""
    port = free_port()
    options: dict[str, Any] = {
        "plugins": [],
        "public_url": f"http://127.0.0.1:{port}",
        "saml_idp_metadata": str(idp.metadata_file),
        **MAPPING,
    }
    options.update(settings)
    campus = await campus_factory(**options)
    async with serve_on_loopback(campus.app, port) as base:
        async with httpx.AsyncClient(timeout=30) as http:
            registered = await http.get(f"{base}/saml/metadata")
        assert registered.status_code == 200
        idp.trust(registered.text)
        yield campus, base


async def start_sign_in(browser: httpx.AsyncClient, base: str, next_url: str = "/dashboard") -> str:
    """Press the SAML button; the AuthnRequest the IdP's sign-in page was handed (Redirect binding)."""
    response = await browser.get(f"{base}/login/saml", params={"next": next_url}, follow_redirects=False)
    assert response.status_code == 303, response.text
    return parse_qs(urlsplit(response.headers["location"]).query)["SAMLRequest"][0]


async def idp_sign_in(
    browser: httpx.AsyncClient, base: str, login: str, next_url: str = "/dashboard"
) -> httpx.Response:
    """The whole sign-in as a browser does it: our button, the IdP's login form, its auto-post."""
    response = await browser.get(f"{base}/login/saml", params={"next": next_url}, follow_redirects=True)
    assert "/idp/sso" in str(response.url), response.text
    fields = {name: form_value(response.text, name) for name in ("SAMLRequest", "RelayState")}
    posted = await browser.post(
        str(response.url.join("/idp/login")), data={**fields, "username": login, "password": "any"}
    )
    assert posted.status_code == 200, posted.text
    return await browser.post(
        f"{base}/login/saml/acs", data={"SAMLResponse": form_value(posted.text, "SAMLResponse")}, follow_redirects=True
    )


async def post_answer(browser: httpx.AsyncClient, base: str, saml_response: str) -> httpx.Response:
    return await browser.post(f"{base}/login/saml/acs", data={"SAMLResponse": saml_response}, follow_redirects=True)


async def student_named(campus: CampusHarness, campus_id: str) -> Student | None:
    async with campus.sessions() as session:
        return (await session.execute(select(Student).where(Student.campus_id == campus_id))).scalar_one_or_none()


# --- a student signs in; the mapping; a person not admitted ---------------------------------------


async def test_a_student_signs_in_and_is_linked_by_the_student_id_attribute(
    campus_factory: CampusFactory, idp: SamlIdp
) -> None:
    async with (
        saml_campus(campus_factory, idp) as (campus, base),
        httpx.AsyncClient(timeout=30) as browser,
    ):
        login = await browser.get(f"{base}/login", params={"next": "/dashboard"})
        assert "Sign in with your campus account (SAML)" in login.text
        landed = await idp_sign_in(browser, base, "grace", "/dashboard/settings")
        assert landed.url.path == "/dashboard/settings", landed.text
        assert "Signed in as s1002" in landed.text
    grace = await student_named(campus, "s1002")
    assert grace is not None and grace.display_name == "Grace Hopper"
    assert grace.oidc_issuer == idp.entity_id and grace.oidc_subject == "student-id:s1002"
