"""gunicorn's settings for the portal (`manage.py serve` passes this file with --config).

Everything comes from the environment, so the same file serves `make serve`, a container and a
service manager. Threaded workers (gthread): a page may wait seconds on the upstream, and a
waiting thread costs little while the process keeps answering on its other threads.
"""

import os

bind = f"{os.environ.get('BIND_HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
worker_class = "gthread"
# Processes: about one per core (gunicorn reads WEB_CONCURRENCY too); threads: pages waiting
# on the upstream at once in each process.
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
# A request longer than this is killed with its worker: above the longest upstream call with
# its retries (PARTNER_API_RETRY_BUDGET plus one read timeout).
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
# On TERM, requests in hand get this long to finish.
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "30"))
keepalive = 5
# Requests are logged by the portal itself; gunicorn's own errors go to stderr.
accesslog = None
errorlog = "-"
# No runtime control socket (gunicorn 25.1+): it lives at one path per user, so a second
# instance on the machine would take over the first one's.
control_socket_disable = True
# Each worker loads the portal itself, so nothing opened while loading (a database connection,
# a thread) is shared across the fork.
preload_app = False


# ---- Metrics across worker processes
# prometheus-client's multiprocess mode needs PROMETHEUS_MULTIPROC_DIR, an empty directory per
# run (`manage.py serve` makes one when it is unset), and to be told when a worker dies so its
# live gauges stop counting.
def child_exit(server, worker) -> None:
    """Mark a finished worker dead for prometheus-client's multiprocess gauges."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return
    try:
        from prometheus_client import multiprocess
    except ImportError:
        return
    multiprocess.mark_process_dead(worker.pid)
