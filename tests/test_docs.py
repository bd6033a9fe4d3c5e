"""The README's set-up commands and examples: CI runs the README's test
command, and every Python example of the README runs. (The documentation's
own examples run in the docs build: .ci/docs.sh.)"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
DOCS = REPO / "docs"


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", README, re.M | re.S)


def setup_commands() -> list[str]:
    section = README.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```bash\n(.*?)\n```$", section, re.M | re.S)


def _build_requirements() -> set[str]:
    """The distribution names in pyproject.toml's [build-system] requires, plus the
    tools scikit-build-core would add to an isolated build (cmake, ninja)."""
    requires = re.search(r"^\[build-system\]\nrequires = \[(.*?)\]$", (REPO / "pyproject.toml").read_text(), re.M)
    assert requires is not None, "pyproject.toml has no [build-system] requires line"
    names = {re.split(r"[<>=!~; ]", r.strip().strip('"'), maxsplit=1)[0] for r in requires.group(1).split(",")}
    return names | {"cmake", "ninja"}


def test_the_readme_has_two_setup_commands_without_sudo():
    demo, tests = setup_commands()
    prepare = "pip install " + " ".join(sorted(_build_requirements(), key=["scikit-build-core", "pybind11", "cmake",
                                                                          "ninja"].index))
    assert demo == f'{prepare} && pip install --no-build-isolation ".[demo]" && python -m opdispatch demo'
    assert tests == (f'tests/cpp/get-googletest.sh && {prepare} && pip install --no-build-isolation ".[test]" && '
                     "python -m pytest tests -n auto --dist loadfile")
    assert "sudo" not in demo + tests


def test_ci_runs_the_readmes_test_command():
    _, tests = setup_commands()
    ci = (REPO / ".ci" / "run").read_text()
    assert tests in ci.splitlines()


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_readme_python_example_runs(index, tmp_path):
    code = blocks("python")[index]
    env = {**os.environ, "OPDISPATCH_EXTENSIONS_DIR": str(tmp_path / "extensions")}
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip(), "each README example prints what it shows"


def test_every_example_of_the_docs_is_one_the_docs_build_runs():
    """Python examples are testcode blocks (the doctest builder runs them and
    checks their testoutput), commands are command-output blocks (run by the
    HTML build), C++ is literalinclude of examples/extension (which the C++
    page compiles and calls): no example is a plain literal block that nothing runs.
    Two kinds of code block are allowed: ``text`` (a picture, not an example)
    and ``bash`` whose every line is a command of the README (whose set-up
    commands CI runs)."""
    pages = sorted(DOCS.rglob("*.rst"))
    assert len(pages) >= 10
    readme_lines = set(README.splitlines())
    for page in pages:
        text = page.read_text()
        for language, body in re.findall(r"^\.\. code-block:: (\w+)\n\n((?:   .*\n|\n)+)", text, re.M):
            assert language in ("text", "bash"), (page, language)
            if language == "bash":
                for line in filter(None, (line.strip() for line in body.splitlines())):
                    assert line in readme_lines, f"{page}: {line!r} is not a README command"
        text = re.sub(r"^\.\. code-block:: (text|bash)$", "", text, flags=re.M)
        assert ".. code-block::" not in text and ".. code::" not in text and ">>>" not in text, page
        assert not re.search(r"^[^.\s].*::$", text, re.M), f"{page}: a literal block (paragraph ending in '::')"
        for include in re.findall(r"^\.\. literalinclude:: (\S+)$", text, re.M):
            assert include.startswith("../../examples/extension/"), (page, include)
    assert "testcode" in (DOCS / "guide" / "cpp-extensions.rst").read_text()


def test_ci_works_in_a_virtual_environment_of_its_own():
    lines = (REPO / ".ci" / "run").read_text().splitlines()
    make, activate = lines.index('"${PYTHON:-python3}" -m venv build/ci-venv'), lines.index(". build/ci-venv/bin/activate")
    _, tests = setup_commands()
    assert make < activate < lines.index(tests)
