"""Callscope settings: one file, driven by the environment.

Every knob an operator may turn is read here through the small env helpers
below, which fail loudly on a bad value instead of guessing.
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def envint(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}") from None


def envsecret(name: str, default: str | None = None) -> str | None:
    """A secret from NAME, or from the file named by NAME_FILE (container secrets)."""
    if path := os.environ.get(f"{name}_FILE"):
        return Path(path).read_text().strip()
    return os.environ.get(name, default)


DEBUG = envbool("CALLSCOPE_DEBUG", False)

SECRET_KEY = envsecret("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG and os.environ.get("CALLSCOPE_ALLOW_DEV_SECRET") != "1":
        raise ImproperlyConfigured(
            "Set SECRET_KEY (or SECRET_KEY_FILE). `make run` and `make test` set a development one."
        )
    SECRET_KEY = "callscope-development-only-secret-not-for-production"

ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]
CSRF_TRUSTED_ORIGINS = [
    o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o
]

INSTALLED_APPS = [
    "daphne",  # first, so that runserver serves ASGI (websockets) too
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "calls",
    "triage",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "dashboard.urls"
ASGI_APPLICATION = "dashboard.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "triage.context.unread",
            ],
        },
    },
]

# SQLite by default (nothing to install); DATABASE_URL for PostgreSQL.
# Under ASGI Django runs each request's sync code in a new thread, so
# persistent connections (CONN_MAX_AGE > 0) pile up one per request until
# PostgreSQL refuses more clients. Connections come from a pool instead.
DATABASES = {
    "default": dj_database_url.config(default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")
}
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": envint("DATABASE_POOL_MIN", 2),
        "max_size": envint("DATABASE_POOL_MAX", 20),
        "timeout": 10,
    }
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["OPTIONS"] = {
        # IMMEDIATE takes the write lock when a transaction opens, so two
        # ingests queue on busy_timeout instead of deadlocking on a
        # read-to-write upgrade. WAL (pages read while agents write) is a
        # property of the file, set once per process in calls.apps.
        "init_command": "PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    # The live-server tests run daphne in another process: the test DB must be a file.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "test_db.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True  # serve straight from the app dirs; collectstatic is optional

# Strict CSP: our own scripts and styles only, nothing inline, no eval.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "font-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = envbool("CALLSCOPE_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

# --- Callscope ---------------------------------------------------------------
# Largest model request body accepted by the ingest API, in bytes.
CALLSCOPE_MAX_BODY_BYTES = envint("CALLSCOPE_MAX_BODY_BYTES", 8 * 1024 * 1024)
# A call with no request or event for this many seconds counts as ended.
CALLSCOPE_IDLE_TIMEOUT = envint("CALLSCOPE_IDLE_TIMEOUT", 300)
# Every Nth turn of a call stores its raw body whole; the turns between store
# a zstd delta against the previous body. Bounds the work to read one body.
CALLSCOPE_RAW_CHECKPOINT_EVERY = envint("CALLSCOPE_RAW_CHECKPOINT_EVERY", 32)
# How many turns the call page shows at once (older ones load on demand).
CALLSCOPE_TURNS_PER_PAGE = envint("CALLSCOPE_TURNS_PER_PAGE", 30)
# Each server process sends queued webhook deliveries from a background thread.
CALLSCOPE_WEBHOOK_SENDER = envbool("CALLSCOPE_WEBHOOK_SENDER", True)

# Django reads the whole body before our view can answer 413; keep its own
# cap just above ours so that our clearer error wins.
DATA_UPLOAD_MAX_MEMORY_SIZE = CALLSCOPE_MAX_BODY_BYTES + 1

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("CALLSCOPE_LOG_LEVEL", "WARNING")},
}
