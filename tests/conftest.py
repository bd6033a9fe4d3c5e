"""Shared fixtures: a fresh namespace and Library per test, and a check that
every test leaves the dispatcher consistent and free of its registrations."""
from __future__ import annotations

import itertools
import re

import pytest

from opdispatch import _C, library
from opdispatch._library import custom_ops, legacy_custom_op

_counter = itertools.count()


def _destroy_kept_since(start: int) -> None:
    """Destroys the libraries the free functions (define / impl without lib=) kept alive since `start`."""
    for leftover in library._keep_alive[start:]:
        leftover._destroy()
    del library._keep_alive[start:]


def _destroy_custom_ops(ns: str) -> None:
    """Destroys the operators custom_op and the legacy custom_op API made in
    `ns` (they live as long as the process otherwise)."""
    for registry in (custom_ops.OPDEFS, legacy_custom_op.global_registry):
        for qualname in [q for q in registry if q.startswith(ns + "::")]:
            registry[qualname]._destroy()


@pytest.fixture
def ns(request):
    """A namespace no other test uses; after the test, no operator may be left
    in it (custom ops made in it are destroyed first)."""
    kept = len(library._keep_alive)
    name = f"t{next(_counter)}_" + re.sub(r"\W", "_", request.node.name)[:40]
    yield name
    _destroy_custom_ops(name)
    _destroy_kept_since(kept)
    assert [n for n in _C._dispatch_get_all_op_names() if n.startswith(name + "::")] == []


@pytest.fixture
def lib(ns):
    """A FRAGMENT Library for `ns`, destroyed after the test."""
    result = library.Library(ns, "FRAGMENT")
    yield result
    result._destroy()


@pytest.fixture(autouse=True)
def _check_dispatcher():
    """After every test: no kept-alive library of the test survives, and every operator's invariants hold."""
    kept = len(library._keep_alive)
    yield
    _destroy_kept_since(kept)
    _C._dispatch_check_all_invariants()


def pytest_terminal_summary(terminalreporter):
    """Names the C++ unit tests in the run's last lines when they did not run
    (no GoogleTest; see tests/test_cpp.py), so a run that skipped them never
    reads as a full pass."""
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if "C++ unit tests NOT RUN" in reason:
            terminalreporter.write_line(reason.removeprefix("Skipped: "), yellow=True, bold=True)
