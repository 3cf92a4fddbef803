"""The campus CAS server of the CAS tests: django-cas-server (a CAS 1/2/3 server on Django) in a
process of its own on loopback (tests/support/cas_server/), one for the module.

Its accounts (login -> released attributes) are written to a JSON file it reads at each sign-in;
its one service pattern admits any campus served on loopback and releases every attribute.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from campus_mcp.testing.oauth import free_port

SERVE = Path(__file__).resolve().parent / "cas_server" / "serve.py"


@contextlib.contextmanager
def running_cas_server(folder: Path, accounts: dict[str, dict[str, Any]]) -> Iterator[str]:
    """The CAS server's base URL (``http://127.0.0.1:PORT/cas``) while it runs."""
    (folder / "accounts.json").write_text(json.dumps(accounts))
    port = free_port()
    log = (folder / "cas.log").open("w")
    process = subprocess.Popen([sys.executable, str(SERVE), str(port), str(folder)], stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}/cas"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/login", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the CAS server did not start: " + (folder / "cas.log").read_text()[-2000:])
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()
