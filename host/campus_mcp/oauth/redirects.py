"""The redirect URI rule (seed 000): ``https``, or ``http`` on ``localhost`` / ``127.0.0.1`` only.

A code travels to the redirect URI in the browser's address bar; plain http anywhere but the
student's own machine would let the network read it. Fragments are refused (RFC 6749 3.1.2).
The characters are limited too: a redirect URI's origin goes into the consent page's
Content-Security-Policy header, where a ``;`` starts a directive of the caller's choosing.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

LOCAL_HOSTS = ("localhost", "127.0.0.1")
# Whitespace, control characters, quotes, ``;`` and what RFC 3986 never allows unencoded
# (``<>\^`{|}`` and anything not ASCII): none is needed in a URL, each breaks a header or a page.
_UNSAFE_CHARACTER = re.compile(r"[^\x21-\x7e]|[\"';<>\\^`{|}]")
# A host name (letters, digits, dots, hyphens) or an IP literal in brackets; nothing else may
# reach the header with the origin.
_SAFE_HOST = re.compile(r"[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]")


def redirect_uri_problem(uri: str) -> str | None:
    """Why ``uri`` cannot be a redirect URI, or None when it can."""
    unsafe = _UNSAFE_CHARACTER.search(uri)
    if unsafe:
        character = unsafe.group()
        shown = f"U+{ord(character):04X}" + (f" ({character})" if character.isprintable() and character != " " else "")
        return (
            f"the redirect URI {uri!r} contains the character {shown}, which a redirect URI may not contain "
            "(no spaces, quotes, semicolons or control characters; percent-encode anything else)"
        )
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return f"the redirect URI {uri!r} is not a valid URL"
    if parts.fragment or "#" in uri:
        return f"the redirect URI {uri!r} has a fragment; redirect URIs cannot have one"
    if not parts.hostname:
        return f"the redirect URI {uri!r} has no host"
    host = parts.netloc.rsplit(":", 1)[0] if parts.port is not None else parts.netloc
    if "@" in parts.netloc or not _SAFE_HOST.fullmatch(host):
        return f"the redirect URI {uri!r} needs a plain host name or IP address (no user name, no other characters)"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and parts.hostname in LOCAL_HOSTS:
        return None
    return f"the redirect URI {uri!r} must use https (http is allowed on localhost and 127.0.0.1 only)"
