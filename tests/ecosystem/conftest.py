"""The C++ ports (test_cpp_*.py) run after every other test of the session:
their shared libraries stay loaded until the process ends (a library's
registrations cannot be unloaded safely), while the Python ports define some
of the same operators (torchvision's, for one) and undo their registrations
after their own tests (see _port.py)."""
from __future__ import annotations

from pathlib import Path

import pytest


def _is_cpp_port(item: pytest.Item) -> bool:
    path = Path(str(item.fspath))
    return path.parent == Path(__file__).parent and path.name.startswith("test_cpp_")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    items[:] = [i for i in items if not _is_cpp_port(i)] + [i for i in items if _is_cpp_port(i)]
