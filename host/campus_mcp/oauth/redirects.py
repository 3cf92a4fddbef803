"""The redirect URI rule (seed 000): ``https``, or ``http`` on ``localhost`` / ``127.0.0.1`` only.

A code travels to the redirect URI in the browser's address bar; plain http anywhere but the
student's own machine would let the network read it. Fragments are refused (RFC 6749 3.1.2).
"""

from __future__ import annotations

from urllib.parse import urlsplit

LOCAL_HOSTS = ("localhost", "127.0.0.1")


def redirect_uri_problem(uri: str) -> str | None:
    """Why ``uri`` cannot be a redirect URI, or None when it can."""
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return f"the redirect URI {uri!r} is not a valid URL"
    if parts.fragment or "#" in uri:
        return f"the redirect URI {uri!r} has a fragment; redirect URIs cannot have one"
    if not parts.hostname:
        return f"the redirect URI {uri!r} has no host"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and parts.hostname in LOCAL_HOSTS:
        return None
    return f"the redirect URI {uri!r} must use https (http is allowed on localhost and 127.0.0.1 only)"
