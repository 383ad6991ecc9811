"""Settings for the partner portal, read from the environment (and a `.env` file if present)."""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env")

DEBUG = env.bool("DEBUG", default=True)

if DEBUG:
    # Development only: a fixed key and local hosts, so a fresh clone just runs.
    SECRET_KEY = env("SECRET_KEY", default="django-insecure-development-only-key")
    ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
else:
    SECRET_KEY = env("SECRET_KEY")
    ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_tasks",
    "django_tasks_db",
    "portal",
    "learners",
    "assessments",
    "sandbox",
    "audit",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "portal.middleware.UpstreamErrorMiddleware",
]

ROOT_URLCONF = "portal.urls"

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
                "portal.context_processors.roles",
                "portal.context_processors.upstream",
            ],
        },
    },
]

WSGI_APPLICATION = "portal.wsgi.application"

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Take the write lock when a transaction starts: with SQLite's default, two requests that
    # read then write (a double click on "Send") deadlock and one fails with "locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"transaction_mode": "IMMEDIATE", "timeout": 20}
    )
    # Tests run a real task worker in a second process, which needs a file, not memory.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / ".test-db.sqlite3")}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

AUTHENTICATION_BACKENDS = ["portal.auth.CaseInsensitiveModelBackend"]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = env("TIME_ZONE", default="Europe/London")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The upstream Learner Assessment Partner API. The defaults point at the built-in sandbox
# (`python manage.py sandbox`); a deployment sets all three in its environment.
PARTNER_API_BASE_URL = env(
    "PARTNER_API_BASE_URL", default="http://127.0.0.1:8001/plapi/v1/partners"
)
# Outside development the key must be set: a production portal must never fall back to
# the sandbox's demo key.
PARTNER_API_KEY = (
    env("PARTNER_API_KEY", default="sandbox-demo-key") if DEBUG else env("PARTNER_API_KEY")
)
PARTNER_API_TIMEOUT = tuple(
    float(part) for part in env.list("PARTNER_API_TIMEOUT", default=["3.05", "10"])
)
# Retries of the client (GETs; create-learner only when the request never left): at most
# MAX_ATTEMPTS attempts within BUDGET seconds per call, sleeping a random 0..BACKOFF*2^n
# (at most BACKOFF_CAP) seconds between them, or the upstream's Retry-After up to
# RETRY_AFTER_CAP (a longer one ends the call at once).
PARTNER_API_RETRY_BUDGET = env.float("PARTNER_API_RETRY_BUDGET", default=10.0)
PARTNER_API_RETRY_MAX_ATTEMPTS = env.int("PARTNER_API_RETRY_MAX_ATTEMPTS", default=4)
PARTNER_API_RETRY_BACKOFF = env.float("PARTNER_API_RETRY_BACKOFF", default=0.25)
PARTNER_API_RETRY_BACKOFF_CAP = env.float("PARTNER_API_RETRY_BACKOFF_CAP", default=2.0)
PARTNER_API_RETRY_AFTER_CAP = env.float("PARTNER_API_RETRY_AFTER_CAP", default=5.0)
# Circuit breaker: after THRESHOLD consecutive calls found the upstream down, calls fail fast
# for COOLDOWN seconds, then one trial call decides (THRESHOLD 0 turns it off).
PARTNER_API_BREAKER_THRESHOLD = env.int("PARTNER_API_BREAKER_THRESHOLD", default=5)
PARTNER_API_BREAKER_COOLDOWN = env.float("PARTNER_API_BREAKER_COOLDOWN", default=30.0)

# Background work (submission delivery, results fetch) on a database queue that survives
# restarts; `python manage.py db_worker` runs it. Several workers may share one PostgreSQL.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}

# How long a submission may sit in `submitting` before the sweep treats its call as lost
# (it must be longer than any single upstream call can take, retries included).
SUBMISSION_STUCK_AFTER = env.int("SUBMISSION_STUCK_AFTER", default=300)
# A pending submission is not re-sent on request (a learner's or staff's "try now") until this
# many seconds after the last try: a slow upstream may still be processing it.
SUBMISSION_QUIET_PERIOD = env.int("SUBMISSION_QUIET_PERIOD", default=20)
# Backoff for background delivery of pending submissions and results: seconds for the
# first retry, doubling up to the cap.
DELIVERY_RETRY_BASE = env.int("DELIVERY_RETRY_BASE", default=30)
DELIVERY_RETRY_CAP = env.int("DELIVERY_RETRY_CAP", default=1800)

# Behind a reverse proxy that sets X-Forwarded-For, the audit trail may take the client IP
# from it (only the entry the nearest proxy added).
AUDIT_TRUST_X_FORWARDED_FOR = env.bool("AUDIT_TRUST_X_FORWARDED_FOR", default=False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "portal": {"handlers": ["console"], "level": env("PORTAL_LOG_LEVEL", default="INFO")},
        "learners": {"handlers": ["console"], "level": env("PORTAL_LOG_LEVEL", default="INFO")},
        "assessments": {"handlers": ["console"], "level": env("PORTAL_LOG_LEVEL", default="INFO")},
    },
}
