"""SAML's libraries load only for a campus that signs in with SAML (issue 36, point 7).

pysaml2 and xmlschema cost every server process 22 MB and seconds of its start
(bench/worker_memory.py), and a campus without CAMPUS_MCP_SAML_IDP_METADATA never uses them: the
app it builds must not import them. A fresh interpreter builds the app of every installed family
on a SQLite file of its own, with none of this test's CAMPUS_MCP_ settings, and says which
modules it loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BUILD = """
import json, sys
from campus_mcp import Settings
from campus_mcp.web.app import create_app
from campus_mcp.assembly.registry import load_registry
app = create_app(registry=load_registry(Settings()), run_scheduler=False)
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in ("saml2", "xmlschema"))))
"""


def test_a_campus_without_saml_never_imports_its_libraries(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAMPUS_MCP_")}
    env |= {
        "CAMPUS_MCP_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'campus.db'}",
        "CAMPUS_MCP_CONFIG": str(tmp_path / "absent.toml"),
        "CAMPUS_MCP_VAR_DIR": str(tmp_path / "var"),
    }
    done = subprocess.run([sys.executable, "-c", BUILD], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
