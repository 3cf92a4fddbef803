"""Campus sign-in against a real OpenID Provider: npm ``oidc-provider`` (panva's certified OP) on
loopback, one process for the module (tests/support/oidc_idp.py).

End to end: the MCP SDK's OAuthClientProvider registers, is sent to our login page, and headless
Chromium takes the campus button through the provider's own login and consent pages, our consent
page, and back to the client, which calls ``my_courses`` and gets the rows the enrollment feed
imported for that campus id before the student ever signed in. The other tests walk the same
provider pages over HTTP: userinfo-only claims, a person the campus does not admit, a key rotated
by the provider, a replayed answer, RP-initiated logout, the docs' recipes' claim mappings, and ID
tokens made with the provider's own key that are wrong in one way each.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from campus_mcp.cli.main import main
from campus_mcp.oauth import oidc
from campus_mcp.oauth.accounts import Student
from campus_mcp.oauth.oidc import OidcClient, OidcError
from campus_mcp.oauth.personal_tokens import PersonalTokens
from campus_mcp.oauth.token_cli import issue
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.testing.oauth import (
    TEST_REDIRECT_URI,
    authorization_request,
    callback_params,
    free_port,
    link_to,
    login_next,
    parse_forms,
    register_app,
    serve_on_loopback,
)
from campus_schedule.feed import import_enrollments
from campus_schedule.models import Enrollment
from campus_settings.feed import tokens as calendar_feed
from click.testing import CliRunner
from joserfc import jwt
from sqlalchemy import select

from tests.support.chromium import chromium, require_chromium
from tests.support.endpoints import campus_assistant
from tests.support.oidc_idp import CLIENT_ID, CLIENT_SECRET, CampusIdp, running_idp, signing_key

require_chromium("the OIDC sign-in from an MCP client")

STUDENT_CLAIMS = {"name": "Ada Lovelace", "email": "ada@campus.example", "preferred_username": "ada", "uin": "S1001"}
ACCOUNTS: dict[str, dict[str, Any]] = {
    # Admitted: a student, every claim in the ID token.
    "ada": {
        "claims": {**STUDENT_CLAIMS, "groups": ["student", "library"], "eduPersonAffiliation": ["student", "member"]}
    },
    # Admitted, but the provider puts the profile in userinfo only (as the specification allows).
    "grace": {
        "claims": {"name": "Grace Hopper", "preferred_username": "grace", "uin": "S1002", "groups": ["student"]},
        "userinfo_only": True,
    },
    # Signed in by the provider, not a student: staff.
    "alan": {"claims": {"name": "Alan Turing", "preferred_username": "alan", "uin": "E2001", "groups": ["staff"]}},
    # The recipes' accounts: Entra ID (groups by object id), Okta (groups by name), Google Workspace (hd).
    "entra": {
        "claims": {"name": "Entra Student", "preferred_username": "s3001@campus.example", "groups": ["8f4e-students"]}
    },
    "okta": {"claims": {"name": "Okta Student", "preferred_username": "s3002", "uin": "S3002", "groups": ["Students"]}},
    "google": {
        "claims": {"name": "Google Student", "email": "s3003@students.campus.example", "hd": "students.campus.example"}
    },
    # Students whose provider account carries an id that must not name s2001 (issue 35.10).
    "mallory": {"claims": {"preferred_username": "s2001 attacker", "groups": ["student"]}},
    "zero-width": {"claims": {"preferred_username": "s2001\u200b", "groups": ["student"]}},
    "escape": {"claims": {"preferred_username": "s2001\u001b[0m", "groups": ["student"]}},
    "look-alike": {"claims": {"preferred_username": "\u04552001", "groups": ["student"]}},
    "two-ids": {"claims": {"preferred_username": ["s2001", "s2002"], "groups": ["student"]}},
}
# The campuses of this module are served on these ports, registered with the provider up front.
PORTS = [free_port() for _ in range(16)]
ADMIT_STUDENTS = {"oidc_admit_claim": "groups", "oidc_admit_values": ["student"]}
SCOPES = "openid profile email groups campus"


@pytest.fixture(scope="module")
def idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CampusIdp]:
    uris = [f"http://127.0.0.1:{port}/login/oidc/callback" for port in PORTS]
    with running_idp(tmp_path_factory.mktemp("idp"), ACCOUNTS, uris) as provider:
        yield provider


async def serve_campus(
    campus_factory: CampusFactory, idp: CampusIdp, port: int, **settings: Any
) -> tuple[CampusHarness, Any]:
    options: dict[str, Any] = {
        "plugins": [],
        "public_url": f"http://127.0.0.1:{port}",
        "oidc_issuer": idp.issuer,
        "oidc_client_id": CLIENT_ID,
        "oidc_client_secret": CLIENT_SECRET,
        "oidc_scopes": SCOPES,
        "oidc_student_id_claim": "uin",
        "oidc_help_contact": "the Registrar's help desk (help@campus.example)",
        **ADMIT_STUDENTS,
    }
    options.update(settings)
    campus = await campus_factory(**options)
    return campus, serve_on_loopback(campus.app, port)


async def idp_sign_in(
    browser: httpx.AsyncClient, base: str, login: str, next_url: str = "/dashboard"
) -> httpx.Response:
    """Press the campus button and answer the provider's login and consent pages, as a browser would."""
    response = await browser.get(f"{base}/login/oidc", params={"next": next_url})
    for _ in range(4):
        if not response.url.path.startswith("/interaction/"):
            return response
        form = parse_forms(response.text)[0]
        data = {field.name: field.value for field in form.fields if field.kind == "hidden"}
        if data.get("prompt") == "login":
            data |= {"login": login, "password": "any"}
        response = await browser.post(str(response.url.join(form.action)), data=data)
    return response


async def student_named(campus: CampusHarness, campus_id: str) -> Student | None:
    async with campus.sessions() as session:
        return (await session.execute(select(Student).where(Student.campus_id == campus_id))).scalar_one_or_none()


# --- end to end: an MCP client, Chromium, the provider, my_courses ------------------------------


async def test_mcp_client_signs_in_through_the_provider_and_sees_the_feeds_courses(
    campus_factory: CampusFactory, idp: CampusIdp
) -> None:
    port = PORTS[0]
    campus = await campus_factory(
        plugins=["catalog", "schedule"],
        demo=True,
        anonymous_access=False,
        public_url=f"http://127.0.0.1:{port}",
        oidc_issuer=idp.issuer,
        oidc_client_id=CLIENT_ID,
        oidc_client_secret=CLIENT_SECRET,
        oidc_scopes=SCOPES,
        oidc_student_id_claim="uin",
        **ADMIT_STUDENTS,
    )
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

    async with serve_on_loopback(campus.app, port) as base, chromium() as browser:
        page = await browser.new_page()
        # Tests reach loopback only; the provider's page asks for a web font.
        await page.route(
            "**/*", lambda route: route.abort() if "127.0.0.1" not in route.request.url else route.continue_()
        )
        landed: dict[str, str] = {}

        async def redirect_handler(url: str) -> None:
            await page.goto(url)  # our login page
            await page.get_by_role("link", name="Sign in with your campus account").click()
            await page.locator('input[name="login"]').fill("ada")
            await page.locator('input[name="password"]').fill("any password")
            await page.get_by_role("button", name="Sign-in").click()
            await page.get_by_role("button", name="Continue").click()  # the provider's consent
            async with page.expect_request(lambda request: request.url.startswith(TEST_REDIRECT_URI)) as sent:
                await page.get_by_role("button", name="Allow").click()  # our consent page
            landed.update(callback_params((await sent.value).url))

        async def callback_handler() -> Any:
            from mcp.client.auth import AuthorizationCodeResult

            return AuthorizationCodeResult(code=landed["code"], state=landed.get("state"), iss=landed.get("iss"))

        async with campus_assistant(base, redirect_handler, callback_handler) as client:
            answer = await client.call_tool("my_courses", {"term": term_uid})
    assert not answer.is_error, answer.content
    assert [course["crn"] for course in answer.structured_content["courses"]] == [crn]
    after = await student_named(campus, "s1001")
    assert after is not None and after.id == before.id and after.oidc_subject == "ada"
    assert after.display_name == "Ada Lovelace"


# --- the claims: userinfo, admission, recipes ---------------------------------------------------


async def test_claims_only_in_userinfo_still_name_the_student(campus_factory: CampusFactory, idp: CampusIdp) -> None:
    campus, served = await serve_campus(campus_factory, idp, PORTS[1])
    async with served as base, httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
        landed = await idp_sign_in(browser, base, "grace", "/dashboard/settings")
    assert landed.url.path == "/dashboard/settings", landed.text
    # Their name from the provider, never the campus id (issue 35, point 6).
    assert "Signed in as Grace Hopper" in landed.text and "s1002" not in landed.text
    grace = await student_named(campus, "s1002")
    assert grace is not None and grace.display_name == "Grace Hopper" and grace.oidc_subject == "grace"


async def test_a_person_not_admitted_sees_why_and_whom_to_ask_and_gets_no_record(
    campus_factory: CampusFactory, idp: CampusIdp
) -> None:
    campus, served = await serve_campus(campus_factory, idp, PORTS[2])
    async with served as base, httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
        refused = await idp_sign_in(browser, base, "alan")
        assert refused.status_code == 403
        assert "You cannot sign in to this service" in refused.text
        assert "this service is for students" in refused.text and "groups does not include student" in refused.text
        assert "the Registrar&#x27;s help desk (help@campus.example)" in refused.text
        assert (await browser.get(f"{base}/dashboard")).url.path == "/login"
    assert await student_named(campus, "e2001") is None


async def test_a_person_not_admitted_is_sent_back_to_the_waiting_app_with_access_denied(
    campus_factory: CampusFactory, idp: CampusIdp
) -> None:
    # The app's authorization request sent the browser here; the provider signs Alan in, the campus
    # refuses him: the refusal page's button takes the browser to the app's redirect URI with
    # access_denied and the app's state (RFC 6749 4.1.2.1), so the app stops waiting.
    _campus, served = await serve_campus(campus_factory, idp, PORTS[12])
    async with served as base, httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
        client_id = await register_app(browser, base, "Campus Assistant")
        next_url = await login_next(browser, authorization_request(base, client_id, "", state="app-state-3"))
        refused = await idp_sign_in(browser, base, "alan", next_url)
        assert refused.status_code == 403 and "groups does not include student" in refused.text
        back = link_to(refused.text, "Return to Campus Assistant")
        assert back is not None and back.startswith(TEST_REDIRECT_URI + "?"), refused.text
        landed = callback_params(back)
        assert (landed["error"], landed["state"], landed["iss"]) == ("access_denied", "app-state-3", base)
        assert "code" not in landed


RECIPES = {
    # docs/sign-in.md, "Connect your identity provider": each recipe's mapping, the provider standing in.
    "entra": {
        "oidc_scopes": "openid profile email",
        "oidc_student_id_claim": "preferred_username",
        "oidc_admit_claim": "groups",
        "oidc_admit_values": ["8f4e-students"],
    },
    "okta": {
        "oidc_scopes": "openid profile email groups campus",
        "oidc_student_id_claim": "uin",
        "oidc_admit_claim": "groups",
        "oidc_admit_values": ["Students"],
    },
    "google": {
        "oidc_scopes": "openid email profile",
        "oidc_student_id_claim": "email",
        "oidc_admit_claim": "hd",
        "oidc_admit_values": ["students.campus.example"],
    },
}
RECIPE_IDS = {"entra": "s3001@campus.example", "okta": "s3002", "google": "s3003@students.campus.example"}


@pytest.mark.parametrize("recipe", sorted(RECIPES))
async def test_each_recipes_claim_mapping_signs_its_student_in(
    campus_factory: CampusFactory, idp: CampusIdp, recipe: str
) -> None:
    port = PORTS[3 + sorted(RECIPES).index(recipe)]
    campus, served = await serve_campus(campus_factory, idp, port, **RECIPES[recipe])
    async with served as base, httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
        landed = await idp_sign_in(browser, base, recipe)
        assert landed.url.path == "/dashboard", landed.text
        # The same campus refuses the staff account: its claims do not carry the recipe's value.
        async with httpx.AsyncClient(timeout=30, follow_redirects=True) as other:
            assert (await idp_sign_in(other, base, "alan")).status_code == 403
    assert await student_named(campus, RECIPE_IDS[recipe]) is not None


# --- keys, replay, logout, provider down --------------------------------------------------------


async def test_a_key_rotated_by_the_provider_still_verifies_and_keys_are_not_fetched_each_time(
    campus_factory: CampusFactory, idp: CampusIdp
) -> None:
    _campus, served = await serve_campus(campus_factory, idp, PORTS[6])
    async with served as base:
        for login in ("ada", "grace"):
            async with httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
                assert (await idp_sign_in(browser, base, login)).url.path == "/dashboard"
        fetched = oidc.jwks_fetches
        async with httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
            assert (await idp_sign_in(browser, base, "ada")).url.path == "/dashboard"
        assert oidc.jwks_fetches == fetched  # the kept keys did
        idp.rotate()
        async with httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
            landed = await idp_sign_in(browser, base, "ada")
        assert landed.url.path == "/dashboard", landed.text
        assert oidc.jwks_fetches == fetched + 1  # once, for the new key id


async def test_a_replayed_sign_in_answer_is_refused(campus_factory: CampusFactory, idp: CampusIdp) -> None:
    _campus, served = await serve_campus(campus_factory, idp, PORTS[7])
    async with served as base, httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
        landed = await idp_sign_in(browser, base, "ada")
        callback = next(r.url for r in landed.history if r.url.path == "/login/oidc/callback")
        again = await browser.get(str(callback))
    assert again.status_code == 400
    assert "does not match a sign-in started here, or it was used already" in again.text


async def test_sign_out_ends_the_providers_session_too(campus_factory: CampusFactory, idp: CampusIdp) -> None:
    _campus, served = await serve_campus(campus_factory, idp, PORTS[8])
    async with served as base, httpx.AsyncClient(timeout=30) as browser:
        browser.follow_redirects = True
        landed = await idp_sign_in(browser, base, "ada")
        form = next(f for f in parse_forms(landed.text) if f.action == "/logout")
        browser.follow_redirects = False
        out = await browser.post(f"{base}/logout", data={f.name: f.value for f in form.fields if f.kind == "hidden"})
        location = out.headers["location"]
        assert location.startswith(idp.issuer + "/session/end?"), location
        assert f"post_logout_redirect_uri={base.replace(':', '%3A').replace('/', '%2F')}%2F" in location
        assert (await browser.get(f"{base}/dashboard")).headers["location"].startswith("/login")


async def test_the_provider_down_is_said_in_words(campus_factory: CampusFactory, idp: CampusIdp) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    _campus, served = await serve_campus(campus_factory, idp, PORTS[9], oidc_issuer=dead)
    async with served as base, httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
        page = await browser.get(f"{base}/login/oidc", params={"next": "/dashboard"})
    assert page.status_code == 502
    assert "The campus sign-in service cannot be reached. Try again in a few minutes." in page.text


# --- hostile ID tokens, signed with the provider's own key unless said otherwise ----------------


def _claims(idp: CampusIdp, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": idp.issuer,
        "aud": CLIENT_ID,
        "sub": "ada",
        "iat": now,
        "exp": now + 300,
        "nonce": "n-1",
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


HOSTILE: dict[str, tuple[dict[str, Any], str]] = {
    "wrong issuer": ({"iss": "http://127.0.0.1:1/other-idp"}, "came from another identity provider"),
    "wrong audience": ({"aud": "another-app"}, "was made for another application"),
    "expired": ({"exp": int(time.time()) - 3600, "iat": int(time.time()) - 7200}, "has expired"),
    "replayed nonce": ({"nonce": "the-nonce-of-an-earlier-sign-in"}, "belongs to another sign-in"),
    # OpenID Connect Core 3.1.3.7: several audiences need this client as the authorized party.
    "several audiences, no azp": ({"aud": ["another-app", CLIENT_ID]}, "was made for another application"),
    "several audiences, azp another app": (
        {"aud": [CLIENT_ID, "another-app"], "azp": "another-app"},
        "was made for another application",
    ),
    "azp another app": ({"azp": "another-app"}, "was made for another application"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
async def test_a_hostile_id_token_is_refused_in_words(campus_factory: CampusFactory, idp: CampusIdp, case: str) -> None:
    campus = await campus_factory(plugins=[], oidc_issuer=idp.issuer, oidc_client_id=CLIENT_ID)
    client = OidcClient(campus.settings)
    document = await client.discover()
    changes, words = HOSTILE[case]
    key = idp.keys[0]
    token = jwt.encode({"alg": "RS256", "kid": key.kid}, _claims(idp, **changes), key)
    with pytest.raises(OidcError, match=words):
        await client.verify(document, token, "n-1")
    # The same token without the fault passes: the refusal is for the fault alone.
    good = jwt.encode({"alg": "RS256", "kid": key.kid}, _claims(idp), key)
    assert (await client.verify(document, good, "n-1"))["sub"] == "ada"


async def test_an_id_token_for_several_audiences_is_taken_when_this_client_is_its_authorized_party(
    campus_factory: CampusFactory, idp: CampusIdp
) -> None:
    campus = await campus_factory(plugins=[], oidc_issuer=idp.issuer, oidc_client_id=CLIENT_ID)
    client = OidcClient(campus.settings)
    document = await client.discover()
    key = idp.keys[0]
    for claims in ({"aud": [CLIENT_ID, "an-api"], "azp": CLIENT_ID}, {"aud": [CLIENT_ID]}, {"azp": CLIENT_ID}):
        token = jwt.encode({"alg": "RS256", "kid": key.kid}, _claims(idp, **claims), key)
        assert (await client.verify(document, token, "n-1"))["sub"] == "ada", claims


async def test_an_id_token_with_a_forged_signature_is_refused(campus_factory: CampusFactory, idp: CampusIdp) -> None:
    campus = await campus_factory(plugins=[], oidc_issuer=idp.issuer, oidc_client_id=CLIENT_ID)
    client = OidcClient(campus.settings)
    document = await client.discover()
    forger = signing_key(idp.keys[0].kid or "")  # the provider's key id, another key
    token = jwt.encode({"alg": "RS256", "kid": forger.kid}, _claims(idp), forger)
    with pytest.raises(OidcError, match="not signed by the campus sign-in service"):
        await client.verify(document, token, "n-1")


# --- campus-mcp students: an identity-provider student listed, disabled, enabled ---------------

MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}})


async def test_disabling_an_idp_student_ends_everything_they_hold_at_once(
    campus_factory: CampusFactory, idp: CampusIdp, monkeypatch: pytest.MonkeyPatch
) -> None:
    campus, served = await serve_campus(
        campus_factory, idp, PORTS[10], plugins=["catalog", "schedule", "settings"], anonymous_access=False
    )
    monkeypatch.setenv("CAMPUS_MCP_DATABASE_URL", campus.settings.database_url)
    monkeypatch.setenv("CAMPUS_MCP_PLUGINS", "catalog,schedule,settings")
    cli = CliRunner()
    async with served as base, httpx.AsyncClient(base_url=base, timeout=30, follow_redirects=True) as browser:
        assert (await idp_sign_in(browser, base, "ada", "/dashboard/settings")).url.path == "/dashboard/settings"
        student = await student_named(campus, "s1001")
        assert student is not None
        oauth_token, _ = await issue(campus.deployment, student.username, ["catalog"], 10)
        personal = await PersonalTokens(campus.sessions, campus.settings).create(
            student.id, name="grade script", scope="catalog", days=7
        )
        async with campus.sessions() as session, session.begin():
            feed = await calendar_feed.issue(session, student.id)

        async def what_works() -> dict[str, object]:
            return {
                "dashboard": (await browser.get("/dashboard/settings")).url.path == "/dashboard/settings",
                "oauth": (
                    await browser.post(
                        "/api/mcp", content=PING, headers={**MCP_HEADERS, "Authorization": f"Bearer {oauth_token}"}
                    )
                ).status_code,
                "personal": (
                    await browser.get("/api/v1/catalog/terms", headers={"Authorization": f"Bearer {personal}"})
                ).status_code,
                "feed": (await browser.get(f"/calendar/{feed}.ics")).status_code,
            }

        assert await what_works() == {"dashboard": True, "oauth": 200, "personal": 200, "feed": 200}
        listed = await asyncio.to_thread(cli.invoke, main, ["students", "list"])
        assert f"{student.id}\ts1001\ts1001\tidentity provider\tAda Lovelace" in listed.output, listed.output

        disabled = await asyncio.to_thread(cli.invoke, main, ["students", "disable", "S1001"])
        assert disabled.exit_code == 0, disabled.output
        assert "Disabled 's1001': 1 app token(s) and 1 personal access token(s) revoked" in disabled.output
        assert "Calendar feed turned off" in disabled.output
        assert await what_works() == {"dashboard": False, "oauth": 401, "personal": 401, "feed": 404}
        assert "\tdisabled" in (await asyncio.to_thread(cli.invoke, main, ["students", "list"])).output
        # Nor can they sign in again at the provider while disabled.
        async with httpx.AsyncClient(timeout=30, follow_redirects=True) as again:
            refused = await idp_sign_in(again, base, "ada")
        assert refused.status_code == 403 and "Your account on this service is disabled." in refused.text

        enabled = await asyncio.to_thread(cli.invoke, main, ["students", "enable", "s1001"])
        assert enabled.exit_code == 0 and "Enabled 's1001'" in enabled.output
        async with httpx.AsyncClient(timeout=30, follow_redirects=True) as again:
            assert (await idp_sign_in(again, base, "ada")).url.path == "/dashboard"
    nobody = await asyncio.to_thread(cli.invoke, main, ["students", "disable", "nobody"])
    assert nobody.exit_code != 0 and "no student with the username or campus id 'nobody'" in nobody.output


# --- the student id: taken whole, of the campus's form (issue 35.10) ----------------------------

UNSAFE_IDS = {
    "mallory": "contains a space",
    "zero-width": "contains an invisible character (U+200B ZERO WIDTH SPACE)",
    "escape": "contains a control character (U+001B)",
    "look-alike": "contains the character \u0455 (U+0455 CYRILLIC SMALL LETTER DZE), which is not plain ASCII",
    "two-ids": "sent 2 different student ids",
}


async def test_an_id_claim_with_a_space_or_a_hidden_character_does_not_take_over_a_feed_student(
    campus_factory: CampusFactory, idp: CampusIdp
) -> None:
    # The nightly feed made s2001's record before s2001 ever signed in; accounts whose
    # preferred_username only looks like s2001, or holds it cut at a space, must not get it.
    campus, served = await serve_campus(
        campus_factory,
        idp,
        PORTS[11],
        plugins=["catalog", "schedule"],
        demo=True,
        oidc_student_id_claim="preferred_username",
    )
    async with campus.sessions() as session:
        term_uid, crn = (
            await session.execute(
                select(Enrollment.term_uid, Enrollment.crn).where(Enrollment.student_id == 1).limit(1)
            )
        ).one()
        await import_enrollments(session, f"student,term,crn\ns2001,{term_uid},{crn}\n", create_students=True)
    async with served as base:
        for login, words in UNSAFE_IDS.items():
            async with httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
                refused = await idp_sign_in(browser, base, login)
                assert refused.status_code == 403, (login, refused.text)
                assert "You cannot sign in to this service" in refused.text
                assert "Your campus account&#x27;s student id (the preferred_username claim)" in refused.text or (
                    login == "two-ids"
                ), refused.text
                assert words in refused.text, (login, refused.text)
                assert "\u200b" not in refused.text and "\x1b" not in refused.text  # named, never echoed
                assert (await browser.get(f"{base}/dashboard")).url.path == "/login"
    s2001 = await student_named(campus, "s2001")
    assert s2001 is not None and s2001.oidc_subject is None  # still the feed's, unclaimed
    async with campus.sessions() as session:
        linked = (await session.execute(select(Student).where(Student.oidc_subject.is_not(None)))).scalars()
        assert list(linked) == []
