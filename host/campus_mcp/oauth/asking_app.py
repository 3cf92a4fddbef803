"""Who is asking: the app an OAuth sign-in is for, as the login and consent pages name it.

A client's ``client_name`` is whatever the app wrote when it registered (RFC 7591): nothing checks
it, so a page must not present it as a fact. A client whose ID is the URL of a client ID metadata
document (``campus_mcp.oauth.cimd``) was fetched over HTTPS from that URL's host, which is
therefore the one thing about it that is verified: the pages name that domain beside the name.

The authorization endpoint sends a student who is not signed in to the login form; it keeps the
app's name for that one ``next`` in the session, so the login page can say which app asks without
a database read (and without a name taken from the URL, which anyone could write).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import urlsplit

from litestar import Request

from campus_mcp.oauth.store import ClientRecord

_SESSION_KEY = "asking-app"


@dataclass(frozen=True)
class AskingApp:
    name: str
    domain: str = ""  # the verified host of a metadata document's URL; empty for a registered client

    @classmethod
    def of(cls, client: ClientRecord) -> AskingApp:
        domain = (urlsplit(client.client_id).hostname or "") if client.kind == "metadata_document" else ""
        return cls(name=client.client_name, domain=domain)

    def label(self) -> str:
        """The app's name, with its verified domain where it has one (plain text)."""
        return f"{self.name} ({self.domain})" if self.domain else self.name

    def note(self, product: str) -> str:
        """The consent page's sentence on what is known of the name (HTML)."""
        if self.domain:
            return (
                f'<p class="muted" id="app-identity">{product} fetched this app\'s description from '
                f"<strong>{escape(self.domain)}</strong>, so it comes from that site; the name "
                f"{escape(self.name)} is the one that site gives.</p>"
            )
        return (
            f'<p class="muted" id="app-identity"><span class="writes">unverified name</span> '
            f"The app gave itself the name {escape(self.name)} when it registered; {product} has not "
            "checked it. Allow only an app you are connecting yourself.</p>"
        )


def remember_for_login(request: Request[Any, Any, Any], next_url: str, app: AskingApp) -> None:
    """Keep the app asking for ``next_url`` (an authorization URL) for the login page it goes to."""
    session = request.scope.get("session")
    data = dict(session) if isinstance(session, dict) else {}
    data[_SESSION_KEY] = {"next": next_url, "name": app.name, "domain": app.domain}
    request.set_session(data)


def asking_for(request: Request[Any, Any, Any], next_url: str) -> AskingApp | None:
    """The app the login for ``next_url`` is for, if an authorization request sent the student here."""
    session = request.scope.get("session")
    kept = session.get(_SESSION_KEY) if isinstance(session, dict) else None
    if not isinstance(kept, dict) or kept.get("next") != next_url:
        return None
    name, domain = kept.get("name"), kept.get("domain")
    if not isinstance(name, str) or not isinstance(domain, str):
        return None
    return AskingApp(name=name, domain=domain)
