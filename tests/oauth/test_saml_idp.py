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

import base64
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from campus_mcp.oauth import saml
from campus_mcp.oauth.accounts import Student, student_for_feed
from campus_mcp.oauth.saml_algorithms import DIGESTS, SIGNING
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import (
    TEST_REDIRECT_URI,
    authorization_request,
    callback_params,
    free_port,
    link_to,
    login_next,
    register_app,
    self_signed_certificate,
    serve_on_loopback,
)
from campus_schedule.feed import import_enrollments
from campus_schedule.models import Enrollment
from litestar import Litestar, get
from mcp.client.auth import AuthorizationCodeResult
from saml2.xmldsig import DIGEST_SHA1, SIG_RSA_SHA1, SIG_RSA_SHA256
from sqlalchemy import select

from tests.support.chromium import chromium, require_chromium
from tests.support.endpoints import campus_assistant
from tests.support.faulty_server import FAULTS, faulty_server
from tests.support.saml_idp import (
    AFFILIATION,
    DISPLAY_NAME,
    EPPN,
    STUDENT_ID,
    SamlIdp,
    audience,
    clock_behind,
    form_value,
    key_and_certificate,
    recipient,
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
    # Students whose id attribute must not name S2001 (issue 35.10).
    "mallory": {AFFILIATION: ["student"], STUDENT_ID: ["S2001 attacker"]},
    "trailing": {AFFILIATION: ["student"], STUDENT_ID: ["S2001 "]},
    "zero-width": {AFFILIATION: ["student"], STUDENT_ID: ["S2001\u200b"]},
    "look-alike": {AFFILIATION: ["student"], STUDENT_ID: ["\u04052001"]},
    "two-ids": {AFFILIATION: ["student"], STUDENT_ID: ["S2001", "S2002"]},
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


# --- end to end: an MCP client, Chromium, the IdP, my_courses ------------------------------------


async def test_mcp_client_signs_in_through_the_saml_idp_and_sees_the_feeds_courses(
    campus_factory: CampusFactory, idp: SamlIdp
) -> None:
    async with saml_campus(campus_factory, idp, plugins=["catalog", "schedule"], demo=True, anonymous_access=False) as (
        campus,
        base,
    ):
        # The nightly feed names Ada by her campus id before she ever signed in: the rows are kept.
        async with campus.sessions() as session:
            term_uid, crn = (
                await session.execute(
                    select(Enrollment.term_uid, Enrollment.crn).where(Enrollment.student_id == 1).limit(1)
                )
            ).one()
            fed = await import_enrollments(session, f"student,term,crn\nS1001,{term_uid},{crn}\n", create_students=True)
        assert fed.added == 1 and not fed.refused and fed.students_created == 1
        before = await student_named(campus, "s1001")
        assert before is not None and before.oidc_subject is None

        async with chromium() as browser:
            page = await browser.new_page()
            await page.route(
                "**/*", lambda route: route.abort() if "127.0.0.1" not in route.request.url else route.continue_()
            )
            landed: dict[str, str] = {}

            async def redirect_handler(url: str) -> None:
                await page.goto(url)  # our login page
                await page.get_by_role("link", name="Sign in with your campus account (SAML)").click()
                await page.get_by_label("Username").fill("ada")
                await page.get_by_label("Password").fill("any password")
                await page.get_by_role("button", name="Login").click()  # the IdP posts its answer to our ACS
                async with page.expect_request(lambda request: request.url.startswith(TEST_REDIRECT_URI)) as sent:
                    await page.get_by_role("button", name="Allow").click()  # our consent page
                landed.update(callback_params((await sent.value).url))

            async def callback_handler() -> AuthorizationCodeResult:
                return AuthorizationCodeResult(code=landed["code"], state=landed.get("state"), iss=landed.get("iss"))

            async with campus_assistant(base, redirect_handler, callback_handler) as client:
                answer = await client.call_tool("my_courses", {"term": term_uid})
    assert not answer.is_error, answer.content
    assert [course["crn"] for course in answer.structured_content["courses"]] == [crn]
    after = await student_named(campus, "s1001")
    assert after is not None and after.id == before.id and after.oidc_issuer == idp.entity_id
    assert after.display_name == "Ada Lovelace"


class RefusedByTheCampus(Exception):
    """What the test's MCP app raises when its redirect URI receives an error."""


def raised(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``exc``, a group it is in, or what caused it is a ``kind`` (the SDK's task groups wrap)."""
    if isinstance(exc, kind):
        return True
    inner = list(getattr(exc, "exceptions", [])) + [e for e in (exc.__cause__, exc.__context__) if e is not None]
    return any(raised(e, kind) for e in inner)


async def test_an_mcp_client_hears_at_once_that_a_person_was_not_admitted(
    campus_factory: CampusFactory, idp: SamlIdp
) -> None:
    # The MCP SDK's client sends Alan (staff) to sign in; Chromium takes the SAML button, the IdP
    # signs him in, the campus refuses him. He reads why, presses "Return to Campus Assistant", and
    # the app's redirect URI gets access_denied with the state it sent: the client stops at once.
    async with (
        saml_campus(campus_factory, idp, plugins=["catalog"], anonymous_access=False) as (_campus, base),
        chromium() as browser,
    ):
        page = await browser.new_page()
        await page.route(
            "**/*", lambda route: route.abort() if "127.0.0.1" not in route.request.url else route.continue_()
        )
        sent_state: list[str] = []
        landed: dict[str, str] = {}

        async def redirect_handler(url: str) -> None:
            sent_state.extend(parse_qs(urlsplit(url).query)["state"])
            await page.goto(url)  # our login page
            await page.get_by_role("link", name="Sign in with your campus account (SAML)").click()
            await page.get_by_label("Username").fill("alan")
            await page.get_by_label("Password").fill("any password")
            await page.get_by_role("button", name="Login").click()  # the IdP posts its answer to our ACS
            await page.get_by_role("heading", name="You cannot sign in to this service").wait_for()
            async with page.expect_request(lambda request: request.url.startswith(TEST_REDIRECT_URI)) as sent:
                await page.get_by_role("link", name="Return to Campus Assistant").click()
            landed.update(callback_params((await sent.value).url))

        async def callback_handler() -> AuthorizationCodeResult:
            if "error" in landed:
                raise RefusedByTheCampus(landed["error"])
            return AuthorizationCodeResult(code=landed["code"], state=landed.get("state"), iss=landed.get("iss"))

        with pytest.raises(BaseException) as failure:
            async with campus_assistant(base, redirect_handler, callback_handler) as client:
                await client.list_tools()
    assert raised(failure.value, RefusedByTheCampus), failure.value
    assert landed["error"] == "access_denied" and landed["iss"] == base
    assert [landed["state"]] == sent_state  # the state the client sent, so it knows which sign-in ended


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
        # Their name from the IdP, never the campus id (issue 35, point 6).
        assert "Signed in as Grace Hopper" in landed.text and "s1002" not in landed.text
    grace = await student_named(campus, "s1002")
    assert grace is not None and grace.display_name == "Grace Hopper"
    assert grace.oidc_issuer == idp.entity_id and grace.oidc_subject == "student-id:s1002"


async def test_a_sign_in_logs_neither_the_assertion_nor_the_students_attributes(
    campus_factory: CampusFactory, idp: SamlIdp, caplog: pytest.LogCaptureFixture
) -> None:
    # A deployment logging at DEBUG: pysaml2 would log the NameID and the whole signed assertion
    # (a bearer credential until it expires) and the attributes; they stay out of the logs.
    caplog.set_level(logging.DEBUG)
    async with saml_campus(campus_factory, idp) as (_campus, base), httpx.AsyncClient(timeout=30) as browser:
        assert (await idp_sign_in(browser, base, "grace")).url.path == "/dashboard"
    # The SAML library's and the server's own lines (a database driver's DEBUG lines carry every
    # query's values, whatever signs in: that is its own level to keep off).
    ours = [r for r in caplog.records if r.name.split(".")[0] in ("saml2", "campus_mcp", "uvicorn", "litestar")]
    logged = "\n".join(record.getMessage() for record in ours)
    assert "/login/saml/acs" in caplog.text  # the requests are logged
    for secret in ("SignatureValue", "Assertion", "NameID", "Grace Hopper", "S1002"):
        assert secret not in logged, secret


def with_signature_object(saml_response: str) -> str:
    """The IdP's signed answer with a ds:Object added to the assertion's signature (unsigned data a
    verifier must refuse): pysaml2 refuses it, quoting the whole document in its error."""
    xml = base64.b64decode(saml_response).decode()
    changed = re.sub(r"</(\w+:)?Signature>", r"<\1Object>extra</\1Object></\1Signature>", xml, count=1)
    assert changed != xml
    return base64.b64encode(changed.encode()).decode()


FAILURES = {
    "altered": lambda idp, r: altered(idp.response(r, "ada")[1]),
    "forged, encrypted": lambda idp, r: idp.response(r, "ada", forged=True, encrypt=True)[1],
    "signature with an Object": lambda idp, r: with_signature_object(idp.response(r, "ada")[1]),
    "wrong recipient": lambda idp, r: idp.response(r, "ada", edit=recipient("https://elsewhere.example/acs"))[1],
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
async def test_a_failed_sign_in_logs_neither_the_assertion_nor_the_students_attributes(
    campus_factory: CampusFactory, idp: SamlIdp, caplog: pytest.LogCaptureFixture, tmp_path: Path, failure: str
) -> None:
    # pysaml2 puts whole assertions (the student's e-mail, name, affiliation and id) into its ERROR
    # lines: a decrypted assertion whose signature fails, a document whose signature breaks the
    # profile. What the server writes says why, without them.
    key, cert = key_and_certificate(tmp_path, "sp")
    caplog.set_level(logging.DEBUG)
    page, _campus = await refused_answer(
        campus_factory,
        idp,
        lambda r: FAILURES[failure](idp, r),
        saml_sp_key_file=str(key),
        saml_sp_cert_file=str(cert),
    )
    assert page.status_code == 400
    library = [r for r in caplog.records if r.name.split(".")[0] == "saml2"]
    assert library, "pysaml2 says why it refused"
    written = caplog.text  # each line as a handler formats it, tracebacks included
    for secret in ("ada@campus.example", "Ada Lovelace", "S1001", "SignatureValue", "AttributeValue"):
        assert secret not in written, (failure, secret)
    assert all(len(r.getMessage()) <= 2000 for r in library), failure
    if failure == "signature with an Object":  # the line still says why, without the document
        assert any("Signature failed to meet constraints on xmldsig" in r.getMessage() for r in library)
        assert any("[SAML document removed]" in r.getMessage() for r in library)


async def test_the_same_student_signs_in_again_as_the_same_record(campus_factory: CampusFactory, idp: SamlIdp) -> None:
    # The IdP sends a transient NameID (new at each sign-in): the student id attribute keeps them one.
    async with saml_campus(campus_factory, idp) as (campus, base):
        for _ in range(2):
            async with httpx.AsyncClient(timeout=30) as browser:
                landed = await idp_sign_in(browser, base, "grace")
                assert landed.url.path == "/dashboard", landed.text
    async with campus.sessions() as session:
        graces = (await session.execute(select(Student).where(Student.display_name == "Grace Hopper"))).scalars()
        assert len(list(graces)) == 1


async def test_a_person_not_admitted_sees_why_and_whom_to_ask_and_gets_no_record(
    campus_factory: CampusFactory, idp: SamlIdp
) -> None:
    async with saml_campus(campus_factory, idp) as (campus, base), httpx.AsyncClient(timeout=30) as browser:
        refused = await idp_sign_in(browser, base, "alan")
        assert refused.status_code == 403
        assert "You cannot sign in to this service" in refused.text
        assert "this service is for students" in refused.text
        assert "eduPersonAffiliation does not include student" in refused.text
        assert "the Registrar&#x27;s help desk (help@campus.example)" in refused.text
        assert (await browser.get(f"{base}/dashboard")).headers["location"].startswith("/login")
    async with campus.sessions() as session:
        assert (await session.execute(select(Student).where(Student.display_name == "Alan Turing"))).first() is None


SAML_UNSAFE_IDS = {
    "mallory": "contains a space",
    "trailing": "contains a space",
    "zero-width": "contains an invisible character (U+200B ZERO WIDTH SPACE)",
    "look-alike": "(U+0405 CYRILLIC CAPITAL LETTER DZE), which is not plain ASCII",
    "two-ids": "sent 2 different student ids",
}


async def test_a_student_id_attribute_with_a_space_or_a_hidden_character_does_not_take_over_a_feed_student(
    campus_factory: CampusFactory, idp: SamlIdp
) -> None:
    async with saml_campus(campus_factory, idp) as (campus, base):
        async with campus.sessions() as session, session.begin():
            await student_for_feed(session, "S2001")  # the nightly feed's record of S2001, not signed in yet
        for login, words in SAML_UNSAFE_IDS.items():
            async with httpx.AsyncClient(timeout=30) as browser:
                refused = await idp_sign_in(browser, base, login)
                assert refused.status_code == 403, (login, refused.text)
                assert words in refused.text, (login, refused.text)
                assert "\u200b" not in refused.text  # named, never echoed
                assert (await browser.get(f"{base}/dashboard")).headers["location"].startswith("/login")
    s2001 = await student_named(campus, "s2001")
    assert s2001 is not None and s2001.oidc_subject is None
    async with campus.sessions() as session:
        linked = (await session.execute(select(Student).where(Student.oidc_subject.is_not(None)))).scalars()
        assert list(linked) == []


async def test_a_person_not_admitted_is_sent_back_to_the_waiting_app_with_access_denied(
    campus_factory: CampusFactory, idp: SamlIdp
) -> None:
    # The app's authorization request sent the browser to sign in; the IdP signs Alan in, the campus
    # refuses him: after the page, the app gets its redirect URI with access_denied and its state
    # (RFC 6749 4.1.2.1) instead of waiting for its own timeout.
    async with saml_campus(campus_factory, idp) as (_campus, base), httpx.AsyncClient(timeout=30) as browser:
        client_id = await register_app(browser, base, "Campus Assistant")
        next_url = await login_next(browser, authorization_request(base, client_id, "", state="app-state-7"))
        refused = await idp_sign_in(browser, base, "alan", next_url)
        assert refused.status_code == 403 and "eduPersonAffiliation does not include student" in refused.text
        assert "Campus Assistant is waiting for this sign-in" in refused.text
        back = link_to(refused.text, "Return to Campus Assistant")
        assert back is not None and back.startswith(TEST_REDIRECT_URI + "?"), refused.text
        assert callback_params(back) == {
            "error": "access_denied",
            "error_description": "The resource owner or authorization server denied the request",
            "state": "app-state-7",
            "iss": base,
        }
        # A sign-in no app asked for (the dashboard's) has no app to go back to.
        async with httpx.AsyncClient(timeout=30) as other:
            plain = await idp_sign_in(other, base, "alan", "/dashboard")
        assert plain.status_code == 403 and "Return to" not in plain.text


async def test_the_refusal_names_an_attribute_by_its_friendly_name_not_its_oid(
    campus_factory: CampusFactory, idp: SamlIdp
) -> None:
    # The Shibboleth recipe names attributes by OID; the person reads eduPersonAffiliation.
    by_oid = {"saml_admit_attribute": AFFILIATION, "saml_student_id_attribute": STUDENT_ID}
    async with (
        saml_campus(campus_factory, idp, **by_oid) as (_campus, base),
        httpx.AsyncClient(timeout=30) as browser,
    ):
        refused = await idp_sign_in(browser, base, "alan")
    assert refused.status_code == 403
    assert "(eduPersonAffiliation does not include student)" in refused.text
    assert "urn:oid" not in refused.text


async def test_the_shibboleth_recipes_mapping_signs_in_by_eppn_and_scoped_affiliation(
    campus_factory: CampusFactory, idp: SamlIdp
) -> None:
    # docs/sign-in.md's Shibboleth/InCommon recipe: eduPersonPrincipalName is the campus id, the
    # affiliation admits (also scoped: student@campus.example), all by the attributes' OID names.
    recipe = {
        "saml_student_id_attribute": "urn:oid:1.3.6.1.4.1.5923.1.1.1.6",
        "saml_display_name_attribute": "displayName",
        "saml_admit_attribute": "urn:oid:1.3.6.1.4.1.5923.1.1.1.1",
        "saml_admit_values": ["student"],
    }
    async with saml_campus(campus_factory, idp, **recipe) as (campus, base):
        async with httpx.AsyncClient(timeout=30) as browser:
            assert (await idp_sign_in(browser, base, "ada")).url.path == "/dashboard"
        async with httpx.AsyncClient(timeout=30) as browser:
            assert (await idp_sign_in(browser, base, "alan")).status_code == 403
    ada = await student_named(campus, "ada@campus.example")
    assert ada is not None and ada.display_name == "Ada Lovelace"


async def test_an_encrypted_assertion_is_accepted_with_the_sps_key(
    campus_factory: CampusFactory, idp: SamlIdp, tmp_path: Path
) -> None:
    key, cert = key_and_certificate(tmp_path, "sp")
    sp_keys = {"saml_sp_key_file": str(key), "saml_sp_cert_file": str(cert)}
    async with (
        saml_campus(campus_factory, idp, **sp_keys) as (campus, base),
        httpx.AsyncClient(timeout=30) as browser,
    ):
        # The SP metadata publishes the certificate the IdP encrypts for.
        published = (await browser.get(f"{base}/saml/metadata")).text
        assert "".join(cert.read_text().splitlines()[1:-1]) in published
        request = await start_sign_in(browser, base)
        answer = idp.response(request, "grace", encrypt=True)[1]
        xml = base64.b64decode(answer).decode()
        assert "EncryptedAssertion" in xml and "S1002" not in xml  # nothing readable on the way
        landed = await post_answer(browser, base, answer)
        assert landed.url.path == "/dashboard", landed.text
    assert await student_named(campus, "s1002") is not None


# --- hostile answers: each refused, with what to do ---------------------------------------------

START_AGAIN = "Start again from the app; if it happens again, tell your campus IT."


async def refused_answer(
    campus_factory: CampusFactory, idp: SamlIdp, make: Any, **settings: Any
) -> tuple[httpx.Response, CampusHarness]:
    """Start a sign-in, post the answer ``make(saml_request)`` returns; the page the student sees."""
    async with (
        saml_campus(campus_factory, idp, **settings) as (campus, base),
        httpx.AsyncClient(timeout=30) as browser,
    ):
        request = await start_sign_in(browser, base)
        answer = await post_answer(browser, base, make(request))
        assert (await browser.get(f"{base}/dashboard", follow_redirects=False)).status_code == 303  # not signed in
    return answer, campus


async def test_a_forged_assertion_is_refused(campus_factory: CampusFactory, idp: SamlIdp) -> None:
    # Signed, but by a key the IdP's metadata does not hold (an attacker's, under the IdP's name).
    page, campus = await refused_answer(campus_factory, idp, lambda r: idp.response(r, "ada", forged=True)[1])
    assert page.status_code == 400
    assert "The sign-in answer is not signed by the campus sign-in service" in page.text and START_AGAIN in page.text
    assert await student_named(campus, "s1001") is None


async def test_an_unsigned_assertion_is_refused(campus_factory: CampusFactory, idp: SamlIdp) -> None:
    page, campus = await refused_answer(campus_factory, idp, lambda r: idp.response(r, "ada", sign=False)[1])
    assert page.status_code == 400
    assert "The sign-in answer is not signed by the campus sign-in service" in page.text and START_AGAIN in page.text
    assert await student_named(campus, "s1001") is None


def altered(saml_response: str) -> str:
    """The IdP's signed answer with the student id changed afterwards (S1001 becomes S1002)."""
    xml = base64.b64decode(saml_response).decode()
    assert "S1001" in xml
    return base64.b64encode(xml.replace("S1001", "S1002").encode()).decode()


async def test_an_assertion_altered_after_signing_is_refused(campus_factory: CampusFactory, idp: SamlIdp) -> None:
    page, campus = await refused_answer(campus_factory, idp, lambda r: altered(idp.response(r, "ada")[1]))
    assert page.status_code == 400
    assert "or was changed after it was signed" in page.text and START_AGAIN in page.text
    assert await student_named(campus, "s1002") is None and await student_named(campus, "s1001") is None


async def test_an_expired_assertion_is_refused(campus_factory: CampusFactory, idp: SamlIdp) -> None:
    page, _campus = await refused_answer(
        campus_factory, idp, lambda r: idp.response(r, "ada", edit=clock_behind(10))[1]
    )
    assert page.status_code == 400
    assert "The sign-in answer has expired" in page.text and START_AGAIN in page.text


async def test_an_assertion_for_another_service_is_refused(campus_factory: CampusFactory, idp: SamlIdp) -> None:
    other = "https://other-service.campus.example/shibboleth"
    page, _campus = await refused_answer(campus_factory, idp, lambda r: idp.response(r, "ada", edit=audience(other))[1])
    assert page.status_code == 400
    assert "The sign-in answer was made for another application" in page.text and START_AGAIN in page.text


async def test_an_assertion_for_another_recipient_is_refused(campus_factory: CampusFactory, idp: SamlIdp) -> None:
    # Signed by the IdP, for this SP (Audience), but its bearer confirmation names another consumer
    # URL: the assertion was made to be presented elsewhere (SAML profiles 4.1.4.2).
    elsewhere = "https://other-service.campus.example/Shibboleth.sso/SAML2/POST"
    page, campus = await refused_answer(
        campus_factory, idp, lambda r: idp.response(r, "ada", edit=recipient(elsewhere))[1]
    )
    assert page.status_code == 400
    assert "The sign-in answer was made to be presented to another address" in page.text and START_AGAIN in page.text
    assert await student_named(campus, "s1001") is None


async def test_the_sp_metadata_advertises_sha256_or_better_only(campus_factory: CampusFactory, idp: SamlIdp) -> None:
    async with saml_campus(campus_factory, idp) as (_campus, base), httpx.AsyncClient(timeout=30) as http:
        published = (await http.get(f"{base}/saml/metadata")).text
    algorithms = re.findall(r'<[\w:]*(DigestMethod|SigningMethod) Algorithm="([^"]+)"', published)
    assert {alg for _kind, alg in algorithms} == {*SIGNING, *DIGESTS}
    for weak in ("md5", "sha1", "sha224", "ripemd160"):
        assert not [alg for _kind, alg in algorithms if alg.endswith(("#" + weak, "-" + weak))], weak


async def test_a_signed_authn_request_is_signed_with_sha256(
    campus_factory: CampusFactory, idp: SamlIdp, tmp_path: Path
) -> None:
    key, cert = key_and_certificate(tmp_path, "sp")
    sp_keys = {"saml_sp_key_file": str(key), "saml_sp_cert_file": str(cert)}
    async with saml_campus(campus_factory, idp, **sp_keys) as (_campus, base), httpx.AsyncClient(timeout=30) as http:
        started = await http.get(f"{base}/login/saml", params={"next": "/dashboard"})
    query = parse_qs(urlsplit(started.headers["location"]).query)
    assert query["SigAlg"] == [SIG_RSA_SHA256] and query["Signature"]


@pytest.mark.parametrize(
    ("sign_alg", "digest_alg", "named"),
    [(SIG_RSA_SHA1, DIGEST_SHA1, "rsa-sha1"), (SIG_RSA_SHA256, DIGEST_SHA1, "sha1")],
)
async def test_an_assertion_signed_with_sha1_is_refused(
    campus_factory: CampusFactory, idp: SamlIdp, sign_alg: str, digest_alg: str, named: str
) -> None:
    # Signed by the IdP's own key, valid in every other way: only the algorithm is old.
    page, campus = await refused_answer(
        campus_factory, idp, lambda r: idp.response(r, "ada", sign_alg=sign_alg, digest_alg=digest_alg)[1]
    )
    assert page.status_code == 400, page.text
    assert f"signed with an algorithm this service does not accept (older than SHA-256: {named})" in page.text
    assert await student_named(campus, "s1001") is None


@pytest.mark.parametrize(("skew", "admitted"), [(0, False), (120, True)])
async def test_the_clock_skew_setting_bounds_how_late_an_answer_may_be(
    campus_factory: CampusFactory, idp: SamlIdp, skew: int, admitted: bool
) -> None:
    # Made with a clock six minutes behind: its five minutes ran out a minute ago. Within two
    # minutes of skew it is taken, with none it is not.
    async with (
        saml_campus(campus_factory, idp, saml_clock_skew_seconds=skew) as (_campus, base),
        httpx.AsyncClient(timeout=30) as browser,
    ):
        request = await start_sign_in(browser, base)
        answer = await post_answer(browser, base, idp.response(request, "ada", edit=clock_behind(6))[1])
    assert (answer.url.path == "/dashboard") is admitted, answer.text
    if not admitted:
        assert "The sign-in answer has expired" in answer.text


async def test_a_replayed_assertion_is_refused_also_with_a_copy_of_the_session(
    campus_factory: CampusFactory, idp: SamlIdp
) -> None:
    async with (
        saml_campus(campus_factory, idp) as (_campus, base),
        httpx.AsyncClient(timeout=30) as browser,
    ):
        request = await start_sign_in(browser, base)
        cookies = dict(browser.cookies)  # the session as it was when the answer was awaited
        answer = idp.response(request, "ada")[1]
        assert (await post_answer(browser, base, answer)).url.path == "/dashboard"
        # The same post again in the same browser (through the one-click page, as no request is
        # pending): the request it answers was answered.
        again = await browser.post(
            f"{base}/login/saml/acs", data={"SAMLResponse": answer, "posted_again": "1"}, follow_redirects=True
        )
        assert again.status_code == 400
        assert "does not match a sign-in started here, or it was used already" in again.text
        # An attacker who copied the session cookie from before and the posted answer: the
        # assertion's ID is written down, so the copy does not sign anyone in either.
        async with httpx.AsyncClient(timeout=30, cookies=cookies) as thief:
            stolen = await post_answer(thief, base, answer)
            assert stolen.status_code == 400
            assert "This sign-in answer was used already, so it was refused" in stolen.text
            assert (await thief.get(f"{base}/dashboard", follow_redirects=False)).status_code == 303


async def test_an_answer_posted_from_another_site_without_the_cookie_continues_with_one_click(
    campus_factory: CampusFactory, idp: SamlIdp
) -> None:
    async with (
        saml_campus(campus_factory, idp) as (_campus, base),
        httpx.AsyncClient(timeout=30) as browser,
    ):
        request = await start_sign_in(browser, base)
        answer = idp.response(request, "ada")[1]
        # The browser leaves the SameSite=Lax cookie out of another site's post.
        async with httpx.AsyncClient(timeout=30) as cookieless:
            first = await post_answer(cookieless, base, answer)
        assert first.status_code == 200 and "Finish signing in" in first.text
        assert form_value(first.text, "SAMLResponse") == answer
        landed = await browser.post(
            f"{base}/login/saml/acs",
            data={"SAMLResponse": form_value(first.text, "SAMLResponse"), "posted_again": "1"},
            follow_redirects=True,
        )
        assert landed.url.path == "/dashboard", landed.text


# --- the IdP's metadata from a URL ---------------------------------------------------------------


async def test_idp_metadata_from_an_https_url_is_fetched_through_the_guard_and_kept(
    campus_factory: CampusFactory, idp: SamlIdp, tmp_path: Path
) -> None:
    cert, key = self_signed_certificate(tmp_path)
    served: list[int] = []

    @get("/idp.xml", media_type="application/samlmetadata+xml")
    async def metadata() -> str:
        served.append(1)
        return idp.metadata_file.read_text()

    port = free_port()
    async with serve_on_loopback(
        Litestar([metadata]), port, ssl_certfile=str(cert), ssl_keyfile=str(key)
    ) as metadata_base:
        url = f"{metadata_base}/idp.xml"
        guard = {"oauth_metadata_loopback_for_tests": True, "oauth_metadata_ca_file": str(cert)}
        async with saml_campus(campus_factory, idp, saml_idp_metadata=url, **guard) as (_campus, base):
            for _ in range(2):
                async with httpx.AsyncClient(timeout=30) as browser:
                    assert (await idp_sign_in(browser, base, "grace")).url.path == "/dashboard"
        assert len(served) == 1  # kept for saml_metadata_refresh_hours, not fetched per sign-in
        # Without the test setting the guard refuses loopback: the student is told in words.
        saml._metadata.clear()
        async with (
            saml_campus(campus_factory, idp, saml_idp_metadata=url) as (_campus, base),
            httpx.AsyncClient(timeout=30) as browser,
        ):
            page = await browser.get(f"{base}/login/saml", params={"next": "/dashboard"})
        assert page.status_code == 502
        assert "The campus sign-in service cannot be reached. Try again in a few minutes." in page.text


# What the student reads when the IdP's metadata cannot be fetched, as for OpenID Connect's token
# endpoint (tests/oauth/test_oauth_oidc.py): the campus sign-in service's trouble, answered 502.
METADATA_FAULTS = {
    "refuse": "The campus sign-in service broke off the connection (or could not be reached)",
    "drop": "The campus sign-in service broke off the connection (or could not be reached)",
    "hang": "The campus sign-in service did not answer in time",
}


@pytest.mark.parametrize("fault", FAULTS)
async def test_idp_metadata_that_cannot_be_fetched_gets_a_502_page_naming_the_campus_sign_in(
    campus_factory: CampusFactory, idp: SamlIdp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """The metadata server refuses the connection, drops it or never answers: at the SAML button,
    and at the ACS of a sign-in under way (another worker, or the kept copy expired meanwhile)."""
    monkeypatch.setattr(saml, "METADATA_FETCH_SECONDS", 1.0)  # the hanging server: a second, not ten
    tls = self_signed_certificate(tmp_path)
    cert = tls[0]

    @get("/idp.xml", media_type="application/samlmetadata+xml")
    async def metadata() -> str:
        return idp.metadata_file.read_text()

    port = free_port()
    url = f"https://127.0.0.1:{port}/idp.xml"
    guard = {"oauth_metadata_loopback_for_tests": True, "oauth_metadata_ca_file": str(cert)}
    saml._metadata.clear()
    async with (
        saml_campus(campus_factory, idp, saml_idp_metadata=url, **guard) as (_campus, base),
        httpx.AsyncClient(timeout=30) as browser,
    ):
        async with serve_on_loopback(Litestar([metadata]), port, ssl_certfile=str(cert), ssl_keyfile=str(tls[1])):
            started = await browser.get(f"{base}/login/saml", params={"next": "/dashboard"})
        assert started.status_code == 303, started.text
        # The metadata server went wrong, and this worker has no copy of the metadata.
        saml._metadata.clear()
        async with faulty_server(fault, tls=tls, port=port):
            acs = await browser.post(f"{base}/login/saml/acs", data={"SAMLResponse": "PHNhbWxwOlJlc3BvbnNlLz4="})
            saml._metadata.clear()
            button = await browser.get(f"{base}/login/saml", params={"next": "/dashboard"})
        for page in (acs, button):
            assert page.status_code == 502, (page.status_code, page.text)
            assert METADATA_FAULTS[fault] in page.text, page.text
            assert "database" not in page.text.lower()
        assert "<h1>Sign-in failed</h1>" in acs.text
        assert (await browser.get(f"{base}/dashboard")).status_code == 303  # nobody signed in


async def test_signed_idp_metadata_is_checked_against_the_metadata_certificate(
    campus_factory: CampusFactory, idp: SamlIdp, tmp_path: Path
) -> None:
    signed = idp.metadata(signed=True)
    assert "Signature" in signed
    documents = {
        "signed": signed,
        # A changed copy: the sign-in service's address moved to another host after signing.
        "altered": signed.replace(f"{idp.base}/idp/sso", "http://127.0.0.1:9/idp/sso"),
        "unsigned": idp.metadata(),
        # Signed by the right key, with a hash that has practical collisions.
        "sha1": idp.metadata(signed=True, sign_alg=SIG_RSA_SHA1, digest_alg=DIGEST_SHA1),
    }
    check = {"saml_idp_metadata_cert": str(idp.key[1])}
    for name, xml in documents.items():
        (tmp_path / f"{name}.xml").write_text(xml)
    async with (
        saml_campus(campus_factory, idp, saml_idp_metadata=str(tmp_path / "signed.xml"), **check) as (_campus, base),
        httpx.AsyncClient(timeout=30) as browser,
    ):
        assert (await idp_sign_in(browser, base, "grace")).url.path == "/dashboard"
    refusals = {
        "altered": "its metadata is not signed by the expected certificate",
        "unsigned": "its metadata is not signed by the expected certificate",
        "sha1": "its metadata is signed with rsa-sha1, older than SHA-256",
    }
    for name, words in refusals.items():
        async with (
            saml_campus(campus_factory, idp, saml_idp_metadata=str(tmp_path / f"{name}.xml"), **check) as (_c, base),
            httpx.AsyncClient(timeout=30) as browser,
        ):
            page = await browser.get(f"{base}/login/saml", params={"next": "/dashboard"})
        assert page.status_code == 502, name
        assert words in page.text, name
