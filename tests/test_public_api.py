"""dir() of each public module lists its public API (``__all__``, lazily
loaded names included) and nothing else: no helper imports."""
from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import types

import pytest

PUBLIC_MODULES = [
    "opdispatch",
    "opdispatch.library",
    "opdispatch.autograd",
    "opdispatch.cpp_extension",
    "opdispatch.testing",
    "opdispatch.types",
    "opdispatch.nn",
    "opdispatch.nn.functional",
]
#: Names that must be in dir() of a module, some of them loaded on first use.
EXPECTED = {
    "opdispatch": {"Tensor", "ops", "library", "autograd", "tensor", "randn", "from_numpy", "float32", "explain",
                   "cpp_extension", "types", "testing", "Tag", "nn"},
    "opdispatch.library": {"Library", "define", "impl", "custom_op", "CustomOpDef", "infer_schema", "register_fake",
                           "register_autograd", "register_kernel", "opcheck", "get_ctx", "fallthrough_kernel"},
    "opdispatch.autograd": {"backward", "grad", "no_grad", "enable_grad", "gradcheck", "Node"},
    "opdispatch.cpp_extension": {"load", "include_paths", "library_paths", "cmake_prefix_path", "CompileError"},
    "opdispatch.testing": {"assert_close"},
    "opdispatch.types": {"Number"},
    "opdispatch.nn": {"functional"},
    "opdispatch.nn.functional": {"conv2d", "linear", "relu", "max_pool2d", "batch_norm", "layer_norm", "dropout",
                                 "cross_entropy", "pad", "softmax", "log_softmax"},
}
#: Helper imports of these modules that must not show.
STRAY = {"Any", "Optional", "Union", "Callable", "re", "sys", "os", "warnings", "np", "numpy", "_C", "annotations",
         "importlib", "functools", "dataclasses", "Path", "weakref", "contextlib"}


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_dir_is_the_public_api(name):
    module = importlib.import_module(name)
    listed = dir(module)
    assert listed == sorted(set(module.__all__)), "dir() and __all__ differ (or __all__ repeats a name)"
    assert EXPECTED[name] <= set(listed)
    assert not STRAY & set(listed), STRAY & set(listed)
    for attr in listed:
        value = getattr(module, attr)  # every listed name resolves, lazily loaded ones too
        if isinstance(value, types.ModuleType):
            assert value.__name__.startswith("opdispatch."), attr
        elif inspect.isfunction(value) or inspect.isclass(value):
            assert value.__module__.startswith("opdispatch"), (attr, value.__module__)  # not a re-exported helper


def test_lazy_names_are_listed_before_they_are_loaded():
    code = (
        "import sys, opdispatch, opdispatch.library as L\n"
        "assert 'opdispatch._library.custom_ops' not in sys.modules\n"
        "assert 'opdispatch._explain' not in sys.modules and 'opdispatch.cpp_extension' not in sys.modules\n"
        "assert {'custom_op', 'CustomOpDef', 'infer_schema'} <= set(dir(L))\n"
        "assert {'explain', 'cpp_extension'} <= set(dir(opdispatch))\n"
        "assert 'opdispatch._library.custom_ops' not in sys.modules  # dir() loads nothing\n"
        "assert callable(opdispatch.explain) and opdispatch.cpp_extension.load\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_modules_the_built_in_operators_do_not_need_load_on_first_use():
    # `import opdispatch` leaves out what only some programs use (benchmarks/import_time.py);
    # every name still resolves, and to the same object however it is reached.
    lazy = ("opdispatch.testing", "opdispatch.autograd.function", "opdispatch.utils._pytree")
    statements = [
        "import sys, opdispatch",
        f"assert not [m for m in {lazy!r} if m in sys.modules], [m for m in {lazy!r} if m in sys.modules]",
        "from opdispatch.autograd import Function, once_differentiable",
        "import opdispatch.autograd.function as F",
        "assert Function is F.Function and opdispatch.autograd.FunctionCtx is F.FunctionCtx",
        "assert opdispatch.autograd.function is F and once_differentiable is F.once_differentiable",
        "assert callable(opdispatch.autograd.gradcheck) and callable(opdispatch.testing.assert_close)",
        "from opdispatch.testing import assert_close",
        "assert assert_close is opdispatch.testing.assert_close",
    ]
    r = subprocess.run([sys.executable, "-c", "\n".join(statements)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_exit_with_live_registrations_is_clean():
    # The od library is not torn down at exit (see LIB in opdispatch/_builtins/_registry.py), nor are a
    # custom op and a Library still alive: the interpreter's teardown releases their kernels.
    code = (
        "import opdispatch, numpy as np\n"
        "from opdispatch.library import Library, custom_op\n"
        "lib = Library('exit_check', 'DEF')\n"
        "lib.define('f(Tensor x) -> Tensor')\n"
        "lib.impl('f', lambda x: x.clone(), 'CPU')\n"
        "@custom_op('exit_check2::g', mutates_args=())\n"
        "def g(x: opdispatch.Tensor) -> opdispatch.Tensor:\n"
        "    return opdispatch.from_numpy(np.sin(x.numpy()))\n"
        "x = opdispatch.ones(3, requires_grad=True)\n"
        "(x * 2).sum().backward()\n"
        "y = g(x)\n"
        "print(opdispatch.ops.exit_check.f(x.detach()).sum().item(), y.requires_grad)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (0, "3.0 True\n", "")


def test_private_modules_real_code_reaches_through_the_package():
    # torchao calls torch._custom_ops.get_ctx() after a bare `import torch`: PyTorch imports it eagerly.
    code = "import opdispatch\nassert opdispatch._custom_ops.__name__ == 'opdispatch._custom_ops' and callable(opdispatch._custom_ops.get_ctx)\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_unknown_attributes_raise_attribute_error():
    import opdispatch
    import opdispatch.library

    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        opdispatch.no_such_name  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        opdispatch.library.no_such_name  # noqa: B018
