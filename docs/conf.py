# Sphinx configuration of opdispatch's documentation (built by .ci/docs.sh:
# HTML with warnings as errors, then every example run by the doctest builder).
from __future__ import annotations

import sys
from pathlib import Path

import opdispatch

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "opdispatch"
# The one version, opdispatch.__version__ (pyproject.toml reads it too).
version = release = opdispatch.__version__
author = "the opdispatch authors"
copyright = "the opdispatch authors"

extensions = [
    "sphinx.ext.autodoc",  # the API reference, from the docstrings
    "sphinx.ext.doctest",  # runs every testcode block and checks its testoutput
    "sphinx.ext.napoleon",  # the docstrings' "Args:" / "Returns:" / "Raises:" sections
    "sphinx.ext.viewcode",
    "sphinxcontrib.programoutput",  # runs the command-line examples at build time and shows their output
    "design_notes",  # the source's Note [...] blocks as a page, and every mention of one linked to it
]

html_theme = "furo"
# Files the build makes beside the pages (the command-line page writes the coverage page here).
_EXTRA = Path(__file__).resolve().parent.parent / "build" / "docs-extra"
_EXTRA.mkdir(parents=True, exist_ok=True)
html_extra_path = [str(_EXTRA)]
html_title = f"opdispatch {release}"
exclude_patterns = ["_build"]
nitpicky = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# Every testcode block starts with opdispatch imported; examples that compile
# the example C++ extension cache it in a directory of their own.
doctest_global_setup = """
import os, tempfile
os.environ.setdefault("OPDISPATCH_EXTENSIONS_DIR", os.path.join(tempfile.gettempdir(), "opdispatch-docs-extensions"))
import numpy as np
import opdispatch
"""
# The ">>>" examples of the docstrings the API reference shows run too.
doctest_test_doctest_blocks = "default"
