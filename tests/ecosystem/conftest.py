"""Each C++ port (test_cpp_*.py) runs in a pytest of its own, in a child
process: a port's shared library stays loaded until its process ends (a
library's registrations cannot be unloaded safely), and what it registers is
process-wide (OpenReg replaces the PrivateUse1 fallbacks, torchvision's port
defines operators the Python port defines too). In a session that collects
the whole directory, a port module is one item, ``in_its_own_process``,
which runs the module's tests in a fresh interpreter and fails with that
run's report; so no other test sees a port's registrations, in any order and
on any pytest-xdist worker. Named on the command line, a port module runs
its tests in this process, one by one, as any module does."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Optional

import pytest

#: Set in the child process: there the port module is collected as usual.
CHILD = "OPDISPATCH_CPP_PORT_PROCESS"


class CppPortFailed(Exception):
    """A port module's run in its own process failed; holds that run's report."""


class CppPortRun(pytest.Item):
    """Runs the tests of one port module in a child pytest."""

    def runtest(self) -> None:
        env = dict(os.environ, **{CHILD: "1"})
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(self.path)]
        run = subprocess.run(command, cwd=self.config.rootpath, env=env, capture_output=True, text=True,
                             timeout=1200)
        if run.returncode != 0:
            raise CppPortFailed(f"{' '.join(command)} failed (exit {run.returncode}):\n{run.stdout}{run.stderr}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Optional[str] = None) -> str:
        if isinstance(excinfo.value, CppPortFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, Optional[int], str]:
        return self.path, None, f"{self.path.name}: its tests in their own process"


class CppPortModule(pytest.File):
    """A port module collected as the one item that runs it in a child process."""

    def collect(self) -> Iterator[pytest.Item]:
        yield CppPortRun.from_parent(self, name="in_its_own_process")


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> Optional[pytest.Collector]:
    if (os.environ.get(CHILD) or not module_path.name.startswith("test_cpp_")
            or parent.session.isinitpath(module_path)):
        return None
    return CppPortModule.from_parent(parent, path=module_path)
