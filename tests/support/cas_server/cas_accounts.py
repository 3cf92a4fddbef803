"""The CAS server's accounts: the JSON file ``CAS_TEST_ACCOUNTS`` maps a login to its attributes."""

from __future__ import annotations

import json
import os
from typing import Any

from cas_server.auth import AuthUser


def _accounts() -> dict[str, dict[str, Any]]:
    with open(os.environ["CAS_TEST_ACCOUNTS"], encoding="utf-8") as file:
        accounts: dict[str, dict[str, Any]] = json.load(file)
    return accounts


class CampusAccounts(AuthUser):  # type: ignore[misc]
    def test_password(self, password: str) -> bool:
        return self.username in _accounts() and bool(password)

    def attributs(self) -> dict[str, Any]:
        return _accounts().get(self.username, {})
