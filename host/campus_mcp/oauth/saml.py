"""Sign-in with the campus SAML 2.0 identity provider (Shibboleth/InCommon and the like), as a
service provider, with pysaml2 (xmlsec1 checks the signatures; docs/sign-in.md says why pysaml2).

Web Browser SSO: the AuthnRequest goes to the IdP over the HTTP-Redirect binding, its ID kept in
the student's session; the Response comes back to the assertion consumer service over HTTP-POST.
pysaml2 checks the signature (the Response's or the assertion's: one of them must be signed by a
key in the IdP's metadata), the Audience (this SP's entity id), the Recipient and Destination (the
ACS URL), InResponseTo (the request this session started, used once) and NotBefore/NotOnOrAfter
within ``saml_clock_skew_seconds``. An encrypted assertion is decrypted with the SP's key when one
is set. On top of that, an assertion's ID is written down once used (``_first_use``), so the same
assertion posted again is refused on any worker, also with a copy of the session cookie.

The IdP's metadata comes from a file or an https URL; a URL is fetched through the same SSRF guard
as client metadata documents (``campus_mcp.base.outbound.guarded_get``), kept for ``saml_metadata_refresh_hours`` and then
fetched again at the next sign-in. With ``saml_idp_metadata_cert`` set, metadata must carry a
signature that checks with that certificate (a federation signs its metadata). The attributes are matched by their name (an OID such as
``urn:oid:1.3.6.1.4.1.5923.1.1.1.6``) or their friendly name (``eduPersonPrincipalName``), case
aside. Admission and the student record work as for OpenID Connect (``oidc``): the IdP's entity id
and the NameID stand for the issuer and subject.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import anyio.to_thread
import httpx
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.attributemaps import saml_uri, shibboleth_uri
from saml2.client import Saml2Client
from saml2.config import SPConfig
from saml2.md import NAMESPACE as MD_NAMESPACE
from saml2.metadata import entity_descriptor, metadata_tostring_fix
from saml2.response import AuthnResponse, StatusError, UnsolicitedResponse
from saml2.saml import NAMEID_FORMAT_PERSISTENT
from saml2.sigver import SigverError, get_xmlsec_binary, security_context
from saml2.validate import ResponseLifetimeExceed, ToEarly, valid_instance
from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from campus_mcp.base.db import utcnow
from campus_mcp.base.outbound import FetchRefused, guarded_get
from campus_mcp.base.outside_documents import DocumentTooLarge, sign_in_limit
from campus_mcp.base.settings import Settings
from campus_mcp.mcp.answered_states import AnsweredRequestState
from campus_mcp.oauth.accounts import IdentityRefused, Student, campus_id_of, oidc_student
from campus_mcp.oauth.campus_id import CampusIdRefused, checked_campus_id
from campus_mcp.oauth.oidc import TOO_LARGE, OidcError, OidcRefused, no_answer_words
from campus_mcp.oauth.saml_algorithms import (
    DIGESTS,
    SIGNING,
    keep_strong_algorithms,
    weak_algorithm,
    weak_algorithm_in,
)
from campus_mcp.oauth.saml_logs import quiet_saml_logs

METADATA_PATH = "/saml/metadata"
ACS_PATH = "/login/saml/acs"
METADATA_WHAT = "the identity provider's SAML metadata"
# A single IdP's metadata is a few KB, read up to sign_in_document_max_bytes; a federation's
# aggregate (InCommon's is tens of MB) is not what this setting takes: a campus points it at the
# IdP's own or the federation's per-entity (MDQ) URL.
METADATA_FETCH_SECONDS = 10.0
START_AGAIN = "Start again from the app; if it happens again, tell your campus IT."
UNREACHABLE = "The campus sign-in service cannot be reached. Try again in a few minutes."

# The rows of assertions used (in the one-time values' table) begin with this.
SEEN_PREFIX = "saml:"
# pysaml2's INFO and DEBUG lines carry the NameID and whole assertions (a bearer credential, and
# the student's attributes), and its errors quote whole documents: only its warnings and errors
# reach the logs, with the documents cut out (saml_logs).
quiet_saml_logs()

# The IdP's metadata by source, for this process: (fetched at, XML).
_metadata: dict[str, tuple[float, str]] = {}


class SamlError(OidcError):
    """Why the SAML sign-in failed, in words for the student."""


class SamlUnreachable(SamlError):
    """The IdP's metadata could not be fetched (refused, cut, timed out): 502, as for OpenID Connect."""

    status = 502


class SamlRefused(OidcRefused):
    """The IdP signed the person in, but this campus does not admit them."""


def saml_configured(settings: Settings) -> bool:
    return settings.saml_sign_in


def sp_entity_id(settings: Settings) -> str:
    return settings.base_url + METADATA_PATH


def _metadata_signed_by(xml: str, settings: Settings) -> bool:
    """True when the metadata carries a signature that checks with ``saml_idp_metadata_cert``
    (the federation's or the IdP's metadata signing certificate)."""
    security = security_context(sp_config(settings, None))
    root = re.search(r"<(?:[\w.-]+:)?(EntitiesDescriptor|EntityDescriptor)[\s>]", xml)
    if root is None:
        return False
    try:
        return bool(
            security.verify_signature(
                xml, cert_file=settings.saml_idp_metadata_cert, node_name=f"{MD_NAMESPACE}:{root.group(1)}"
            )
        )
    except Exception:  # xmlsec1 fails in its own ways on unsigned or altered documents: all are "no"
        return False


async def _checked(xml: str, settings: Settings) -> str:
    if settings.saml_idp_metadata_cert and not await anyio.to_thread.run_sync(_metadata_signed_by, xml, settings):
        raise SamlError(
            "The campus sign-in is not set up correctly (its metadata is not signed by the expected "
            "certificate); tell your campus IT."
        )
    weak = weak_algorithm_in(xml) if settings.saml_idp_metadata_cert else None
    if weak is not None:
        raise SamlError(
            "The campus sign-in is not set up correctly (its metadata is signed with "
            f"{weak.rsplit('#', 1)[-1]}, older than SHA-256); tell your campus IT."
        )
    return xml


async def idp_metadata(settings: Settings) -> str:
    """The IdP's metadata XML: read from the file, or fetched (guarded) and kept for a while; its
    signature checked when ``saml_idp_metadata_cert`` is set."""
    source = settings.saml_idp_metadata
    if not source.startswith(("https://", "http://")):
        try:
            text = await anyio.Path(source).read_text()
        except OSError as exc:
            raise SamlError(
                "The campus sign-in is not set up correctly (its metadata file cannot be read); tell your campus IT."
            ) from exc
        return await _checked(text, settings)
    kept = _metadata.get(source)
    if kept is not None and time.monotonic() - kept[0] < settings.saml_metadata_refresh_hours * 3600:
        return kept[1]
    try:
        with anyio.fail_after(METADATA_FETCH_SECONDS):
            raw = await guarded_get(source, settings, limit=sign_in_limit(settings, METADATA_WHAT))
    except DocumentTooLarge as exc:
        logging.getLogger(__name__).warning("%s", exc)
        if kept is not None:
            return kept[1]
        raise SamlError(TOO_LARGE) from exc
    except (FetchRefused, TimeoutError, httpx.HTTPError) as exc:
        if kept is not None:
            return kept[1]  # the IdP's keys rarely change: the last good copy beats no sign-in at all
        # Not the sign-in's fault nor the student's: the campus sign-in service did not answer (502),
        # on the start page as at the ACS (another worker, or the kept copy expired meanwhile).
        words = UNREACHABLE if isinstance(exc, FetchRefused) else no_answer_words(exc)
        raise SamlUnreachable(words) from exc
    try:
        xml = await _checked(raw.decode("utf-8", errors="replace"), settings)
    except SamlError:
        if kept is not None:
            return kept[1]  # a bad copy on the server does not replace the good one kept
        raise
    _metadata[source] = (time.monotonic(), xml)
    return xml


def sp_config(settings: Settings, idp_xml: str | None) -> SPConfig:
    """pysaml2's configuration of this service provider (and of the IdP it trusts, when given)."""
    base = settings.base_url
    options: dict[str, Any] = {
        "entityid": sp_entity_id(settings),
        "service": {
            "sp": {
                "name": settings.product_name,
                "endpoints": {"assertion_consumer_service": [(base + ACS_PATH, BINDING_HTTP_POST)]},
                # Only answers to a request this browser started (InResponseTo) are taken.
                "allow_unsolicited": False,
                "want_response_signed": False,
                "want_assertions_signed": False,
                # Shibboleth signs the Response by default, others the assertion: one must be signed.
                "want_assertions_or_response_signed": True,
                "authn_requests_signed": bool(settings.saml_sp_key_file),
                "name_id_format": [NAMEID_FORMAT_PERSISTENT],
                "name_id_format_allow_create": True,
                # AuthnRequests this SP signs (with a key set) use SHA-256, as the metadata advertises.
                # pysaml2 reads these per service (``_sp_signing_algorithm``); at the top they are ignored.
                "signing_algorithm": SIGNING[0],
                "digest_algorithm": DIGESTS[0],
            }
        },
        "accepted_time_diff": settings.saml_clock_skew_seconds,
        "xmlsec_binary": get_xmlsec_binary(),
        "delete_tmpfiles": True,
        "allow_unknown_attributes": True,
        "metadata": {"inline": [idp_xml]} if idp_xml else {},
    }
    if settings.saml_sp_key_file and settings.saml_sp_cert_file:
        options["key_file"] = settings.saml_sp_key_file
        options["cert_file"] = settings.saml_sp_cert_file
        # The same pair decrypts encrypted assertions (the metadata publishes the cert for both uses).
        options["encryption_keypairs"] = [
            {"key_file": settings.saml_sp_key_file, "cert_file": settings.saml_sp_cert_file}
        ]
    config = SPConfig()
    config.load(options)
    return config


def sp_metadata(settings: Settings) -> str:
    """This service provider's metadata, for the campus to register with its IdP or federation:
    pysaml2's (``create_metadata_string`` without signing), with only the SHA-256-or-better
    algorithms advertised (``saml_algorithms``)."""
    entity = entity_descriptor(sp_config(settings, None))
    keep_strong_algorithms(entity)
    valid_instance(entity)
    xml: bytes = metadata_tostring_fix(entity, {"xs": "http://www.w3.org/2001/XMLSchema"}, None)
    return xml.decode()


async def setup_problem(settings: Settings) -> str | None:
    """What stops a SAML sign-in here, for ``campus-mcp check`` (None: nothing found)."""
    try:
        get_xmlsec_binary()
    except SigverError:
        return "xmlsec1 is not installed (SAML signatures are checked with it). Install it: apt-get install xmlsec1."
    try:
        client = await SamlClient(settings)._client()
        SamlClient(settings)._idp_entity_id(client)
    except SamlError as exc:
        return f"{exc} Check CAMPUS_MCP_SAML_IDP_METADATA ({settings.saml_idp_metadata})."
    return None


# pysaml2's map of the common attributes' URI names (the eduPerson and inetOrgPerson OIDs) to their
# friendly names, for an IdP that sends an attribute without its FriendlyName.
_OID_NAMES = {
    str(oid).lower(): str(friendly) for oid, friendly in {**shibboleth_uri.MAP["fro"], **saml_uri.MAP["fro"]}.items()
}


@dataclass(frozen=True)
class SamlIdentity:
    """What a checked assertion says: who issued it, about whom, the attributes, its ID and expiry."""

    issuer: str
    subject: str  # the persistent NameID; empty when the IdP sent a transient one
    attributes: dict[str, list[str]]
    assertion_id: str
    expires: datetime
    # The friendly names the assertion gives its attributes, by the lower-cased (urn:oid:) name.
    friendly_names: dict[str, str] = field(default_factory=dict)

    def friendly(self, name: str) -> str:
        """An attribute's name as a person reads it (eduPersonAffiliation, not urn:oid:1.3.6...): the
        assertion's FriendlyName, else pysaml2's map, else the name as configured."""
        return self.friendly_names.get(name.lower()) or _OID_NAMES.get(name.lower(), name)


def attributes_of(response: AuthnResponse) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The assertion's attributes by name and by friendly name, both lower-cased, their values as
    sent: a student id is taken whole (``campus_id``), not trimmed as pysaml2's ``ava`` does. And
    the friendly names the assertion gives, by lower-cased name."""
    found: dict[str, list[str]] = {}
    friendly: dict[str, str] = {}
    assertion = response.assertion
    for statement in getattr(assertion, "attribute_statement", None) or []:
        for attribute in statement.attribute:
            values = [str(value.text) for value in attribute.attribute_value if value.text]
            names = {str(name).lower() for name in (attribute.name, attribute.friendly_name) if name}
            names |= {_OID_NAMES[name].lower() for name in names if name in _OID_NAMES}
            for name in names:
                found.setdefault(name, []).extend(values)
            if attribute.name and attribute.friendly_name:
                friendly[str(attribute.name).lower()] = str(attribute.friendly_name)
    return found, friendly


def _words(exc: Exception) -> str:
    """The student's words for why pysaml2 refused a Response."""
    text = str(exc)
    if isinstance(exc, SigverError):
        return (
            "The sign-in answer is not signed by the campus sign-in service (or was changed after it "
            f"was signed), so it was refused. {START_AGAIN}"
        )
    if isinstance(exc, ResponseLifetimeExceed):
        return f"The sign-in answer has expired (it took too long to arrive, or a clock is wrong). {START_AGAIN}"
    if isinstance(exc, ToEarly):
        return f"The sign-in answer is not valid yet (a clock is wrong). {START_AGAIN}"
    if isinstance(exc, UnsolicitedResponse):
        return (
            "This sign-in answer does not match a sign-in started here, or it was used already. "
            "Start again from the app."
        )
    if isinstance(exc, StatusError):
        return (
            f"The campus sign-in service did not sign you in ({text or 'no reason given'}). Start again from the app."
        )
    if "AudienceRestrictions" in text:
        return f"The sign-in answer was made for another application, so it was refused. {START_AGAIN}"
    if "recipient" in text.lower():
        return (
            "The sign-in answer was made to be presented to another address than this service's, so it "
            f"was refused. {START_AGAIN}"
        )
    return f"The campus sign-in service sent a sign-in answer that does not check out, so it was refused. {START_AGAIN}"


class SamlClient:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def _client(self) -> Saml2Client:
        xml = await idp_metadata(self.settings)
        try:
            return await anyio.to_thread.run_sync(lambda: Saml2Client(config=sp_config(self.settings, xml)))
        except Exception as exc:  # pysaml2 raises plain exceptions for metadata it cannot read
            raise SamlError(
                "The campus sign-in is not set up correctly (its metadata cannot be read); tell your campus IT."
            ) from exc

    def _idp_entity_id(self, client: Saml2Client) -> str:
        idps = sorted(client.metadata.identity_providers())
        wanted = self.settings.saml_idp_entity_id
        if wanted:
            if wanted not in idps:
                raise SamlError("The campus sign-in service is not in its metadata; tell your campus IT.")
            return wanted
        if len(idps) != 1:
            raise SamlError(
                "The campus sign-in metadata names more than one identity provider; tell your campus IT "
                "to set CAMPUS_MCP_SAML_IDP_ENTITY_ID."
            )
        return str(idps[0])

    async def start(self) -> tuple[str, dict[str, str]]:
        """The IdP's sign-in URL (Redirect binding), and what the ACS needs (kept in the session)."""
        client = await self._client()
        idp = self._idp_entity_id(client)

        def authn_request() -> tuple[str, str]:
            request_id, info = client.prepare_for_authenticate(entityid=idp, binding=BINDING_HTTP_REDIRECT)
            return str(request_id), str(dict(info["headers"])["Location"])

        request_id, location = await anyio.to_thread.run_sync(authn_request)
        return location, {"request_id": request_id, "idp": idp}

    async def finish(
        self, pending: dict[str, Any], saml_response: str | None, sessions: async_sessionmaker[AsyncSession]
    ) -> SamlIdentity:
        """The checked assertion of the posted Response; SamlError in the student's words otherwise."""
        request_id = pending.get("request_id")
        if not saml_response or not isinstance(request_id, str):
            raise SamlError(
                "This sign-in answer does not match a sign-in started here, or it was used already. "
                "Start again from the app."
            )
        client = await self._client()

        def parse() -> AuthnResponse | None:
            # pysaml2 checks the bearer confirmation's Recipient only when it is given conv_info: then
            # against the ACS URLs, and against conv_info["entity_id"] if there is one. There is none
            # here, so only this SP's ACS URL passes (SAML profiles 4.1.4.2: the Recipient is the
            # location the assertion is presented to, not the entity id).
            return client.parse_authn_request_response(
                saml_response,
                BINDING_HTTP_POST,
                outstanding={request_id: "campus-mcp"},
                conv_info={"recipient": self.settings.base_url + ACS_PATH},
            )

        try:
            response = await anyio.to_thread.run_sync(parse)
        except Exception as exc:  # pysaml2 signals most refusals with plain exceptions; each is worded
            raise SamlError(_words(exc)) from exc
        if response is None or response.assertion is None or response.name_id is None:
            raise SamlError(_words(ValueError("no assertion")))
        weak = weak_algorithm(response)
        if weak is not None:
            raise SamlError(
                "The sign-in answer is signed with an algorithm this service does not accept (older than "
                f"SHA-256: {weak.rsplit('#', 1)[-1]}), so it was refused. Tell your campus IT: the identity "
                "provider should sign with SHA-256, as this service's metadata asks."
            )
        issuer = str(response.issuer())
        if issuer != pending.get("idp"):
            raise SamlError(
                "The sign-in answer came from another identity provider than the one this campus uses, so "
                f"it was refused. {START_AGAIN}"
            )
        expires = datetime.now(UTC) + timedelta(hours=1)
        if response.not_on_or_after:
            expires = datetime.fromtimestamp(int(response.not_on_or_after), UTC)
        # A persistent NameID is the person's lasting id at this SP; a transient one changes at every
        # sign-in, so the student id attribute stands for the person then (``student``).
        persistent = response.name_id.format == NAMEID_FORMAT_PERSISTENT
        attributes, friendly_names = attributes_of(response)
        identity = SamlIdentity(
            issuer=issuer,
            subject=str(response.name_id.text) if persistent else "",
            attributes=attributes,
            assertion_id=str(response.assertion.id),
            expires=expires,
            friendly_names=friendly_names,
        )
        await _first_use(sessions, identity)
        return identity

    def _values(self, identity: SamlIdentity, name: str) -> list[str]:
        return identity.attributes.get(name.lower(), [])

    def admitted(self, identity: SamlIdentity) -> None:
        name = self.settings.saml_admit_attribute
        if not name:
            return
        admitted = {value.lower() for value in self.settings.saml_admit_values}
        # eduPersonScopedAffiliation carries a scope (student@campus.edu): the part before @ counts too.
        values = [value.strip().lower() for value in self._values(identity, name)]
        if not any(value in admitted or value.split("@")[0] in admitted for value in values):
            raise SamlRefused(
                "Your campus account signed in, but this service is for students, and your account "
                f"is not listed as one ({identity.friendly(name)} does not include "
                f"{' or '.join(sorted(self.settings.saml_admit_values))}). If you are a student, ask "
                f"{self.settings.oidc_help_contact} to check your account's affiliation."
            )

    async def student(self, session: AsyncSession, identity: SamlIdentity) -> Student:
        """The admitted person's student record (created or attached now); SamlRefused otherwise."""
        self.admitted(identity)
        name = self.settings.saml_student_id_attribute
        try:
            the_id = checked_campus_id(
                self._values(identity, name), source=f"the {identity.friendly(name)} attribute", settings=self.settings
            )
        except CampusIdRefused as exc:
            raise SamlRefused(str(exc)) from exc
        subject = identity.subject or "student-id:" + campus_id_of(the_id)
        names = self._values(identity, self.settings.saml_display_name_attribute)
        mails = self._values(identity, "mail")
        try:
            return await oidc_student(
                session,
                identity.issuer,
                subject,
                campus_id=the_id,
                display_name=names[0] if names else the_id,
                email=(mails[0].strip() or None) if mails else None,
            )
        except IdentityRefused as exc:
            raise SamlRefused(f"{exc} Ask {self.settings.oidc_help_contact}.") from exc


async def _first_use(sessions: async_sessionmaker[AsyncSession], identity: SamlIdentity) -> None:
    """Write the assertion's ID down; an ID written down already is a replay.

    The one-time values of confirmations (``answered_request_states``) hold these too: the row is
    dated at the assertion's expiry, so it is kept while the assertion could still be accepted
    (that table's clean-up drops rows some minutes past their date)."""
    digest = hashlib.sha256(f"{identity.issuer}\0{identity.assertion_id}".encode()).hexdigest()
    nonce = SEEN_PREFIX + digest[:59]
    async with sessions() as session:
        # Assertions expired an hour ago are refused by their times already: their rows can go.
        await session.execute(
            delete(AnsweredRequestState).where(
                AnsweredRequestState.nonce.startswith(SEEN_PREFIX),
                AnsweredRequestState.answered_at < utcnow() - timedelta(hours=1),
            )
        )
        session.add(AnsweredRequestState(nonce=nonce, answered_at=max(identity.expires, utcnow())))
        try:
            await session.commit()
        except IntegrityError as exc:
            await session.rollback()
            raise SamlError(
                "This sign-in answer was used already, so it was refused. Start again from the app."
            ) from exc
