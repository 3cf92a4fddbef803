"""The campus SAML identity provider of the SAML tests: pysaml2's own IdP (``saml2.server.Server``)
behind a small web app on loopback, in the test's process.

It does what a Shibboleth IdP does for one SP: reads the SP's metadata (fetched from the SP's
metadata URL, as a campus registers it), takes the AuthnRequest over the HTTP-Redirect binding,
shows a login form, and posts a signed Response back to the SP's assertion consumer service over
the HTTP-POST binding, with the attributes a campus releases (eduPersonPrincipalName, displayName,
eduPersonAffiliation and a student-id attribute, by OID names). Its key signs; a second key of the
same name (``forger``) makes the forged assertions of the hostile tests.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import anyio.to_thread
from campus_mcp.oauth.testkit import serve_on_loopback
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from litestar import Litestar, MediaType, Request, Response, get, post
from saml2 import BINDING_HTTP_REDIRECT, class_name
from saml2.config import IdPConfig
from saml2.metadata import create_metadata_string
from saml2.saml import NAME_FORMAT_URI, NAMEID_FORMAT_PERSISTENT, Assertion
from saml2.server import Server
from saml2.sigver import get_xmlsec_binary
from saml2.xmldsig import DIGEST_SHA256, SIG_RSA_SHA256

# The attribute names a campus IdP releases (the eduPerson and inetOrgPerson OIDs); the student id
# is a campus's own attribute (here under the campus's OID arc), as many universities release one.
EPPN = "urn:oid:1.3.6.1.4.1.5923.1.1.1.6"
AFFILIATION = "urn:oid:1.3.6.1.4.1.5923.1.1.1.1"
DISPLAY_NAME = "urn:oid:2.16.840.1.113730.3.1.241"
STUDENT_ID = "urn:oid:1.3.6.1.4.1.99999.1.1"


def key_and_certificate(folder: Path, name: str) -> tuple[Path, Path]:
    """An RSA key and a self-signed certificate for signing (what an IdP's metadata carries)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    key_path, cert_path = folder / f"{name}.key", folder / f"{name}.crt"
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        )
    )
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path


def _server(base: str, key: Path, cert: Path, sp_metadata: list[str]) -> Server:
    config = IdPConfig()
    config.load(
        {
            "entityid": base + "/idp/metadata",
            "service": {
                "idp": {
                    "endpoints": {"single_sign_on_service": [(base + "/idp/sso", BINDING_HTTP_REDIRECT)]},
                    "name_id_format": [NAMEID_FORMAT_PERSISTENT],
                    # As Shibboleth's and SimpleSAMLphp's defaults (pysaml2's own is rsa-sha1, which the SP
                    # refuses). pysaml2 reads these per service (``_idp_signing_algorithm``), not at the top.
                    "signing_algorithm": SIG_RSA_SHA256,
                    "digest_algorithm": DIGEST_SHA256,
                    "policy": {
                        "default": {
                            "lifetime": {"minutes": 5},
                            "attribute_restrictions": None,
                            "name_form": NAME_FORMAT_URI,
                        }
                    },
                }
            },
            "key_file": str(key),
            "cert_file": str(cert),
            "metadata": {"inline": sp_metadata},
            "xmlsec_binary": get_xmlsec_binary(),
            "delete_tmpfiles": True,
        }
    )
    return Server(config=config)


@dataclass
class SamlIdp:
    """The IdP's folder, keys, accounts and the SP metadata it trusts (set by ``trust``)."""

    folder: Path
    accounts: dict[str, dict[str, list[str]]]
    base: str = ""
    sp_metadata: list[str] = field(default_factory=list)
    key: tuple[Path, Path] = (Path(), Path())
    forger_key: tuple[Path, Path] = (Path(), Path())
    metadata_file: Path = Path()  # the IdP's metadata as a campus keeps it (set by the tests)

    @property
    def entity_id(self) -> str:
        return self.base + "/idp/metadata"

    def server(self, *, forged: bool = False) -> Server:
        key, cert = self.forger_key if forged else self.key
        return _server(self.base, key, cert, self.sp_metadata)

    def metadata(self, *, signed: bool = False, sign_alg: str = SIG_RSA_SHA256, digest_alg: str = DIGEST_SHA256) -> str:
        """The IdP's metadata; ``signed``: signed with the IdP's key (as a federation signs its own),
        with ``sign_alg`` and ``digest_alg``."""
        xml: bytes | str = create_metadata_string(
            None,
            config=self.server().config,
            valid=None,
            sign=signed,
            sign_alg=sign_alg if signed else None,
            digest_alg=digest_alg if signed else None,
        )
        return xml.decode() if isinstance(xml, bytes) else xml  # pysaml2 returns str once signed

    def trust(self, sp_metadata: str) -> None:
        """Register an SP (its metadata XML, as fetched from its metadata URL)."""
        self.sp_metadata.append(sp_metadata)

    def response(
        self,
        saml_request: str,
        login: str,
        *,
        sign: bool = True,
        forged: bool = False,
        edit: Callable[[str], str] | None = None,
        encrypt: bool = False,
        sign_alg: str | None = None,
        digest_alg: str | None = None,
    ) -> tuple[str, str]:
        """(ACS URL, base64 SAMLResponse) answering the SP's AuthnRequest (Redirect binding) for
        ``login``. ``edit`` changes the assertion's XML before it is signed (a late clock, another
        audience): the IdP's own key signs what the hostile tests send. ``sign_alg``, ``digest_alg``:
        other algorithms than the IdP's SHA-256 (an IdP still on rsa-sha1)."""
        server = self.server(forged=forged)
        request = server.parse_authn_request(saml_request, BINDING_HTTP_REDIRECT).message
        sp_entity_id = request.issuer.text
        destination = request.assertion_consumer_service_url
        identity = dict(self.accounts[login])
        response = server.create_authn_response(
            identity,
            in_response_to=request.id,
            destination=destination,
            sp_entity_id=sp_entity_id,
            userid=f"{login}-persistent",
            name_id_policy=request.name_id_policy,
            sign_assertion=sign,
            sign_response=False,
            # Encrypted for the SP with the certificate its metadata publishes.
            encrypt_assertion=encrypt,
            authn={"class_ref": "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"},
            sign_alg=sign_alg,
            digest_alg=digest_alg,
        )
        xml = str(response)
        if edit is not None:
            xml = edit(xml)
            if sign:  # signed again over the edited assertion (xmlsec1 fills the signature anew)
                assertion_id = re.search(r'<[\w:]*Assertion [^>]*ID="([^"]+)"', xml)
                assert assertion_id is not None
                xml = server.sec.sign_statement(xml, class_name(Assertion()), node_id=assertion_id.group(1))
        return destination, base64.b64encode(xml.encode()).decode()


def auto_post_page(destination: str, saml_response: str, relay_state: str) -> str:
    """The HTTP-POST binding's page: a form the browser submits to the SP at once."""
    relay = f'<input type="hidden" name="RelayState" value="{escape(relay_state)}">' if relay_state else ""
    return (
        '<!doctype html><html><body onload="document.forms[0].submit()">'
        f'<form method="post" action="{escape(destination)}">'
        f'<input type="hidden" name="SAMLResponse" value="{escape(saml_response)}">{relay}'
        '<noscript><button type="submit">Continue</button></noscript></form></body></html>'
    )


def idp_app(idp: SamlIdp) -> Litestar:
    @get("/idp/metadata", media_type="application/samlmetadata+xml", sync_to_thread=True)
    def metadata() -> str:
        return idp.metadata()

    @get("/idp/sso", media_type=MediaType.HTML)
    async def sso(request: Request[Any, Any, Any]) -> str:
        saml_request = request.query_params.get("SAMLRequest", "")
        relay_state = request.query_params.get("RelayState", "")
        return (
            "<!doctype html><html><head><title>Campus IdP</title></head><body><h1>Campus sign-in</h1>"
            '<form method="post" action="/idp/login">'
            f'<input type="hidden" name="SAMLRequest" value="{escape(saml_request)}">'
            f'<input type="hidden" name="RelayState" value="{escape(relay_state)}">'
            '<label>Username <input name="username"></label>'
            '<label>Password <input type="password" name="password"></label>'
            '<button type="submit">Login</button></form></body></html>'
        )

    @post("/idp/login")
    async def login(request: Request[Any, Any, Any]) -> Response[str]:
        form = await request.form()
        username = str(form.get("username", ""))
        if username not in idp.accounts:
            return Response("<p>Unknown user</p>", media_type=MediaType.HTML, status_code=401)
        # pysaml2 signs with the xmlsec1 program: off the event loop the campus is served on too.
        destination, saml_response = await anyio.to_thread.run_sync(
            lambda: idp.response(str(form["SAMLRequest"]), username)
        )
        return Response(
            auto_post_page(destination, saml_response, str(form.get("RelayState", ""))),
            media_type=MediaType.HTML,
            status_code=200,
        )

    return Litestar([metadata, sso, login])


@contextlib.asynccontextmanager
async def running_saml_idp(
    folder: Path, accounts: dict[str, dict[str, list[str]]], port: int
) -> AsyncIterator[SamlIdp]:
    idp = SamlIdp(folder=folder, accounts=accounts, base=f"http://127.0.0.1:{port}")
    idp.key = key_and_certificate(folder, "idp")
    idp.forger_key = key_and_certificate(folder, "forger")
    async with serve_on_loopback(idp_app(idp), port):
        yield idp


def form_value(html: str, name: str) -> str:
    """A hidden field's value in a page (the SAMLResponse of the auto-post page)."""
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    return found.group(1) if found else ""


def clock_behind(minutes: int) -> Callable[[str], str]:
    """An edit: every time in the assertion ``minutes`` earlier (an IdP whose clock is behind, or
    an answer that arrives that late)."""

    def shift(xml: str) -> str:
        def earlier(found: re.Match[str]) -> str:
            moment = datetime.datetime.strptime(found.group(1), "%Y-%m-%dT%H:%M:%SZ")
            return f'"{(moment - datetime.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")}"'

        return re.sub(r'"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"', earlier, xml)

    return shift


def audience(entity_id: str) -> Callable[[str], str]:
    """An edit: the assertion made for another service provider."""

    def change(xml: str) -> str:
        return re.sub(r"(<[\w:]*Audience>)[^<]*(</)", rf"\g<1>{escape(entity_id)}\g<2>", xml)

    return change


def recipient(url: str) -> Callable[[str], str]:
    """An edit: the bearer confirmation's Recipient (where the assertion may be presented) changed,
    as an assertion made for another service's consumer URL has it."""

    def change(xml: str) -> str:
        changed = re.sub(r'Recipient="[^"]*"', f'Recipient="{escape(url)}"', xml)
        assert changed != xml
        return changed

    return change
