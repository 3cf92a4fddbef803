"""Sign-in with the campus CAS server (Apereo CAS and others), CAS protocol 3.0.

The browser goes to the server's ``/login`` with our callback as ``service``; the server sends it
back with a service ticket, which this server validates at ``/p3/serviceValidate`` (server to
server) and reads the user and the released attributes from. The service URL carries a random
value kept in the browser's session, so a ticket obtained for someone else's sign-in (login CSRF)
or a callback replayed after use finds nothing pending; the CAS server itself takes a ticket
once and only for the service it was issued for. Admission and the student record work as for
SAML (``saml``): the CAS server's URL and the user stand for the issuer and subject.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any
from urllib.parse import urlencode
from xml.etree.ElementTree import Element

import httpx
from defusedxml import ElementTree
from sqlalchemy.ext.asyncio import AsyncSession

from campus_mcp.accounts import IdentityRefused, Student, oidc_student
from campus_mcp.oauth.campus_id import CampusIdRefused, checked_campus_id
from campus_mcp.oauth.oidc import TOO_LARGE, OidcError, OidcRefused, no_answer_words
from campus_mcp.outside_documents import DocumentTooLarge, read_document, sign_in_limit
from campus_mcp.settings import Settings

CALLBACK_PATH = "/login/cas/callback"
NS = "{http://www.yale.edu/tp/cas}"
# Seconds the CAS server may take to validate a ticket.
VALIDATE_SECONDS = 10.0
START_AGAIN = "Start again from the app; if it happens again, tell your campus IT."
NOT_PENDING = (
    "This sign-in answer does not match a sign-in started here, or it was used already. Start again from the app."
)


log = logging.getLogger(__name__)


class CasError(OidcError):
    """Why the CAS sign-in failed, in words for the student."""


class CasUnreachable(CasError):
    """The CAS server did not validate the ticket (refused, cut, timed out, failed): 502, as for
    OpenID Connect's token endpoint."""

    status = 502


class CasRefused(OidcRefused):
    """The CAS server signed the person in, but this campus does not admit them."""


def cas_configured(settings: Settings) -> bool:
    return settings.cas_sign_in


def _raw(element: Element | None) -> str:
    return (element.text or "") if element is not None else ""


class CasClient:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.server = settings.cas_server_url.rstrip("/")

    def service(self, nonce: str) -> str:
        return f"{self.settings.base_url}{CALLBACK_PATH}?{urlencode({'s': nonce})}"

    def start(self) -> tuple[str, dict[str, str]]:
        """The CAS login URL, and what the callback needs (kept in the session)."""
        nonce = secrets.token_urlsafe(24)
        return f"{self.server}/login?{urlencode({'service': self.service(nonce)})}", {"nonce": nonce}

    async def finish(
        self, pending: dict[str, Any], *, ticket: str | None, nonce: str | None
    ) -> tuple[str, dict[str, list[str]]]:
        """Validate the ticket: (user, attributes); CasError in the student's words otherwise."""
        expected = pending.get("nonce")
        if not ticket or not nonce or not isinstance(expected, str) or not secrets.compare_digest(nonce, expected):
            raise CasError(NOT_PENDING)
        try:
            async with httpx.AsyncClient(timeout=VALIDATE_SECONDS) as http:
                response = await read_document(
                    http,
                    "GET",
                    self.server + "/p3/serviceValidate",
                    params={"service": self.service(expected), "ticket": ticket},
                    limit=sign_in_limit(self.settings, "the CAS server's validation answer"),
                )
                response.raise_for_status()
                root = ElementTree.fromstring(response.content)
        except DocumentTooLarge as exc:
            log.warning("%s", exc)
            raise CasError(TOO_LARGE) from exc
        except httpx.HTTPError as exc:
            raise CasUnreachable(no_answer_words(exc)) from exc
        except ElementTree.ParseError as exc:
            raise CasError(f"The campus sign-in service sent an answer that cannot be read. {START_AGAIN}") from exc
        failure = root.find(f"{NS}authenticationFailure")
        if failure is not None:
            code = failure.get("code", "")
            if code in ("INVALID_TICKET", "INVALID_SERVICE"):
                raise CasError(
                    "The campus sign-in service did not confirm this sign-in (the ticket was used already, "
                    f"expired, or was made for another application). {START_AGAIN}"
                )
            raise CasError(
                f"The campus sign-in service did not confirm this sign-in ({code or 'no reason'}). {START_AGAIN}"
            )
        success = root.find(f"{NS}authenticationSuccess")
        # As sent, not trimmed: the user name may be the student id, which is taken whole (``campus_id``).
        user = _raw(success.find(f"{NS}user")) if success is not None else ""
        if success is None or not user.strip():
            raise CasError(f"The campus sign-in service sent an answer that cannot be read. {START_AGAIN}")
        attributes: dict[str, list[str]] = {}
        released = success.find(f"{NS}attributes")
        for element in list(released) if released is not None else []:
            name = element.tag.removeprefix(NS).lower()
            attributes.setdefault(name, []).append(_raw(element))
        return user, attributes

    def admitted(self, attributes: dict[str, list[str]]) -> None:
        name = self.settings.cas_admit_attribute
        if not name:
            return
        admitted = {value.lower() for value in self.settings.cas_admit_values}
        values = [value.strip().lower() for value in attributes.get(name.lower(), [])]
        if not any(value in admitted or value.split("@")[0] in admitted for value in values):
            raise CasRefused(
                "Your campus account signed in, but this service is for students, and your account "
                f"is not listed as one ({name} does not include "
                f"{' or '.join(sorted(self.settings.cas_admit_values))}). If you are a student, ask "
                f"{self.settings.oidc_help_contact} to check your account's affiliation."
            )

    async def student(self, session: AsyncSession, user: str, attributes: dict[str, list[str]]) -> Student:
        """The admitted person's student record (created or attached now); CasRefused otherwise."""
        self.admitted(attributes)
        name = self.settings.cas_student_id_attribute
        try:
            the_id = checked_campus_id(
                attributes.get(name.lower(), []) if name else [user],
                source=f"the {name} attribute" if name else "the CAS user name",
                settings=self.settings,
            )
        except CampusIdRefused as exc:
            raise CasRefused(str(exc)) from exc
        names = attributes.get(self.settings.cas_display_name_attribute.lower(), [])
        mails = attributes.get("mail", []) or attributes.get("email", [])
        try:
            return await oidc_student(
                session,
                self.server,
                user,
                campus_id=the_id,
                display_name=names[0] if names else the_id,
                email=(mails[0].strip() or None) if mails else None,
            )
        except IdentityRefused as exc:
            raise CasRefused(f"{exc} Ask {self.settings.oidc_help_contact}.") from exc
