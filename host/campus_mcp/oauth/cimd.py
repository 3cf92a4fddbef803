"""Client ID metadata documents: a ``client_id`` that is an HTTPS URL names its own metadata.

The server fetches that URL on the first sign-in, so anybody can make it fetch a URL of their
choice: the outbound guard (:mod:`campus_mcp.base.outbound`: HTTPS on 443, public addresses only,
the checked address connected to, no redirects) is what stops that being used to reach the
campus's internal network (SSRF). Each rule is held by a test in ``tests/oauth/test_oauth_cimd.py``:

- the guard's rules;
- 5 seconds for the whole fetch, at most 10 KB of document;
- the document's own ``client_id`` must be the URL it was fetched from;
- its redirect URIs and its ``client_name`` follow the same rules as registration.

A fetched document is kept for one hour.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx

from campus_mcp.base.outbound import FETCH_SECONDS, FetchRefused, guarded_get
from campus_mcp.base.outside_documents import DocumentLimit, DocumentTooLarge
from campus_mcp.base.settings import Settings
from campus_mcp.oauth.redirects import redirect_uri_problem
from campus_mcp.oauth.registration import text_problem
from campus_mcp.oauth.store import ClientRecord

MAX_BYTES = 10 * 1024
CACHE_SECONDS = 3600
DOCUMENT = "the client ID metadata document"
# An app's own document of a few fields: the app's developer shrinks it, no setting raises it.
DOCUMENT_LIMIT = DocumentLimit(DOCUMENT, MAX_BYTES)


class MetadataDocumentError(FetchRefused):
    """Why a metadata document was refused; the text is shown to the student and the client."""


def is_metadata_url(client_id: str) -> bool:
    return client_id.startswith("https://")


async def fetch_metadata_document(
    url: str, settings: Settings, *, seconds: float = FETCH_SECONDS, known_scopes: Sequence[str] = ()
) -> ClientRecord:
    """Fetch, check and parse the document at ``url``. Raises MetadataDocumentError."""
    try:
        with anyio.fail_after(seconds):
            raw = await guarded_get(url, settings, limit=DOCUMENT_LIMIT)
    except FetchRefused as exc:  # the guard's own refusal, in this document's words already
        raise MetadataDocumentError(str(exc)) from exc
    except TimeoutError as exc:
        raise MetadataDocumentError("the client ID metadata document did not arrive within 5 seconds") from exc
    except DocumentTooLarge as exc:
        raise MetadataDocumentError(str(exc)) from exc
    except httpx.HTTPError as exc:
        raise MetadataDocumentError(
            f"the client ID metadata document could not be fetched ({type(exc).__name__})"
        ) from exc
    try:
        document: Any = json.loads(raw)
    except ValueError as exc:
        raise MetadataDocumentError("the client ID metadata document is not JSON") from exc
    if not isinstance(document, dict):
        raise MetadataDocumentError("the client ID metadata document is not a JSON object")
    if document.get("client_id") != url:
        raise MetadataDocumentError("the client ID metadata document names a different client_id than its URL")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise MetadataDocumentError("clients here are public: token_endpoint_auth_method must be 'none'")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise MetadataDocumentError("the client ID metadata document has no redirect_uris")
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem:
            raise MetadataDocumentError(problem)
    name = document.get("client_name")
    scope = document.get("scope")
    client_uri = document.get("client_uri")
    for field, value in (("client_name", name), ("client_uri", client_uri), ("scope", scope)):
        if (refused := text_problem(field, value)) is not None:
            raise MetadataDocumentError(f"the client ID metadata document's {refused}")
    return ClientRecord(
        client_id=url,
        kind="metadata_document",
        client_name=name.strip()[:300] if isinstance(name, str) and name.strip() else urlsplit(url).hostname or url,
        redirect_uris=tuple(uris),
        scope=" ".join(s for s in scope.split() if s in known_scopes) if isinstance(scope, str) else "",
        client_uri=client_uri if isinstance(client_uri, str) else None,
    )
