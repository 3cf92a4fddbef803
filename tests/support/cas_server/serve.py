"""Start the tests' CAS server: ``python serve.py PORT FOLDER`` (FOLDER holds accounts.json).

Creates its database, one service pattern that admits the campuses on loopback and releases every
attribute, and serves Django's ASGI app with uvicorn on 127.0.0.1:PORT.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    port, folder = int(sys.argv[1]), Path(sys.argv[2])
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    os.environ["DJANGO_SETTINGS_MODULE"] = "cas_settings"
    os.environ["CAS_TEST_DB"] = str(folder / "cas.sqlite3")
    os.environ["CAS_TEST_ACCOUNTS"] = str(folder / "accounts.json")

    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from cas_server.models import ReplaceAttributName, ServicePattern

    pattern, _ = ServicePattern.objects.get_or_create(
        name="campus-mcp on loopback", pattern=r"^http://127\.0\.0\.1:\d+/login/cas/callback(\?.*)?$", pos=100
    )
    ReplaceAttributName.objects.get_or_create(name="*", service_pattern=pattern)

    import uvicorn
    from django.core.asgi import get_asgi_application

    uvicorn.run(get_asgi_application(), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
