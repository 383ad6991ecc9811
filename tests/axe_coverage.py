"""At the end of a test session: did axe reach every page? (tests/test_accessibility.py)

Each test of that module adds the URL name of every page it checks to the module's REACHED, in
the process that runs it. Under pytest-xdist that is one of several workers, and which worker
runs which test changes from run to run: no worker alone has reached every page. So each
process says at the end of its session what it saw (the pages that must be reached, the ones
it reached, and which of the module's tests were selected); a worker hands that to the
controller through xdist's workeroutput. The controller (or the one process, without xdist)
puts every worker's together, and fails the session, naming the pages, when the whole module
was selected, each of its tests passed, and a page was still not reached. When only some of
its tests ran (`-k`, a node id), or one failed or was skipped (no Chromium), nothing is
checked here: the module's last test still holds its lists to the URLconf.

tests/conftest.py imports these hooks, which registers them.
"""

import pytest

AXE_MODULE = "tests/test_accessibility.py"
WORKER_OUTPUT_KEY = "axe_coverage"

# In the controller (or the one process): the module's tests whose call passed, those with a
# report that failed or was skipped, and what each worker saw.
_passed: set[str] = set()
_spoiled: set[str] = set()
_from_workers: list[dict] = []


def _what_this_process_saw(session: pytest.Session) -> dict | None:
    """Return the pages to reach, the ones reached here and the tests selected, if any."""
    items = [item for item in session.items if item.nodeid.split("::")[0] == AXE_MODULE]
    if not items:
        return None
    module = items[0].module
    every_test = {
        name for name, value in vars(module).items() if name.startswith("test_") and callable(value)
    }
    return {
        "selected": sorted(item.nodeid for item in items),
        "whole_module": {item.originalname for item in items} == every_test,
        "pages": sorted(module.pages_axe_must_reach()),
        "reached": sorted(module.REACHED),
    }


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Note how each of the module's tests went (xdist sends every report to the controller)."""
    if report.nodeid.split("::")[0] != AXE_MODULE:
        return
    if report.failed or report.skipped:
        _spoiled.add(report.nodeid)
    elif report.when == "call":
        _passed.add(report.nodeid)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown when xdist is not loaded
def pytest_testnodedown(node, error) -> None:
    """Keep what a worker saw, as it hands its results over."""
    seen = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY)
    if seen:
        _from_workers.append(seen)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A worker hands over what it saw; the controller checks what every process saw."""
    seen = _what_this_process_saw(session)
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker
        if seen:
            workeroutput[WORKER_OUTPUT_KEY] = seen
        return
    gathered = _from_workers + ([seen] if seen else [])
    if not gathered:
        return
    selected = set(gathered[0]["selected"])
    if not gathered[0]["whole_module"] or not selected <= _passed or selected & _spoiled:
        return
    pages = set(gathered[0]["pages"])
    reached = set().union(*(process["reached"] for process in gathered))
    missing = sorted(pages - reached)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if not missing:
        if reporter:
            reporter.write_line(
                f"axe coverage: all {len(pages)} pages reached, "
                f"over {len(gathered)} process{'es' if len(gathered) > 1 else ''}"
            )
        return
    message = (
        f"axe coverage: {AXE_MODULE} ran whole and passed, but no axe check reached "
        f"{len(missing)} page(s) (add a state to a test, or a reason to NOT_A_PAGE): "
        + ", ".join(missing)
    )
    if reporter:
        reporter.write_sep("=", "axe coverage", red=True)
        reporter.write_line(message, red=True)
    else:
        print(message)
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
