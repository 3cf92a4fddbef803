"""Telling the app a refused sign-in is over: its redirect URI with ``error=access_denied``.

An MCP app that sent a student to sign in waits at its redirect URI for the answer. When the
campus's identity provider signs the person in but the campus does not admit them here, the page
says why and whom to ask; the app must hear it too, or it waits for its own timeout. RFC 6749
4.1.2.1: the answer is the app's redirect URI with ``error=access_denied`` and the request's
``state`` (and ``iss``, RFC 9207), the same redirect the consent page's Deny sends.

The refusal page offers it as a button (``Return to <app>``) rather than redirecting by itself:
the page is the only place that tells the student why they were refused and whom to ask (the app
only learns ``access_denied``), so it stays until they have read it; a timed redirect would take the
explanation away mid-sentence (WCAG 2.2.1). One click, and the app stops waiting and says so.

The URL comes only from the authorization request the sign-in was started for (the ``next`` kept
in the session), validated again as the authorization endpoint validates it: a registered client
and one of its registered redirect URIs. Anything else gets no button.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from authlib.oauth2.rfc6749 import OAuth2Error

from campus_mcp.oauth.asking_app import AskingApp
from campus_mcp.oauth.server import AUTHORIZE_PATH, CampusRequest, OAuthService


@dataclass(frozen=True)
class AppReturn:
    """Where the button sends the browser, and the app's name for its label."""

    url: str
    app: str


async def access_denied_return(oauth: OAuthService, next_url: str) -> AppReturn | None:
    """The app's redirect URI with ``error=access_denied``, its ``state`` and ``iss``, when
    ``next_url`` is a valid authorization request (None otherwise: the sign-in was not an app's)."""
    parts = urlsplit(next_url)
    if parts.scheme or parts.netloc or parts.path != AUTHORIZE_PATH:
        return None
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    request = CampusRequest("GET", oauth.settings.base_url + AUTHORIZE_PATH, {}, query=pairs)
    try:
        grant = await oauth.consent_grant(request)
    except OAuth2Error:
        return None  # not a request this server would answer: nothing to tell anyone
    reply = await oauth.authorize(request, grant, None)  # no student: access_denied, as Deny sends
    if not reply.location:
        return None
    return AppReturn(url=reply.location, app=AskingApp.of(grant.client).label())
