"""Building C++ code against the installed opdispatch: include and library
paths, the CMake prefix for ``find_package(opdispatch CONFIG)``, and
:func:`load`, which compiles an extension's sources with the system C++
compiler, caches the shared library, and loads it (PyTorch:
torch.utils.cpp_extension.load)."""
from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Sequence, Union

from . import _C

__all__ = [
    "CachedExtension",
    "CompileError",
    "LoadedExtension",
    "cached_extensions",
    "clear_cache",
    "cmake_prefix_path",
    "extensions_dir",
    "include_paths",
    "library_paths",
    "load",
]


def __dir__() -> list[str]:
    return sorted(__all__)

#: Where the build installed the compiled parts (``_C``, ``lib/``,
#: ``include/``, ``share/cmake/``): beside ``_C``, which an editable install
#: (scikit-build-core's redirect mode) keeps in its build directory while the
#: Python files stay in the source tree.
_PACKAGE_DIR = Path(_C.__file__).resolve().parent

StrPath = Union[str, "os.PathLike[str]"]


def include_paths() -> list[str]:
    """Directories to add with ``-I`` (they hold ``opdispatch/library.h`` and friends)."""
    return [str(_PACKAGE_DIR / "include")]


def library_paths() -> list[str]:
    """Directories holding ``libopdispatch.so`` (link with ``-lopdispatch``)."""
    return [str(_PACKAGE_DIR / "lib")]


def cmake_prefix_path() -> str:
    """A directory for ``CMAKE_PREFIX_PATH`` so that ``find_package(opdispatch CONFIG)`` works."""
    return str(_PACKAGE_DIR / "share" / "cmake")


# --- load() -------------------------------------------------------------------------

# Note [Extension cache]
# load() builds into <root>/<name>/<name>-<key>.so where <key> hashes what
# determines the binary: the sources (paths, since __FILE__ is compiled in,
# and contents; sorted by path, and compiled and linked in that order, so
# that the order of the list given, e.g. by glob, does not matter), the headers they include (found from the compiler's -MMD
# dependency output of the previous build, listed in <name>-<base>.deps.json;
# system headers are left out, as with make's -MMD),
# the flags, the compiler (path, size, mtime) and the opdispatch installation
# (the contents of its headers and libopdispatch.so, so a reinstall of the same
# build keeps the cache). A new build deletes the builds of the same name it
# replaces, so old libraries do not pile up. An unchanged call finds the .so and runs
# no compiler; any change gives a new key, hence a new file (so a process
# never dlopens a file that was rewritten under it). Builds happen in a
# private temporary directory and are published with os.replace, which is
# atomic: two processes building the same key both succeed and one file wins.

# -mpopcnt on x86-64, as opdispatch itself is built: the dispatch table lookup
# inlined into typed calls counts bits (Note [Hot dispatch table] in DispatchTable.h).
_BASE_CFLAGS = ("-std=c++17", "-O2", "-fPIC",
                *(("-mpopcnt",) if platform.machine().lower() in ("x86_64", "amd64") else ()))
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class CompileError(RuntimeError):
    """The C++ compiler or linker failed; the message holds the command and its full output.

    Attributes: ``command`` (list of str), ``output`` (str, stdout and stderr).
    """

    def __init__(self, name: str, command: list[str], output: str) -> None:
        self.command = command
        self.output = output
        super().__init__(
            f"building the opdispatch extension {name!r} failed.\n"
            f"command: {shlex.join(command)}\n"
            f"output:\n{output}"
        )


@dataclasses.dataclass(frozen=True)
class LoadedExtension:
    """A loaded extension, as returned by :func:`load`.

    ``name``: the name given to load(); ``path``: the shared library (in the
    cache directory); ``cached``: True if it was found in the cache and no
    compiler ran.
    """

    name: str
    path: Path
    cached: bool


def extensions_dir() -> Path:
    """The cache root: ``$OPDISPATCH_EXTENSIONS_DIR`` if set, else
    ``$XDG_CACHE_HOME/opdispatch/extensions`` (``~/.cache/opdispatch/extensions``)."""
    if os.environ.get("OPDISPATCH_EXTENSIONS_DIR"):
        return Path(os.environ["OPDISPATCH_EXTENSIONS_DIR"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "opdispatch" / "extensions"


def load(
    name: str,
    sources: StrPath | Sequence[StrPath],
    extra_cflags: Iterable[str] = (),
    verbose: bool = False,
    extra_ldflags: Iterable[str] = (),
) -> LoadedExtension:
    """Compiles C++ ``sources`` into a shared library, caches it and loads it
    with ``opdispatch.ops.load_library`` (so its ``OPDISPATCH_LIBRARY`` blocks
    register their operators).

    Args:
        name (str): the extension's name, a C identifier; the cache
            directory is ``<extensions_dir()>/<name>/``.
        sources (path or list of paths): the ``.cpp`` files, in any order
            (the same files in another order hit the same cache entry).
        extra_cflags (iterable of str): more compiler flags (``-DNS=foo``, ``-I...``).
        verbose (bool): print each command and the compiler's output.
        extra_ldflags (iterable of str): more linker flags (``-lfoo``, ``-Wl,...``).

    The compiler is ``$CXX`` (split like a shell would) or ``c++``; sources
    are compiled in parallel with ``-std=c++17 -O2 -fPIC`` (and ``-mpopcnt`` on x86-64) and the opdispatch
    include path, then linked with ``-shared -lopdispatch`` and an RPATH to
    libopdispatch. A call with unchanged inputs is a cache hit and runs no
    compiler (see Note [Extension cache] in this file).

    Returns:
        LoadedExtension: ``name``, ``path`` of the shared library, ``cached``.

    Raises:
        ValueError: ``name`` is not an identifier, or ``sources`` is empty
            or names a file twice.
        TypeError: ``extra_cflags`` or ``extra_ldflags`` is a string, not a list.
        FileNotFoundError: a source file or the compiler does not exist.
        CompileError (a RuntimeError): compiling or linking failed; the
            message holds the command and the compiler's full output.
        RuntimeError: the library loaded but an ``OPDISPATCH_LIBRARY`` block
            failed (e.g. its namespace is already defined in this process).
        OSError: the library could not be loaded.
    """
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise ValueError(f"cpp_extension.load: name must be a C identifier (letters, digits, _), got {name!r}")
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    srcs = sorted(Path(s).resolve() for s in sources)
    if not srcs:
        raise ValueError(f"cpp_extension.load({name!r}): no sources given")
    for a, b in zip(srcs, srcs[1:]):
        if a == b:
            raise ValueError(f"cpp_extension.load({name!r}): source file {a} is given twice; list each file once")
    for s in srcs:
        if not s.is_file():
            raise FileNotFoundError(f"cpp_extension.load({name!r}): source file {s} does not exist")
    for what, flags in (("extra_cflags", extra_cflags), ("extra_ldflags", extra_ldflags)):
        if isinstance(flags, str):
            raise TypeError(f"cpp_extension.load({name!r}): {what} must be a list of flags, not a string")
    cflags = [*_BASE_CFLAGS, *(f"-I{p}" for p in include_paths()), *extra_cflags]
    ldflags = [
        "-shared",
        *(f"-L{p}" for p in library_paths()),
        "-lopdispatch",
        *(f"-Wl,-rpath,{p}" for p in library_paths()),
        *extra_ldflags,
    ]
    compiler = _compiler()

    build_dir = extensions_dir() / name
    build_dir.mkdir(parents=True, exist_ok=True)
    base_key = _digest(
        {
            "sources": [[str(s), _file_digest(s)] for s in srcs],
            "cflags": cflags,
            "ldflags": ldflags,
            "compiler": [compiler, _compiler_fingerprint(compiler[0])],
            "opdispatch": _installation_fingerprint(),
        }
    )
    # The build's variant: everything but the files' contents. A new build of a
    # variant replaces its older builds (Note [Extension cache]).
    variant = _digest({"sources": [str(s) for s in srcs], "cflags": cflags, "ldflags": ldflags, "compiler": compiler})
    deps_file = build_dir / f"{name}-{base_key[:16]}.deps.json"
    cached_path = _cached_library(build_dir, name, base_key, deps_file)
    if cached_path is not None:
        if verbose:
            print(f"[opdispatch.cpp_extension] {name}: using cached {cached_path}", flush=True)
        path, cached = cached_path, True
    else:
        if not verbose:
            print(f"[opdispatch.cpp_extension] {name}: compiling {len(srcs)} source file{'s' * (len(srcs) != 1)} "
                  f"(cached in {build_dir} for the next load)...", file=sys.stderr, flush=True)
        path = _build(name, srcs, compiler, cflags, ldflags, build_dir, base_key, deps_file, variant, verbose)
        cached = False
        _remove_replaced(build_dir, name, variant, keep=deps_file)

    from ._ops import ops

    ops.load_library(path)
    return LoadedExtension(name=name, path=path, cached=cached)


def _compiler() -> list[str]:
    """The compiler command: ``$CXX`` split like a shell would, else ``c++``; the program resolved on PATH."""
    cmd = shlex.split(os.environ.get("CXX", "")) or ["c++"]
    found = shutil.which(cmd[0])
    if found is None:
        raise FileNotFoundError(
            f"cpp_extension.load: C++ compiler {cmd[0]!r} not found; install one (e.g. g++) or set CXX"
        )
    return [found, *cmd[1:]]


def _digest(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _compiler_fingerprint(program: str) -> list[int]:
    st = os.stat(os.path.realpath(program))
    return [st.st_size, st.st_mtime_ns]


@functools.cache
def _installation_fingerprint() -> str:
    """A digest of the installed headers and libopdispatch.so (computed once per process)."""
    h = hashlib.sha256()
    for root in include_paths():
        for p in sorted(Path(root).rglob("*")):
            if p.is_file():
                h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    for root in library_paths():
        for p in sorted(Path(root).glob("libopdispatch*")):
            # Contents, not times: a reinstall of the same build keeps the cache.
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _full_key(base_key: str, headers: list[str]) -> str | None:
    """The cache key from the base key and the current contents of `headers` (None if one is gone)."""
    h = hashlib.sha256(base_key.encode())
    for dep in headers:
        try:
            h.update(dep.encode() + b"\0" + Path(dep).read_bytes() + b"\0")
        except OSError:
            return None
    return h.hexdigest()[:16]


def _cached_library(build_dir: Path, name: str, base_key: str, deps_file: Path) -> Path | None:
    try:
        headers = json.loads(deps_file.read_text())["headers"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    key = _full_key(base_key, headers)
    if key is None:
        return None
    path = build_dir / f"{name}-{key}.so"
    return path if path.is_file() else None


def _remove_replaced(build_dir: Path, name: str, variant: str, keep: Path) -> None:
    """Deletes the older builds of ``variant`` of extension ``name`` (their
    libraries and dependency lists), all but the one ``keep`` lists: what a
    new build of changed sources replaced. Builds of other variants (other
    flags, say) stay. A process that loaded a deleted library keeps its
    mapping (on Linux the file goes when the last mapping does)."""
    for deps in build_dir.glob(f"{name}-*.deps.json"):
        try:
            entry = json.loads(deps.read_text())
        except (OSError, ValueError):
            continue
        if deps != keep and isinstance(entry, dict) and entry.get("variant") == variant:
            for library in _libraries_listed(deps):
                (build_dir / library).unlink(missing_ok=True)
            deps.unlink(missing_ok=True)


def _libraries_listed(deps: Path) -> set[str]:
    """The library file names the dependency list ``deps`` records (none if it is missing or unreadable)."""
    try:
        libraries = json.loads(deps.read_text()).get("libraries", [])
    except (OSError, ValueError, AttributeError):
        return set()
    return {Path(str(library)).name for library in libraries}


@dataclasses.dataclass(frozen=True)
class CachedExtension:
    """One entry of the extension cache: ``name``, the shared ``libraries``
    built for it (paths) and their total ``size`` in bytes."""

    name: str
    libraries: tuple[Path, ...]
    size: int


def cached_extensions() -> list[CachedExtension]:
    """The extensions in the cache (:func:`extensions_dir`), by name: what
    ``python -m opdispatch cache list`` shows."""
    root = extensions_dir()
    out = []
    for folder in sorted(p for p in root.glob("*") if p.is_dir()) if root.is_dir() else []:
        libraries = tuple(sorted(folder.glob(f"{folder.name}-*.so")))
        size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
        out.append(CachedExtension(folder.name, libraries, size))
    return out


def clear_cache(name: str | None = None) -> list[Path]:
    """Deletes the cached builds of extension ``name`` (every extension's if
    None); returns the folders removed. The next :func:`load` compiles again.
    Raises ValueError if ``name`` is given and not in the cache."""
    root = extensions_dir()
    folders = [root / name] if name is not None else [p for p in root.glob("*") if p.is_dir()] if root.is_dir() else []
    if name is not None and not folders[0].is_dir():
        known = ", ".join(e.name for e in cached_extensions()) or "none"
        raise ValueError(f"no extension {name!r} in the cache {root} (cached: {known})")
    for folder in folders:
        shutil.rmtree(folder)
    return folders


def _run(name: str, cmd: list[str], verbose: bool) -> str:
    if verbose:
        print(f"[opdispatch.cpp_extension] {shlex.join(cmd)}", flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    if verbose and proc.stdout:
        print(proc.stdout, end="" if proc.stdout.endswith("\n") else "\n", flush=True)
    if proc.returncode != 0:
        raise CompileError(name, cmd, proc.stdout)
    return proc.stdout


def _parse_depfile(text: str) -> list[str]:
    """The prerequisites of a Makefile rule written by ``-MMD -MF`` (the source first)."""
    text = text.replace("\\\n", " ")
    _, _, prereqs = text.partition(": ")
    out = []
    for tok in re.findall(r"(?:\\.|[^\s\\])+", prereqs):
        out.append(re.sub(r"\\(.)", r"\1", tok).replace("$$", "$"))
    return out


def _build(
    name: str,
    srcs: list[Path],
    compiler: list[str],
    cflags: list[str],
    ldflags: list[str],
    build_dir: Path,
    base_key: str,
    deps_file: Path,
    variant: str,
    verbose: bool,
) -> Path:
    with tempfile.TemporaryDirectory(prefix=f".{name}-build-", dir=build_dir) as tmp:
        tmp_dir = Path(tmp)
        jobs = []
        for i, src in enumerate(srcs):
            obj = tmp_dir / f"{i}-{src.stem}.o"
            dep = tmp_dir / f"{i}-{src.stem}.d"
            jobs.append((obj, dep, [*compiler, *cflags, "-MMD", "-MF", str(dep), "-c", str(src), "-o", str(obj)]))
        workers = max(1, min(len(jobs), os.cpu_count() or 1))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            futures = [pool.submit(_run, name, cmd, verbose) for _, _, cmd in jobs]
            errors = [e for e in (f.exception() for f in futures) if e is not None]
        if errors:
            compile_errors = [e for e in errors if isinstance(e, CompileError)]
            if len(errors) > 1 and len(compile_errors) == len(errors):
                output = "\n".join(f"$ {shlex.join(e.command)}\n{e.output}" for e in compile_errors)
                raise CompileError(name, compile_errors[0].command, output)
            raise errors[0]

        # The sources and opdispatch's own headers are in the base key already.
        known = {str(s) for s in srcs}
        installed = tuple(str(Path(p).resolve()) + os.sep for p in include_paths())
        headers: set[str] = set()
        for _, dep, _ in jobs:
            for p in _parse_depfile(dep.read_text()):
                resolved = str(Path(p).resolve())
                if resolved not in known and not resolved.startswith(installed):
                    headers.add(resolved)
        header_list = sorted(headers)

        tmp_so = tmp_dir / f"{name}.so"
        _run(name, [*compiler, *(str(o) for o, _, _ in jobs), "-o", str(tmp_so), *ldflags], verbose)
        key = _full_key(base_key, header_list)
        if key is None:
            raise RuntimeError(f"cpp_extension.load({name!r}): a header vanished during the build; retry")
        path = build_dir / f"{name}-{key}.so"
        os.replace(tmp_so, path)
        tmp_deps = tmp_dir / "deps.json"
        tmp_deps.write_text(json.dumps({"headers": header_list, "variant": variant, "libraries": [path.name]}))
        replaced = _libraries_listed(deps_file)  # the same inputs with headers since changed
        os.replace(tmp_deps, deps_file)
        for library in replaced - {path.name}:
            (build_dir / library).unlink(missing_ok=True)
    if verbose:
        print(f"[opdispatch.cpp_extension] {name}: built {path}", flush=True)
    return path
