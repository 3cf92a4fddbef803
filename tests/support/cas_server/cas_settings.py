"""Django settings of the tests' CAS server: django-cas-server (a CAS 1/2/3 server) on loopback.

The accounts come from a JSON file (``CAS_TEST_ACCOUNTS``): login -> attributes; any password
signs in. Nothing here reaches the network (no version check, no CDN for the pages' styles is
needed by the tests, which read the HTML).
"""

from __future__ import annotations

import os

SECRET_KEY = "campus-mcp-tests-cas-server"  # a throwaway server on loopback, for tests only
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "cas_server",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "cas_urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["CAS_TEST_DB"]}}
USE_TZ = True
STATIC_URL = "/static/"
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
SESSION_COOKIE_NAME = "cas_sessionid"  # not the campus's cookie name on the same host
CAS_AUTH_CLASS = "cas_accounts.CampusAccounts"
CAS_NEW_VERSION_HTML_WARNING = False
CAS_NEW_VERSION_EMAIL_WARNING = False
CAS_SHOW_POWERED = False
CAS_SHOW_SERVICE_MESSAGES = False
