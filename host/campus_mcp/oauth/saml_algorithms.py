"""The signature and digest algorithms this SAML SP advertises and accepts: SHA-256 or better.

pysaml2 advertises, in the SP metadata (``alg:DigestMethod``, ``alg:SigningMethod``), every
algorithm the installed xmlsec1 knows, md5 and sha1 among them, and verifies a signature in any of
them: an IdP reading the metadata may pick sha1, and an assertion signed with rsa-sha1 (a hash with
practical collisions) was accepted. Neither has a setting. The metadata is filtered here to the
algorithms below, and a Response or assertion signed (or digested) with any other one is refused
after pysaml2 has checked it (``weak_algorithm``), as is signed IdP metadata
(``weak_algorithm_in``).
"""

from __future__ import annotations

from typing import Any

from defusedxml import ElementTree
from saml2 import md
from saml2.xmldsig import (
    DIGEST_SHA256,
    DIGEST_SHA384,
    DIGEST_SHA512,
    SIG_ECDSA_SHA256,
    SIG_ECDSA_SHA384,
    SIG_ECDSA_SHA512,
    SIG_RSA_SHA256,
    SIG_RSA_SHA384,
    SIG_RSA_SHA512,
)

SIGNING = (SIG_RSA_SHA256, SIG_RSA_SHA384, SIG_RSA_SHA512, SIG_ECDSA_SHA256, SIG_ECDSA_SHA384, SIG_ECDSA_SHA512)
DIGESTS = (DIGEST_SHA256, DIGEST_SHA384, DIGEST_SHA512)
_ADVERTISED = {"SigningMethod": set(SIGNING), "DigestMethod": set(DIGESTS)}
DSIG = "http://www.w3.org/2000/09/xmldsig#"


def keep_strong_algorithms(entity: md.EntityDescriptor) -> None:
    """Drop the algorithms weaker than SHA-256 from the metadata's extensions (in place)."""
    extensions = entity.extensions
    if extensions is None:
        return
    extensions.extension_elements = [
        element
        for element in extensions.extension_elements
        if element.tag not in _ADVERTISED or element.attributes.get("Algorithm") in _ADVERTISED[element.tag]
    ]


def weak_algorithm_in(xml: str) -> str | None:
    """The first XML-signature algorithm in a document (signed metadata) weaker than SHA-256, or
    None. Only the xmldsig elements count: an IdP's metadata also lists the algorithms it supports
    (``alg:DigestMethod``), which is no signature."""
    try:
        root = ElementTree.fromstring(xml.encode())
    except ElementTree.ParseError:
        return None  # not readable: the signature check has refused it already
    for element in root.iter(f"{{{DSIG}}}SignatureMethod"):
        if element.get("Algorithm") not in SIGNING:
            return str(element.get("Algorithm"))
    for element in root.iter(f"{{{DSIG}}}DigestMethod"):
        if element.get("Algorithm") not in DIGESTS:
            return str(element.get("Algorithm"))
    return None


def _signed_parts(response: Any) -> list[Any]:
    """The Response and every assertion in it (the decrypted one included) that may carry a signature."""
    outer = getattr(response, "response", None)
    parts = [outer, *(getattr(outer, "assertion", None) or []), getattr(response, "assertion", None)]
    return [part for part in parts if part is not None]


def weak_algorithm(response: Any) -> str | None:
    """The first signature or digest algorithm in a checked AuthnResponse that is weaker than
    SHA-256 (its URI), or None when every signature in it uses the algorithms above."""
    for part in _signed_parts(response):
        signature = getattr(part, "signature", None)
        info = getattr(signature, "signed_info", None)
        if info is None:
            continue
        method = getattr(info.signature_method, "algorithm", None)
        if method not in SIGNING:
            return str(method)
        for reference in info.reference or []:
            digest = getattr(reference.digest_method, "algorithm", None)
            if digest not in DIGESTS:
                return str(digest)
    return None
