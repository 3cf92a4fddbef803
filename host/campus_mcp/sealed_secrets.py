"""A secret a plugin must keep at rest (an upstream account's OAuth tokens), sealed with the deployment's key.

A family that connects a student to another service (their LMS account) holds that service's
tokens, which act as the student there: a copy of the database must not be a copy of the tokens.
:func:`seal_secret` encrypts one with AES-256-GCM under a key derived from the deployment's seal key
(``CAMPUS_MCP_SECRET_KEY``) for one ``purpose`` only, so a sealed token is never a session cookie,
a ``requestState`` or another family's secret. ``bound_to`` (the student's id) is authenticated with
it: a sealed token copied into another student's row does not open.

Changing ``CAMPUS_MCP_SECRET_KEY`` makes every sealed secret unreadable (:class:`SecretUnreadable`):
the family then asks the student to connect again, as a revoked token would.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from campus_mcp.settings import Settings

_VERSION = "v1"
_KEY_LABEL = b"campus-mcp/sealed-secret/v1\0"
_NONCE_BYTES = 12


class SecretUnreadable(Exception):
    """A sealed secret that does not open: another key (the deployment key changed), another
    purpose or owner, or a damaged value. The message never holds the secret."""


def _key(settings: Settings, purpose: str) -> bytes:
    if not purpose:
        raise ValueError("seal_secret needs a purpose, such as 'canvas-tokens'")
    return hmac.new(settings.seal_key(), _KEY_LABEL + purpose.encode(), hashlib.sha256).digest()


def _associated(purpose: str, bound_to: str) -> bytes:
    return f"{purpose}\0{bound_to}".encode()


def seal_secret(settings: Settings, secret: str, *, purpose: str, bound_to: str = "") -> str:
    """``secret`` encrypted for keeping in a table: ``v1.`` and URL-safe base64 text, a new nonce each time."""
    nonce = os.urandom(_NONCE_BYTES)
    sealed = AESGCM(_key(settings, purpose)).encrypt(nonce, secret.encode(), _associated(purpose, bound_to))
    return f"{_VERSION}.{base64.urlsafe_b64encode(nonce + sealed).decode().rstrip('=')}"


def open_secret(settings: Settings, sealed: str, *, purpose: str, bound_to: str = "") -> str:
    """The secret :func:`seal_secret` sealed with the same purpose and owner; SecretUnreadable otherwise."""
    version, _, body = sealed.partition(".")
    if version != _VERSION or not body:
        raise SecretUnreadable(f"not a sealed secret of this version ({_VERSION})")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        nonce, ciphertext = raw[:_NONCE_BYTES], raw[_NONCE_BYTES:]
        opened = AESGCM(_key(settings, purpose)).decrypt(nonce, ciphertext, _associated(purpose, bound_to))
    except (InvalidTag, ValueError) as exc:
        raise SecretUnreadable(
            "the sealed secret does not open: the deployment key changed, or it was sealed for another purpose or owner"
        ) from exc
    return opened.decode()
