"""Settings for the partner portal, read from the environment (and a `.env` file if present)."""

import os
from ipaddress import ip_network
from pathlib import Path
from urllib.parse import urlsplit

import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from signin.configuration import sso_form_action, sso_providers

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
    "django.contrib.humanize",
    "csp",
    "django_tasks",
    # Before django_tasks_db: its `db_worker` command is ops's, which waits out a lost
    # database instead of dying (ops/worker.py).
    "ops",
    "django_tasks_db",
    "portal",
    "partner_api",
    "schools",
    "accounts",
    # Sign-in with a school's Google, Microsoft or OpenID Connect account and a second factor
    # for staff (django-allauth; the signin app holds the portal's rules around it).
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.google",
    "allauth.socialaccount.providers.openid_connect",
    "allauth.mfa",
    "signin",
    "classes",
    "learners",
    "assessments",
    "pictures",
    "speech",
    "sandbox",
    "audit",
    "dashboard",
    "followups",
    "imports",
    "privacy",
    "staff",
    "lessons",
    "safeguarding",
    "roster",
    "demo",
]

# WhiteNoise answers static files itself and returns at once: only the middleware listed above
# it add their headers to those responses, so every header-setting middleware comes first.
MIDDLEWARE = [
    # First: the request id, the request's log line and its metrics (ops/request_log.py),
    # then /healthz, /readyz and /metrics answered before any host check, redirect or session
    # (ops/probes.py).
    "ops.request_log.RequestLogMiddleware",
    "ops.probes.ProbeMiddleware",
    # Then, while the database does not answer, a 503 page with Retry-After, not a 500.
    "portal.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Before any view or the CSRF check reads the body: a form in another charset is a 400.
    "portal.middleware.UnreadableFormMiddleware",
    # The school this request works in (the session's choice, or the learner's own), before
    # anything asks the user's role in it.
    "accounts.school_choice.SchoolChoiceMiddleware",
    # django-allauth's sign-in steps (a provider's answer, the second factor) need the request.
    "allauth.account.middleware.AccountMiddleware",
    # A session a sign-in card started ends with its class's sign-in window.
    "lessons.middleware.CardSessionMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "accounts.idle.IdleSessionMiddleware",
    # Staff without a second factor this session reach only the pages that give or set one up.
    "signin.second_factor.SecondFactorMiddleware",
    "portal.middleware.UpstreamErrorMiddleware",
    "portal.middleware.NotFoundPageMiddleware",
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
                "django.template.context_processors.i18n",
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
    # One file per test process, so two test runs at once never share it.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / f".test-db-{os.getpid()}.sqlite3")}
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # The portal runs short indexed queries; PostgreSQL's JIT compiler guessed otherwise on the
    # dashboard's counts and added 125-290 ms to each (measured on 100,000 learners).
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("options", "-c jit=off")
    # Parameters bound on the server, and a statement run five times prepared: a page's one or
    # two queries then skip PostgreSQL's planning (about a third of their time). Behind a
    # transaction-mode pooler (PgBouncer), which cannot keep prepared statements, set
    # DATABASE_PREPARED_STATEMENTS=false.
    if env.bool("DATABASE_PREPARED_STATEMENTS", default=True):
        DATABASES["default"]["OPTIONS"].setdefault("server_side_binding", True)
        DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", 5)
    # A kept connection (`?conn_max_age=600`) is checked before a request reuses it: after a
    # PostgreSQL restart each process's old connections are broken, and without the check the
    # first request of every thread would fail on one (ops/database.py).
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)

# Argon2id at OWASP's password storage parameters (19 MiB, 2 passes, 1 lane): about 20 ms of
# one core a hash, memory-hard where PBKDF2 is not. Raise them on bigger machines
# (docs/deploy.md); existing hashes are made again at each learner's next sign-in. PBKDF2
# hashes from before keep working and are upgraded the same way.
PASSWORD_ARGON2_MEMORY_KIB = env.int("PASSWORD_ARGON2_MEMORY_KIB", default=19 * 1024)
PASSWORD_ARGON2_TIME_COST = env.int("PASSWORD_ARGON2_TIME_COST", default=2)
PASSWORD_ARGON2_PARALLELISM = env.int("PASSWORD_ARGON2_PARALLELISM", default=1)
if (
    PASSWORD_ARGON2_TIME_COST < 1
    or PASSWORD_ARGON2_PARALLELISM < 1
    or PASSWORD_ARGON2_MEMORY_KIB < 8 * PASSWORD_ARGON2_PARALLELISM
):
    raise ImproperlyConfigured(
        "PASSWORD_ARGON2_*: Argon2 needs at least 1 pass, 1 lane and 8 KiB of memory a lane "
        "(OWASP's minimum is PASSWORD_ARGON2_MEMORY_KIB=19456, TIME_COST=2, PARALLELISM=1)."
    )
PASSWORD_HASHERS = [
    "accounts.hashers.PortalArgon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    # At least 8: the upstream refuses a shorter learner password (the sandbox does too).
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 8},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# The second reads the users of sessions signed in before the backend moved (portal/auth.py);
# it signs no one in.
AUTHENTICATION_BACKENDS = [
    "accounts.auth.CaseInsensitiveModelBackend",
    "portal.auth.CaseInsensitiveModelBackend",
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Single sign-on and the second factor (the signin app; docs/deploy.md says how to register the
# portal with each provider). A provider is offered only when its client id and secret are set.
SSO_GOOGLE_CLIENT_ID = env("SSO_GOOGLE_CLIENT_ID", default="")
SSO_GOOGLE_CLIENT_SECRET = env("SSO_GOOGLE_CLIENT_SECRET", default="")
# The Workspace domains whose accounts may sign in, checked against the ID token's `hd` claim.
SSO_GOOGLE_DOMAINS = [d.lower() for d in env.list("SSO_GOOGLE_DOMAINS", default=[])]
SSO_MICROSOFT_CLIENT_ID = env("SSO_MICROSOFT_CLIENT_ID", default="")
SSO_MICROSOFT_CLIENT_SECRET = env("SSO_MICROSOFT_CLIENT_SECRET", default="")
# One Entra ID tenant (its id): the ID token's `tid` must be it.
SSO_MICROSOFT_TENANT = env("SSO_MICROSOFT_TENANT", default="")
# Where the Microsoft identity platform is (tests point it at a provider on loopback).
SSO_MICROSOFT_AUTHORITY = env(
    "SSO_MICROSOFT_AUTHORITY", default="https://login.microsoftonline.com"
)
SSO_OIDC_SERVER_URL = env("SSO_OIDC_SERVER_URL", default="")
SSO_OIDC_CLIENT_ID = env("SSO_OIDC_CLIENT_ID", default="")
SSO_OIDC_CLIENT_SECRET = env("SSO_OIDC_CLIENT_SECRET", default="")
SSO_OIDC_NAME = env("SSO_OIDC_NAME", default="Sign in with your trust account")
SSO_OIDC_DOMAINS = [d.lower() for d in env.list("SSO_OIDC_DOMAINS", default=[])]
# A provider's word that it asked for a second factor (`amr` holds "mfa") stands for ours.
SSO_TRUST_PROVIDER_MFA = env.bool("SSO_TRUST_PROVIDER_MFA", default=False)
# Every member of staff gives a second factor at sign-in; off only on a developer's machine.
STAFF_MFA_REQUIRED = env.bool("STAFF_MFA_REQUIRED", default=True)
# The most sensitive pages ask for the second factor again after this many minutes.
MFA_STEP_UP_MINUTES = env.int("MFA_STEP_UP_MINUTES", default=15)

# Origins a provider's sign-in goes on to after its authorization endpoint (a school's own SAML
# provider behind Google, say): the CSP's form-action must allow them (signin.configuration).
SSO_FORM_ACTION_ORIGINS = env.list("SSO_FORM_ACTION_ORIGINS", default=[])

_sso = {name: value for name, value in globals().items() if name.startswith("SSO_")}
SOCIALACCOUNT_PROVIDERS = sso_providers(_sso)

# django-allauth: it signs nobody up and sends no mail; the portal's own sign-in page (username
# and password) starts its login steps, so that the second factor follows a password too.
ACCOUNT_ADAPTER = "signin.adapter.PortalAccountAdapter"
SOCIALACCOUNT_ADAPTER = "signin.adapter.SchoolIdentityAdapter"
ACCOUNT_LOGIN_METHODS = {"username"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "password1*"]
ACCOUNT_EMAIL_VERIFICATION = "none"
ACCOUNT_USER_MODEL_EMAIL_FIELD = "email"
ACCOUNT_LOGOUT_ON_GET = False
# The sign-in throttle (accounts.sign_in_throttle) counts passwords and codes; allauth's own
# rate limits would count them a second time, in another store.
ACCOUNT_RATE_LIMITS = False
SOCIALACCOUNT_AUTO_SIGNUP = False
SOCIALACCOUNT_EMAIL_AUTHENTICATION = False
SOCIALACCOUNT_STORE_TOKENS = False
SOCIALACCOUNT_ONLY = False
MFA_ADAPTER = "signin.adapter.PortalMFAAdapter"
MFA_SUPPORTED_TYPES = ["totp", "webauthn", "recovery_codes"]
MFA_RECOVERY_CODES_SHOW_ONCE = True
MFA_TOTP_ISSUER = env("MFA_TOTP_ISSUER", default="Partner portal")
MFA_RATE_LIMITS = False
MFA_FORMS = {
    "authenticate": "signin.forms.ThrottledAuthenticateForm",
    "reauthenticate": "signin.forms.ThrottledReauthenticateForm",
    "activate_totp": "signin.forms.SetupCodeForm",
    "add_webauthn": "signin.forms.PasskeyForm",
}
# WebAuthn needs https, but for a developer's machine or the tests on http://127.0.0.1.
MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = env.bool("MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN", default=DEBUG)

# Sign-in throttling (accounts/sign_in_throttle.py). Failed sign-ins within LOGIN_FAILURE_WINDOW
# seconds are counted for one account from one address (LOGIN_FAILURE_LIMIT_PER_USERNAME), for
# one account from every address (LOGIN_FAILURE_LIMIT_PER_ACCOUNT) and for one address whatever
# the usernames (LOGIN_FAILURE_LIMIT_PER_IP); at its limit each is locked for
# LOGIN_LOCKOUT_DURATION seconds.
# A school is one address (NAT): the address limit counts its failures plus the sign-ins under
# way at that moment (correct ones give their place back when done), so keep it above a bad
# morning's typos plus a class signing in at once.
LOGIN_FAILURE_LIMIT_PER_USERNAME = env.int("LOGIN_FAILURE_LIMIT_PER_USERNAME", default=5)
LOGIN_FAILURE_LIMIT_PER_ACCOUNT = env.int("LOGIN_FAILURE_LIMIT_PER_ACCOUNT", default=10)
LOGIN_FAILURE_LIMIT_PER_IP = env.int("LOGIN_FAILURE_LIMIT_PER_IP", default=100)
LOGIN_FAILURE_WINDOW = env.int("LOGIN_FAILURE_WINDOW", default=15 * 60)
LOGIN_LOCKOUT_DURATION = env.int("LOGIN_LOCKOUT_DURATION", default=15 * 60)
# Sign-in cards (lessons/card_throttle.py): refused cards within LOGIN_FAILURE_WINDOW seconds
# are counted per device (the card page's cookie), per card (a code naming a current card) and
# per address; at its limit each is locked for LOGIN_LOCKOUT_DURATION seconds. A locked device
# or card is refused every time; a locked address refuses only devices without the cookie, so
# a class mistyping behind one address never stops the valid cards there. Counted apart from
# passwords: a class scanning while sign-in is closed must not lock out password sign-in.
CARD_REFUSAL_LIMIT_PER_DEVICE = env.int("CARD_REFUSAL_LIMIT_PER_DEVICE", default=20)
CARD_REFUSAL_LIMIT_PER_CARD = env.int("CARD_REFUSAL_LIMIT_PER_CARD", default=20)
CARD_REFUSAL_LIMIT_PER_IP = env.int("CARD_REFUSAL_LIMIT_PER_IP", default=2000)
# New device cookies one address is given per LOGIN_FAILURE_WINDOW (a school's devices keep
# theirs for a year): each is a device's allowance of refused codes.
CARD_NEW_DEVICES_PER_IP = env.int("CARD_NEW_DEVICES_PER_IP", default=500)
# Shared state (issue 17): the throttle counts, the circuit breaker, the upstream-health
# banner, the signed-in user and sessions live in the cache. The default (memory of one
# process) suits development and a single process; with several processes or servers set a
# shared cache whose counts go up atomically: CACHE_URL=redis://127.0.0.1:6379/1 (Django's own
# RedisCache). (dbcache://portal_cache, after `createcachetable`, is shared but counts by
# reading then writing: simultaneous sign-ins may pass a limit.)
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}
if urlsplit(env("CACHE_URL", default="")).scheme in ("redis", "rediss"):
    # Django's own backend whatever django-environ would pick (django-redis, if installed),
    # keeping one Redis client per pool rather than one per call (ops/cache.py).
    CACHES["default"]["BACKEND"] = "ops.cache.RedisCache"
    # A stopped Redis refuses at once; one that hangs must not hold a page for long: the
    # process then answers from the database (ops/cache.py) and tries Redis again later.
    CACHES["default"].setdefault("OPTIONS", {})
    CACHES["default"]["OPTIONS"].setdefault(
        "socket_connect_timeout", env.float("REDIS_CONNECT_TIMEOUT", default=0.5)
    )
    CACHES["default"]["OPTIONS"].setdefault(
        "socket_timeout", env.float("REDIS_TIMEOUT", default=1.0)
    )
# Without Redis, a process tries it again after 1, 2, 4... seconds, at most this many.
REDIS_RETRY_CAP = env.float("REDIS_RETRY_CAP", default=5.0)
# Cache keys that only copy database rows: without Redis they are misses (the callers read the
# database), never kept in the database a second time. Every other key (counts, locks, the
# circuit) is kept in the database meanwhile (ops/cache.py).
CACHE_COPY_PREFIXES = (
    "django.contrib.sessions.cached_db",
    "portal.user:",
    "portal.partner-settings",
    "portal.upstream-health:",
    "assessments.contacts:",
    "assessments:",
)
# Keys of several deployments (or test runs) sharing one Redis database stay apart.
CACHES["default"]["KEY_PREFIX"] = env("CACHE_KEY_PREFIX", default="")
# Whether every process of the deployment reads the same cache (Redis or the database).
CACHE_IS_SHARED = CACHES["default"]["BACKEND"].rsplit(".", 1)[-1] in ("RedisCache", "DatabaseCache")
# With a shared cache, sessions are read from it and written through to the database: a Redis
# restart or flush signs nobody out (cached_db, reading the signed-in user in the same round
# trip). Without one, the database's alone (one process's memory would keep a session another
# ended). Both engines key a signed-in session by its user, so that all of one person's
# sessions can be ended at once (accounts.session_ending).
SESSION_ENGINE = "accounts.sessions" if CACHE_IS_SHARED else "accounts.db_sessions"
# The signed-in user (with their Learner and staff role) is kept in the cache between requests
# for this long, dropped whenever the account changes (accounts.user_cache). Only with a shared
# cache: another process's memory would not hear of a change made here.
ROW_CACHE_SECONDS = env.int("ROW_CACHE_SECONDS", default=300 if CACHE_IS_SHARED else 0)
# The partner's settings and a learner's school contacts on the results page are also kept in
# each process's memory this long: a change made in another process shows within it.
ROW_MEMORY_SECONDS = env.float("ROW_MEMORY_SECONDS", default=2 if CACHE_IS_SHARED else 0)
# The "service unavailable" banner reads what other processes (the worker) published at most
# this often, not on every page view.
UPSTREAM_HEALTH_CACHE_SECONDS = env.float("UPSTREAM_HEALTH_CACHE_SECONDS", default=2)
# Housekeeping (`manage.py sweep_housekeeping`): finished background-task results and failed
# upstream calls (the operations page shows the last day's) are deleted after these many days.
TASK_RESULTS_KEEP_DAYS = env.int("TASK_RESULTS_KEEP_DAYS", default=14)
UPSTREAM_FAILURES_KEEP_DAYS = env.int("UPSTREAM_FAILURES_KEEP_DAYS", default=30)

# Sessions end after a quiet spell (accounts.idle.IdleSessionMiddleware): learners share
# classroom computers, so theirs end soon and with the browser; staff keep theirs longer.
LEARNER_IDLE_TIMEOUT = env.int("LEARNER_IDLE_TIMEOUT", default=15 * 60)
STAFF_IDLE_TIMEOUT = env.int("STAFF_IDLE_TIMEOUT", default=8 * 60 * 60)
SESSION_EXPIRE_AT_BROWSER_CLOSE = True

# Every string a person reads goes through Django's translation functions, and dates and
# numbers through the locale's formats (portal/formats/ keeps en-GB's as the portal wrote them).
# A new language: `manage.py makemessages -l cy`, translate locale/cy/LC_MESSAGES/django.po,
# `manage.py compilemessages --ignore=.venv`, and add it to LANGUAGES; LocaleMiddleware then
# serves each person the language their browser asks for, falling back to LANGUAGE_CODE.
LANGUAGE_CODE = "en-gb"
LANGUAGES = [("en-gb", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]
FORMAT_MODULE_PATH = ["portal.formats"]
TIME_ZONE = env("TIME_ZONE", default="Europe/London")
USE_I18N = True
USE_TZ = True

# Static files. `make run` (DEBUG on) serves them straight from static/ and the apps. In
# production (DEBUG off in the environment) `collectstatic` (run by `manage.py serve`) copies
# them to STATIC_ROOT under names holding a hash of their content, with gzip and brotli copies,
# and WhiteNoise serves them from the web processes: hashed names for a year (immutable), with
# the pages' security headers. Without collectstatic a production page fails to render.
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
# Decided by the environment's DEBUG, not the test runner's: tests render pages without
# collectstatic, so WhiteNoise finds their files in static/ and the apps, as in development.
WHITENOISE_AUTOREFRESH = DEBUG
WHITENOISE_USE_FINDERS = DEBUG
# No other site needs the portal's files: no Access-Control-Allow-Origin on them.
WHITENOISE_ALLOW_ALL_ORIGINS = False

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
# Answer pictures (an `Icon` given by address) are fetched once in the background: connect and
# read timeouts in seconds, and the largest file taken (partner_api/pictures.py).
PICTURE_FETCH_TIMEOUT = tuple(
    float(part) for part in env.list("PICTURE_FETCH_TIMEOUT", default=["3.05", "5"])
)
PICTURE_MAX_BYTES = env.int("PICTURE_MAX_BYTES", default=262144)

# Background work (submission delivery, results fetch) on a database queue that survives
# restarts; `python manage.py db_worker` runs it. Several workers may share one PostgreSQL.
# Three queues, each with its own `db_worker`: deliveries and alerts ("default"), bulk
# registrations ("imports") and answer pictures and read-aloud audio ("media"), so neither a
# long import nor a slow picture host ever holds up a learner's submission.
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "imports", "media"],
    }
}

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

# Read-aloud audio for browsers without a voice (speech/making.py): Debian's espeak-ng makes a
# WAV of each question and answer once, in the background. Without it no audio is made and
# the speaker buttons show only where the browser has a voice of its own. A name is looked up on
# PATH at each try (speech/making.py), so a worker started before espeak-ng was installed finds
# it once it is.
SPEECH_ESPEAK = env("ESPEAK_NG_PATH", default="espeak-ng")

# When PostgreSQL blinks (ops/database.py): workers and sweeps wait for it with backoff (at
# most DATABASE_RETRY_BACKOFF_CAP seconds between tries) and go on. What the upstream answered
# (a registration, a submission, results) is held in memory and written once the database is
# back: for DATABASE_OUTAGE_HOLD seconds in a worker, DATABASE_OUTAGE_HOLD_IN_REQUEST in a web
# request (a page must not wait long). Pages answer 503 with Retry-After meanwhile.
DATABASE_OUTAGE_HOLD = env.int("DATABASE_OUTAGE_HOLD", default=600)
DATABASE_OUTAGE_HOLD_IN_REQUEST = env.int("DATABASE_OUTAGE_HOLD_IN_REQUEST", default=15)
DATABASE_RETRY_BACKOFF_CAP = 5.0

# Behind a reverse proxy that sets X-Forwarded-For, the audit trail may take the client IP
# from it (only the entry the nearest proxy added).
AUDIT_TRUST_X_FORWARDED_FOR = env.bool("AUDIT_TRUST_X_FORWARDED_FOR", default=False)

DEFAULT_EXCEPTION_REPORTER_FILTER = "portal.error_reports.AlwaysSafeExceptionReporterFilter"

# Every app of the portal logs to the console at PORTAL_LOG_LEVEL (a new app joins this list).
LOGGED_APPS = (
    "portal",
    "partner_api",
    "ops",
    "kit",
    "schools",
    "accounts",
    "signin",
    "classes",
    "audit",
    "assessments",
    "pictures",
    "speech",
    "learners",
    "imports",
    "dashboard",
    "followups",
    "privacy",
    "staff",
    "lessons",
    "safeguarding",
    "roster",
    "demo",
)
# LOG_FORMAT: "plain" (a readable line, the default) or "json" (one object per line, for a log
# collector). Every line carries the id of the request or task it belongs to; secrets are
# masked (ops/log_format.py). django.request logs each 500 with its traceback;
# django_tasks logs each task a worker runs.
LOG_FORMAT = env("LOG_FORMAT", default="plain")
if LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured('LOG_FORMAT must be "plain" or "json"')
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "ops.request_context.RequestIdLogFilter"}},
    "formatters": {
        "plain": {"()": "ops.log_format.PlainFormatter"},
        "json": {"()": "ops.log_format.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "loggers": {
        **{
            app: {"handlers": ["console"], "level": env("PORTAL_LOG_LEVEL", default="INFO")}
            for app in LOGGED_APPS
        },
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
        "django_tasks": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# Observability (ops/request_context.py, ops/health.py, ops/metrics.py).
# X-Request-ID is taken from a request only when its nearest peer (REMOTE_ADDR) lies in one of
# these ranges, e.g. "127.0.0.1/32" for an nginx on the same machine; otherwise an id is made.
REQUEST_ID_TRUSTED_PROXIES = env.list("REQUEST_ID_TRUSTED_PROXIES", default=[])
# /metrics answers only a request with "Authorization: Bearer <METRICS_TOKEN>" or from an
# address in METRICS_ALLOWED_IPS (ranges; the connection's own REMOTE_ADDR, and never for a
# request that came through a proxy); with neither set it is off (404).
METRICS_TOKEN = env("METRICS_TOKEN", default="")
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=[])
# /readyz remembers that every migration is applied for this many seconds (checking costs tens
# of milliseconds; a probe comes every second).
READYZ_MIGRATIONS_CACHE_SECONDS = env.float("READYZ_MIGRATIONS_CACHE_SECONDS", default=300)
for _name in ("REQUEST_ID_TRUSTED_PROXIES", "METRICS_ALLOWED_IPS"):
    for _range in vars()[_name]:
        try:
            ip_network(_range.strip(), strict=False)
        except ValueError:
            raise ImproperlyConfigured(f"{_name}: {_range!r} is not an address range") from None


# --------------------------------------------------------------------------------------------
# Security
#
# Production (DEBUG off) is HTTPS only: HSTS, a redirect to https and cookies marked Secure.
# Development (DEBUG on, `make run`) keeps working over plain http on 127.0.0.1. Every other
# header is the same in both. `python manage.py check --deploy` with production settings
# reports nothing (tests/test_security_headers.py runs it).
# --------------------------------------------------------------------------------------------

# Content-Security-Policy (django-csp 4.x). No 'unsafe-inline' anywhere: templates hold no
# inline <script> or <style>, no on...= handlers and no style="..." attributes; scripts and
# styles come from static files only. Sanitized upstream HTML (docs/partner-api.md) is the
# first wall, this policy the second. The Django admin needs no relaxation: its scripts are
# all files and its one inline <style> (change lists with every action bar turned off) is not
# used here, so a ModelAdmin must not set both actions_on_top and actions_on_bottom False.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        # Images only from the portal: an answer's Icon given as an https URL is not shown
        # (portal.templatetags.portal_tags.answer_icon), so no request leaves the origin.
        "img-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        # The sign-in page's provider buttons POST to the portal, which redirects to the
        # provider: Chromium checks form-action on that redirect too.
        "form-action": [SELF, *sso_form_action(_sso)],
    },
}

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# HTTPS in production. Behind a TLS-terminating proxy, set SECURE_PROXY_SSL_HEADER to the
# header it sets and the value meaning https, e.g. "X-Forwarded-Proto,https" (only if the
# proxy always sets or strips that header: a client could otherwise claim https).
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_HSTS_SECONDS = 0 if DEBUG else env.int("SECURE_HSTS_SECONDS", default=63072000)  # 2 years
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
_proxy_ssl_header = env.list("SECURE_PROXY_SSL_HEADER", default=[])
if _proxy_ssl_header:
    if len(_proxy_ssl_header) != 2:
        raise ImproperlyConfigured(
            'SECURE_PROXY_SSL_HEADER must be "Header-Name,value", e.g. "X-Forwarded-Proto,https"'
        )
    _header_name = _proxy_ssl_header[0].strip().upper().replace("-", "_")
    if not _header_name.startswith("HTTP_"):
        _header_name = f"HTTP_{_header_name}"
    SECURE_PROXY_SSL_HEADER = (_header_name, _proxy_ssl_header[1].strip())

# Cookies: Secure in production, never readable by scripts (the portal has no JavaScript that
# reads the CSRF token: forms carry it), and SameSite=Lax, so a link from an e-mail still
# arrives signed in while cross-site POSTs carry no cookie.
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# SECRET_KEY, ALLOWED_HOSTS and PARTNER_API_KEY are required from the environment when DEBUG
# is off (above). The API key then travels to the upstream only over https; plain http is
# refused unless PARTNER_API_ALLOW_HTTP=true (local tests against the sandbox only).
if (
    not DEBUG
    and urlsplit(PARTNER_API_BASE_URL).scheme != "https"
    and not env.bool("PARTNER_API_ALLOW_HTTP", default=False)
):
    raise ImproperlyConfigured(
        "PARTNER_API_BASE_URL must be an https URL when DEBUG is off "
        "(set PARTNER_API_ALLOW_HTTP=true only to test against a local sandbox)"
    )

# Bulk registration
# Registering learners from a CSV file (imports/services.py). A file may hold at most
# IMPORT_MAX_ROWS learners and IMPORT_MAX_FILE_BYTES bytes. Each row is a task on the `imports`
# queue (imports/run.py), its password hashed by a second task once the upstream registered
# it; `manage.py serve` runs IMPORT_WORKERS imports workers, each one task at a time, so that
# many rows are sent at once. A row still "sending" IMPORT_STALLED_AFTER seconds after its task
# claimed it was cut off with its worker, and a running job none of whose rows moved for that
# long is run again (by the progress page or `sweep_imports`). Generated passwords can be
# downloaded once, for IMPORT_CREDENTIALS_TTL seconds after the job finished; an unconfirmed
# preview is discarded after IMPORT_PREVIEW_TTL seconds, and a job's rows are deleted
# IMPORT_KEEP_DAYS days after.
IMPORT_MAX_ROWS = env.int("IMPORT_MAX_ROWS", default=10_000)
IMPORT_MAX_FILE_BYTES = env.int("IMPORT_MAX_FILE_BYTES", default=5_000_000)
IMPORT_WORKERS = env.int("IMPORT_WORKERS", default=4)
IMPORT_STALLED_AFTER = env.int("IMPORT_STALLED_AFTER", default=60)
IMPORT_CREDENTIALS_TTL = env.int("IMPORT_CREDENTIALS_TTL", default=60 * 60)
IMPORT_PREVIEW_TTL = env.int("IMPORT_PREVIEW_TTL", default=24 * 60 * 60)
IMPORT_KEEP_DAYS = env.int("IMPORT_KEEP_DAYS", default=30)

# Roster sync (the roster app): the school's records as OneRoster CSV. A sync is held for an
# admin, changing nothing, when more than ROSTER_HOLD_LEAVERS_PERCENT of a school's pupils
# would leave or more than ROSTER_HOLD_CHANGES_PERCENT of its enrolments would change (or a
# file is empty or cut off). Files put in ROSTER_DROP_DIR are taken once each by
# `sweep_roster` (started by `make run` and `make serve`); unset, only upload and command.
ROSTER_HOLD_LEAVERS_PERCENT = env.float("ROSTER_HOLD_LEAVERS_PERCENT", default=10.0)
ROSTER_HOLD_CHANGES_PERCENT = env.float("ROSTER_HOLD_CHANGES_PERCENT", default=25.0)
ROSTER_DROP_DIR = env.str("ROSTER_DROP_DIR", default="")
# An uploaded roster (zip) may be at most this big; a trust's 20,000 pupils are about 10 MB.
ROSTER_MAX_UPLOAD_BYTES = env.int("ROSTER_MAX_UPLOAD_BYTES", default=100_000_000)
# Where an uploaded zip waits for the imports worker that reads it (deleted once read): on a
# disk the web server and the workers share, holding pupils' personal data meanwhile.
ROSTER_UPLOAD_DIR = env.str("ROSTER_UPLOAD_DIR", default=str(BASE_DIR / "var" / "roster-uploads"))

# Dashboard
# Counts from 1 to DASHBOARD_MIN_GROUP_SIZE - 1 are shown as "fewer than N", so that no
# learner can be singled out (dashboard/disclosure.py).
DASHBOARD_MIN_GROUP_SIZE = env.int("DASHBOARD_MIN_GROUP_SIZE", default=5)
if DASHBOARD_MIN_GROUP_SIZE < 1:
    raise ImproperlyConfigured("DASHBOARD_MIN_GROUP_SIZE must be 1 or more")

# Mail: safeguarding alerts (the safeguarding app). EMAIL_URL is django-environ's email URL:
# smtp://user:password@host:587 (smtp+tls://, smtp+ssl:// for TLS), consolemail:// (the
# default: printed by the process that sends, the delivery worker under `make run`).
vars().update(env.email_url("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="partner-portal@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=20)
# The portal's address as pupils and staff reach it: the link in an alert email (which a
# worker sends, with no request to take the host from) and the sign-in address printed on
# cards and QR codes (never a request's host, which may be an internal name).
PORTAL_URL = env("PORTAL_URL", default="http://127.0.0.1:8000").rstrip("/")
# An alert email that could not be sent is tried again this many times, backing off from
# ALERT_EMAIL_RETRY_BASE seconds (doubling, at most 30 minutes between tries); a failure shows
# in the safeguarding leads' banner from the first one.
ALERT_EMAIL_MAX_TRIES = env.int("ALERT_EMAIL_MAX_TRIES", default=10)
ALERT_EMAIL_RETRY_BASE = env.int("ALERT_EMAIL_RETRY_BASE", default=30)

# Follow-ups
# A follow-up item opened for a learner who needs help is due this many days later.
FOLLOW_UP_DUE_DAYS = env.int("FOLLOW_UP_DUE_DAYS", default=7)

# Backups (`make backup`, `make restore`; ops/backups.py): PostgreSQL dumps go here.
BACKUP_DIR = env.path("BACKUP_DIR", default=BASE_DIR / "backups")
