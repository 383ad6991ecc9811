# NOT TESTED: this machine has no Docker daemon; the tested path is `make serve` (docs/deploy.md).
# The portal's production processes (gunicorn, workers, sweeps) under `manage.py serve`.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    DEBUG=false BIND_HOST=0.0.0.0 PORT=8000 STATIC_ROOT=/app/staticfiles

# pg_dump/pg_restore for `manage.py backup` and `restore` (match the server's major version).
# espeak-ng makes the read-aloud audio (docs/deploy.md).
RUN apt-get update \
    && apt-get install -y --no-install-recommends postgresql-client espeak-ng \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml ./
RUN pip install --no-cache-dir . && rm -rf build *.egg-info
COPY . .
RUN useradd --system --home /app portal && mkdir -p staticfiles backups var/roster-uploads \
    && chown portal staticfiles backups var var/roster-uploads
USER portal

EXPOSE 8000
# collectstatic and migrate run at start, then every process; TERM stops them all.
CMD ["python", "manage.py", "serve"]
