"""The sign-in controllers a deployment serves: the local form always, and OpenID Connect, SAML and
CAS when configured. Kept apart from :mod:`.login`, which the SAML and CAS controllers build on.
"""

from __future__ import annotations

from litestar import Controller

from campus_mcp.base.settings import Settings
from campus_mcp.oauth.cas import cas_configured
from campus_mcp.oauth.cas_login import CasLoginController
from campus_mcp.oauth.login import LoginController, OidcLoginController, oidc_configured, saml_configured


def login_controllers(settings: Settings) -> list[type[Controller]]:
    """The sign-in controllers: the local form always, OpenID Connect, SAML and CAS when configured."""
    controllers: list[type[Controller]] = [LoginController]
    if oidc_configured(settings):
        controllers.append(OidcLoginController)
    if saml_configured(settings):
        from campus_mcp.oauth.saml_login import SamlLoginController  # SAML's libraries: only when used

        controllers.append(SamlLoginController)
    if cas_configured(settings):
        controllers.append(CasLoginController)
    return controllers
