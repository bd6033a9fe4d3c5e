"""Regression tests for issue 29's crashes of the Python key: ordinary-looking
Python (walking the collector's objects, a ``__index__`` or a handler that
destroys the running operator's library, long chains of subclass objects)
must end in a result or a clean error, never a crash.

Each program runs in its own interpreter, so that a crash fails its test
(with the signal in the message) instead of ending the run.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

MODE = """
import gc
import opdispatch as od
from opdispatch.utils._python_dispatch import TorchDispatchMode

class Passthrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
"""


def run(program: str) -> str:
    """Runs ``program`` in a new interpreter; returns its stdout. Fails the test on a crash or an error."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(program)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_collector_never_finds_a_reused_handler_argument():
    # Before the fix: the spare args tuple (items null) was tracked, and reading its items crashed (SIGSEGV).
    out = run(MODE + """
x = od.ones(3)
with Passthrough():
    x + x
    x.sin()
    od.ops.od.add.Tensor(x, x, alpha=2)
seen = 0
for o in gc.get_objects():
    if type(o) in (tuple, dict):
        for item in o:
            type(item)
        seen += 1
print("tuples and dicts read:", seen > 0)
""")
    assert out == "tuples and dicts read: True\n"


def test_a_finalizer_walking_the_collector_while_handler_arguments_go():
    # Dropping a handler's arguments may run a __del__; it must not find the tuple being cleared.
    out = run(MODE + """
class Walker(od.Tensor):
    pass

found = []

class Finalized:
    def __del__(self):
        for o in gc.get_objects():
            if type(o) is tuple:
                for item in o:
                    type(item)
        found.append(True)

class Keeps(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

x = od.ones(2)
x.payload = Finalized()
with Keeps():
    y = x + 1
del x
print(len(found))
""")
    assert out == "1\n"


def test_reused_arguments_still_reach_later_handlers_intact():
    # After the collector ran between calls, the next call's handler gets a whole args tuple, and a handler that
    # keeps its arguments keeps them unchanged.
    out = run(MODE + """
kept = []

class Keeps(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kept.append((args, kwargs))
        return func(*args, **(kwargs or {}))

x = od.ones(2)
with Passthrough():
    x + x
gc.collect()
with Keeps():
    x * 2
    gc.collect()
    x - x
print([(len(a), sorted(k)) for a, k in kept], all(a[0] is x for a, _ in kept))
""")
    assert out == "[(2, []), (2, [])] True\n"


def test_an_argument_that_destroys_the_library_during_a_packet_call():
    # Before the fix: the packet's overload tuple, borrowed while the arguments bound, was freed by __index__ and
    # the call went on with a dangling operator handle (SIGSEGV). Now it ends as the OpOverload call does.
    out = run("""
import opdispatch as od
from opdispatch import library
lib = library.Library("rel_packet", "DEF")
lib.define("f(Tensor x, int n) -> Tensor")
lib.define("f.other(Tensor x, str n) -> Tensor")
lib.impl("f", lambda x, n: x * n, "CPU")

class DestroysTheLibrary:
    def __index__(self):
        lib._destroy()
        return 2

try:
    od.ops.rel_packet.f(od.ones(2), DestroysTheLibrary())
except NotImplementedError as e:
    print("NotImplementedError", "rel_packet::f" in str(e))
""")
    assert out == "NotImplementedError True\n"


def test_a_mode_that_destroys_the_running_operator_then_calls_through_the_python_key():
    # Before the fix: the OpOverload handed to the handlers was borrowed from a cache that the nested Python-key
    # call cleared, so the subclass handler after the mode received a freed `func` (SIGSEGV).
    out = run(MODE + """
from opdispatch import _C, library
lib = library.Library("rel_mode", "DEF")
lib.define("f(Tensor x) -> Tensor")
lib.impl("f", lambda x: x * 2, "CPU")
op = _C._DispatchOperator("rel_mode::f", "")  # holds the operator, not its OpOverload

class Wrapper(od.Tensor):
    @staticmethod
    def __new__(cls, elem):
        return od.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)

    def __init__(self, elem):
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        seen.append(str(func))
        return args[0].elem

class DestroysTheLibrary(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        global lib
        if lib is None:
            return func(*args, **(kwargs or {}))
        lib._destroy()
        lib = None
        del func
        gc.collect()
        inner.sin()
        return NotImplemented

seen = []
w = Wrapper(od.ones(2))
inner = Wrapper(od.ones(2))
with DestroysTheLibrary():
    result = op(w)
print(seen, result.tolist())
""")
    assert out == "['od.sin.default', 'rel_mode.f.default'] [1.0, 1.0]\n"


@pytest.mark.parametrize("make", ["_make_subclass", "_make_wrapper_subclass"])
def test_freeing_a_long_chain_of_subclass_objects(make):
    # Before the fix the preserving tp_dealloc slot bypassed CPython's trashcan, and freeing ~60k links
    # overflowed the C stack (SIGSEGV). PyTorch frees 1M links; 300k (five times the depth that crashed) run here.
    out = run(f"""
import opdispatch as od

class Node(od.Tensor):
    @staticmethod
    def __new__(cls, elem):
        if "{make}" == "_make_wrapper_subclass":
            return od.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
        return od.Tensor._make_subclass(cls, elem)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return NotImplemented

head = None
for _ in range(300_000):
    node = Node(od.ones(1))
    node.next = head
    head = node
del node
head = None
print("freed")
""")
    assert out == "freed\n"


UNLOADABLE_EXTENSION = r"""
#include <opdispatch/library.h>

#include <memory>
#include <string>

namespace {
// A kernel with state: its destructor is code of this module.
struct Tagged {
  std::shared_ptr<std::string> tag = std::make_shared<std::string>("kernel state");
  opdispatch::Tensor operator()(const opdispatch::Tensor& x) const { return x; }
};
} // namespace

OPDISPATCH_LIBRARY(rel_unload, m) {
  m.def("ident(Tensor x) -> Tensor");
  m.impl("ident", opdispatch::kCPU, Tagged{});
}
"""

# The same operator through the older API: RegisterOperators owns its registrations (a kernel wrapping a function
# pointer, whose destructor is code of this module) and must drain the Reclaimer on unload as a library block does.
UNLOADABLE_REGISTER_OPERATORS = r"""
#include <opdispatch/library.h>

static opdispatch::Tensor ident(opdispatch::Tensor x) { return x; }

static auto registry = opdispatch::RegisterOperators().op("rel_unload::ident", &ident);
"""


@pytest.mark.parametrize("extension", [UNLOADABLE_EXTENSION, UNLOADABLE_REGISTER_OPERATORS],
                         ids=["library_block", "register_operators"])
def test_unloading_an_extension_then_churning_the_registry(tmp_path, extension):
    # Item 6: before the fix, dlclose unmapped the module while its retired kernel waited in the Reclaimer, and the
    # next reclamation ran the kernel's destructor there (SIGSEGV). PyTorch 2.13 survives the same sequence.
    source = tmp_path / "rel_unload.cpp"
    source.write_text(extension)
    out = run(f"""
import _ctypes, ctypes, os
os.environ["OPDISPATCH_EXTENSIONS_DIR"] = {str(tmp_path / "cache")!r}
import opdispatch as od
from opdispatch import cpp_extension
from opdispatch.library import Library

# -fno-gnu-unique: a module GCC would otherwise mark as never unloadable.
ext = cpp_extension.load("rel_unload", [{str(source)!r}], extra_cflags=["-fno-gnu-unique"])
x = od.ones(2)
print(od.ops.rel_unload.ident(x).tolist())
handle = ctypes.CDLL(ext.path)._handle
_ctypes.dlclose(handle)  # (this load's reference)
_ctypes.dlclose(handle)  # (load_library's: the module is unmapped now)
print(str(ext.path) in open("/proc/self/maps").read())
try:
    od.ops.rel_unload.ident(x)
except RuntimeError as e:
    print("RuntimeError")
for i in range(200):  # registry churn: each destroy retires kernels and reclaims
    lib = Library(f"rel_churn{{i}}", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda t: t, "CPU")
    lib._destroy()
print("survived")
""")
    assert out == "[1.0, 1.0]\nFalse\nRuntimeError\nsurvived\n"
