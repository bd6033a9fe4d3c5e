"""Fake tensors: tensors with a device, shape, dtype and strides but no data,
and the dispatch mode that runs operators on them with their fake impls or
Meta kernels. PyTorch: torch/_subclasses/fake_tensor.py.

    with FakeTensorMode() as mode:
        x = mode.from_tensor(opdispatch.randn(8, 3))   # a FakeTensor on cpu
        y = model(x)                                     # shapes flow, nothing is computed
        z = opdispatch.zeros(4)                          # factories make fakes too
"""
from __future__ import annotations

import contextlib
import weakref
from typing import Any, Iterator, Optional

from .. import _C
from .._ops import OpOverload
from .._tensor import Tensor
from .._library.utils import can_generate_trivial_fake_impl, generate_trivial_fake_impl, has_tensor_arg
from ..utils._python_dispatch import TorchDispatchMode
from ..utils._pytree import tree_flatten, tree_map_only, tree_unflatten
from .symbolic_shapes import ShapeEnv

#: The operators through which a new real tensor enters a mode (opdispatch.tensor's od::lift_fresh, and what
#: make_fx records for it): FakeTensorMode makes their real argument fake.
_LIFT_FNS = frozenset({"od::lift_fresh", "od::lift_fresh_copy"})

__all__ = ["FakeTensor", "FakeTensorConverter", "FakeTensorMode", "MetadataMismatchError",
           "UnsupportedFakeTensorException", "in_kernel_invocation_manager", "is_fake", "maybe_get_fake_mode"]

# Note [Fake tensors]
# A FakeTensor is a wrapper subclass (_make_wrapper_subclass: no storage) on
# the device it pretends to be on, so its dispatch key set has that device's
# backend key and the Python keys; it keeps a meta twin (``_meta``) with the
# same sizes, strides and offset, and shares the twin's version counter, so
# views and in-place updates alias as the twin's do. FakeTensorMode is an
# infrastructure mode (the FAKE slot, below user modes). For a call it
#  1. returns NotImplemented if an argument is a tensor subclass it does not
#     know (that subclass handles the call first, as in PyTorch);
#  2. runs the operator's fake impl (register_fake, custom_op) on the fakes
#     themselves, with the mode active again so that the tensors the impl
#     creates are fakes, and new_dynamic_size() gives symbols;
#  3. for an operator with no fake impl and no Meta kernel whose fake impl
#     is obvious (can_generate_trivial_fake_impl: mutable with no returns,
#     or tagged out / inplace), returns that impl's result, as PyTorch does;
#  4. otherwise runs the operator on the meta twins (its Meta kernel, a
#     CompositeExplicitAutograd kernel, or a decomposition), with a `device`
#     argument replaced by meta, and wraps each output in a FakeTensor on the
#     output device: the `device` argument if given, else the inputs'
#     common device (cpu for a factory). An output that is an input's twin
#     comes back as that input (in-place ops return self).
# Real tensors among the arguments are an error unless the mode was made
# with allow_non_fake_inputs=True (then they are converted, as constants).
# Sizes from new_dynamic_size() are SymInts (Note [Symbolic sizes]).


class UnsupportedFakeTensorException(RuntimeError):
    """An operator cannot run on fake tensors: it has no fake impl and no
    kernel for meta tensors. PyTorch: same name."""


class MetadataMismatchError(RuntimeError):
    """A fake tensor's metadata (sizes, strides, storage offset, dtype,
    requires_grad) disagrees with the real tensor it stands for: raised by
    checks that run an operator both ways (a cross-checking mode). PyTorch: same name."""

    reason: str


def _symbolic(shape_env: ShapeEnv, values: tuple[int, ...]) -> tuple[Any, ...]:
    return tuple(shape_env.symbolize(v) for v in values)


class FakeTensor(Tensor):
    """A tensor with metadata and no data, made by a :class:`FakeTensorMode`
    (``mode.from_tensor(t)``, or any operator called in the mode). Reports the
    device, shape, dtype, strides and requires_grad it was given; its data
    cannot be read (``numpy()``, ``tolist()``, ``item()`` raise). Operators on
    it run through its mode, even outside ``with mode:``. A data-dependent
    dimension is a :class:`~opdispatch._subclasses.symbolic_shapes.SymInt`.
    PyTorch: torch._subclasses.fake_tensor.FakeTensor."""

    fake_mode: FakeTensorMode
    _meta: Tensor
    # The real tensor behind the fake: always None (PyTorch sets it only under
    # propagate_real_tensors, which opdispatch has not).
    real_tensor: Optional[Tensor] = None

    @staticmethod
    def __new__(cls, fake_mode: FakeTensorMode, meta: Tensor, device: Any) -> FakeTensor:
        r = Tensor._make_wrapper_subclass(cls, meta.shape, strides=meta.stride(),
                                          storage_offset=meta.storage_offset(), dtype=meta.dtype, device=device,
                                          requires_grad=meta.requires_grad)
        _C._set_version_counter_of(r, meta)
        r.fake_mode = fake_mode
        r._meta = meta
        return r

    def __init__(self, *args: Any) -> None:
        pass

    @property
    def fake_device(self) -> Any:
        """The device this tensor pretends to be on (PyTorch: same name)."""
        return self.device

    @property
    def shape(self) -> tuple[Any, ...]:
        """The sizes; a data-dependent one is a SymInt."""
        return _symbolic(self.fake_mode.shape_env, Tensor.shape.__get__(self))

    def size(self, dim: Optional[int] = None) -> Any:  # type: ignore[override]
        """The sizes (a tuple), or size ``dim`` (an int); data-dependent ones are SymInts."""
        shape = self.shape
        return shape if dim is None else shape[dim]

    def stride(self, dim: Optional[int] = None) -> Any:  # type: ignore[override]
        """The strides (a tuple), or stride ``dim`` (an int), in elements; possibly SymInts."""
        strides = _symbolic(self.fake_mode.shape_env, Tensor.stride(self))
        return strides if dim is None else strides[dim]

    def numel(self) -> Any:
        """The number of elements (a SymInt if a size is data-dependent)."""
        return self.fake_mode.shape_env.symbolize(Tensor.numel(self))

    def _no_data(self, what: str) -> RuntimeError:
        return RuntimeError(f"{what}: this FakeTensor has no data (it carries only device, shape, dtype and "
                            f"strides; operators on it compute metadata). Run the computation on real tensors "
                            f"to get values.")

    def numpy(self, *, force: bool = False) -> Any:
        """Raises RuntimeError: a fake tensor has no data."""
        raise self._no_data("numpy()")

    def tolist(self) -> Any:
        """Raises RuntimeError: a fake tensor has no data."""
        raise self._no_data("tolist()")

    def item(self) -> Any:
        """Raises RuntimeError: a fake tensor has no data."""
        raise self._no_data("item()")

    # (mypy erases the names of a dunder method's keyword-only arguments and then finds the two signatures unequal)
    def __repr__(self, *, tensor_contents: Optional[str] = None) -> str:  # type: ignore[override]
        size = ", ".join(str(s) for s in self.shape)
        size = f"({size},)" if len(self.shape) == 1 else f"({size})"
        grad = ", requires_grad=True" if self.requires_grad and self.grad_fn is None else ""
        contents = "..." if tensor_contents is None else tensor_contents
        return f"FakeTensor({contents}, device='{self.device}', size={size}, dtype={self.dtype!r}{grad})"

    @classmethod
    def __torch_dispatch__(cls, func: OpOverload, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: Optional[dict[str, Any]] = None) -> Any:
        """A call on fake tensors outside their mode: runs it in their mode."""
        modes = {id(t.fake_mode): t.fake_mode for t in _tensors((args, kwargs)) if isinstance(t, FakeTensor)}
        if len(modes) != 1:
            raise RuntimeError(f"{func}: fake tensors of {len(modes)} different FakeTensorModes were mixed in one "
                               f"call; use one mode for all of them")
        (mode,) = modes.values()
        with mode:
            return func(*args, **(kwargs or {}))


def _tensors(tree: Any) -> list[Any]:
    return [x for x in tree_flatten(tree)[0] if isinstance(x, Tensor)]


class FakeTensorConverter:
    """Makes and remembers the fakes of real tensors (a mode's
    ``fake_tensor_converter``): one FakeTensor per real tensor and mode,
    forgotten when the real tensor dies. PyTorch: FakeTensorConverter."""

    def __init__(self) -> None:
        # (id(mode), id(real)) -> (weak reference to the real tensor, its fake)
        self.tensor_memo: dict[tuple[int, int], tuple[weakref.ref[Any], FakeTensor]] = {}

    def from_real_tensor(self, fake_mode: FakeTensorMode, t: Tensor, make_constant: bool = False,
                         shape_env: Optional[ShapeEnv] = None, *, source: Any = None, symbolic_context: Any = None,
                         trace: bool = True) -> FakeTensor:
        """The fake of ``t`` in ``fake_mode`` (see :meth:`FakeTensorMode.from_tensor`);
        ``make_constant``, ``shape_env``, ``source`` and ``trace`` are accepted
        for PyTorch's signature (no symbolic input sizes, no constant
        propagation). Raises TypeError for a non-tensor, RuntimeError for a
        fake of another mode. PyTorch: FakeTensorConverter.from_real_tensor."""
        if isinstance(t, FakeTensor):
            if t.fake_mode is not fake_mode:
                raise RuntimeError("from_tensor: this FakeTensor belongs to another FakeTensorMode")
            return t
        if not isinstance(t, Tensor):
            raise TypeError(f"from_tensor expects a tensor, got {type(t).__name__}")
        key = (id(fake_mode), id(t))
        hit = self.tensor_memo.get(key)
        if hit is not None and hit[0]() is t:
            return hit[1]
        meta = _C.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")
        if t.storage_offset():
            meta = _C._as_strided(meta, t.shape, t.stride(), t.storage_offset())
        if t.requires_grad:
            meta.requires_grad_(True)
        fake = FakeTensor(fake_mode, meta, t.device)
        memo = self.tensor_memo
        memo[key] = (weakref.ref(t, lambda _: memo.pop(key, None)), fake)
        return fake


def is_fake(x: object) -> bool:
    """Whether ``x`` is a FakeTensor, or a traceable wrapper subclass
    (``__tensor_flatten__``) whose inner tensors are fakes. Raises
    RuntimeError if its inner tensors mix fakes and real tensors.
    PyTorch: torch._subclasses.fake_tensor.is_fake."""
    if isinstance(x, FakeTensor):
        return True
    inner = _inner_tensors(x)
    fakes = {is_fake(t) for t in inner}
    if len(fakes) > 1:
        raise RuntimeError(f"is_fake: {type(x).__name__} holds both fake and real tensors")
    return fakes == {True}


def maybe_get_fake_mode(t: object) -> Optional[FakeTensorMode]:
    """The FakeTensorMode of ``t`` (a FakeTensor, or a traceable wrapper
    subclass of fakes), else None. Raises RuntimeError if the inner tensors
    belong to different modes. PyTorch: torch._subclasses.fake_tensor.maybe_get_fake_mode."""
    if isinstance(t, FakeTensor):
        return t.fake_mode
    modes = {id(m): m for m in (maybe_get_fake_mode(x) for x in _inner_tensors(t))}
    if len(modes) > 1:
        raise RuntimeError(f"maybe_get_fake_mode: {type(t).__name__} holds fakes of different FakeTensorModes")
    return next(iter(modes.values()), None)


def _inner_tensors(x: object) -> list[Any]:
    """The inner tensors of a traceable wrapper subclass (``__tensor_flatten__``), else []."""
    if not isinstance(x, Tensor) or not hasattr(type(x), "__tensor_flatten__"):
        return []
    names, _ = x.__tensor_flatten__()  # type: ignore[attr-defined]
    return [getattr(x, n) for n in names if isinstance(getattr(x, n), Tensor)]


@contextlib.contextmanager
def in_kernel_invocation_manager(fake_mode: FakeTensorMode) -> Iterator[None]:
    """For the block: calls reach no dispatch mode and no ``__torch_dispatch__``
    (``_DisableTorchDispatch``), and ``fake_mode.in_kernel_invocation`` is
    True, as while a kernel of ``fake_mode`` runs. Real modes use it to read a
    fake's metadata without re-entering the mode. PyTorch also puts Meta in
    the thread's key set there, so operators on fakes run their meta kernels;
    opdispatch does not: run operators on a fake's meta twin instead.
    PyTorch: torch._subclasses.fake_tensor.in_kernel_invocation_manager."""
    previous = fake_mode.in_kernel_invocation
    with _C._DisableTorchDispatch():
        fake_mode.in_kernel_invocation = True
        try:
            yield
        finally:
            fake_mode.in_kernel_invocation = previous


class FakeTensorMode(TorchDispatchMode):
    """``with FakeTensorMode() as mode:`` runs every operator on fake tensors:
    outputs get their shapes, dtypes, devices and strides from the operator's
    fake impl or Meta kernel, and no kernel touches data (Note [Fake tensors]).

    Args:
        allow_non_fake_inputs: convert real tensors passed to operators in the
            mode into fakes (else RuntimeError).
        shape_env: the ShapeEnv for data-dependent sizes (a new one if None).

    PyTorch: torch._subclasses.fake_tensor.FakeTensorMode.
    """

    def __init__(self, *, allow_non_fake_inputs: bool = False, shape_env: Optional[ShapeEnv] = None) -> None:
        super().__init__()
        self._mode_key = _C._TorchDispatchModeKey.FAKE
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.shape_env = ShapeEnv() if shape_env is None else shape_env
        self.fake_tensor_converter = FakeTensorConverter()
        self.in_kernel_invocation = False

    @classmethod
    def is_infra_mode(cls) -> bool:
        return True

    def __enter__(self) -> FakeTensorMode:
        # The FAKE slot holds one mode: entering replaces the active one until exit (re-entering the active
        # mode changes nothing). PyTorch: FakeTensorMode.__enter__ / __exit__. An exception at any point
        # (a KeyboardInterrupt) undoes what was done; TorchDispatchMode.__exit__, in C, gives the slot back
        # to the displaced mode (Note [Entering and leaving a mode]).
        key = self._mode_key
        previous = _C._get_dispatch_mode(key)
        if previous is self:
            return self._enter_again()
        try:
            if previous is not None:
                _C._unset_dispatch_mode(key)
            return self._enter_mode(previous)
        except BaseException:
            if previous is not None and _C._get_dispatch_mode(key) is None:
                _C._set_dispatch_mode(previous)
            raise

    def from_tensor(self, t: Tensor, *, static_shapes: Optional[bool] = None, source: Any = None,
                    symbolic_context: Any = None, trace: bool = True) -> FakeTensor:
        """The fake of ``t``: same device, sizes, strides, offset, dtype and
        requires_grad (the same FakeTensor each time for the same ``t``).
        A FakeTensor of this mode is returned as it is.

        ``static_shapes``, ``source`` and ``trace`` are accepted for
        PyTorch's signature: every input size is static in opdispatch (only
        data-dependent sizes are symbols), whatever they say.

        Raises TypeError for a non-tensor, RuntimeError for another mode's
        fake, NotImplementedError for a ``symbolic_context`` (no symbolic
        input sizes). PyTorch: FakeTensorMode.from_tensor."""
        if symbolic_context is not None:
            raise NotImplementedError("from_tensor(symbolic_context=...): opdispatch has no symbolic input sizes; "
                                      "omit it (every input size is static)")
        return self.fake_tensor_converter.from_real_tensor(self, t)

    def __torch_dispatch__(self, func: OpOverload, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: Optional[dict[str, Any]] = None) -> Any:
        """Runs ``func`` on fake tensors (Note [Fake tensors]): its fake impl,
        the trivial fake impl, or its Meta kernel on the meta twins; returns
        NotImplemented if another tensor subclass is among ``types``. Raises
        RuntimeError for real tensors (unless ``allow_non_fake_inputs``) or
        fakes of another mode, and UnsupportedFakeTensorException for an
        operator with no fake impl and no Meta kernel.
        PyTorch: FakeTensorMode.__torch_dispatch__ (dispatch)."""
        kwargs = kwargs or {}
        if not isinstance(func, OpOverload):  # a higher-order operator with a fake function (register_fake)
            from .._higher_order_ops.utils import registered_hop_fake_fns

            fake_fn = registered_hop_fake_fns.get(func)
            if fake_fn is None:
                raise UnsupportedFakeTensorException(f"{func}: the higher-order operator has no fake function; "
                                                     f"register one with _higher_order_ops.utils.register_fake")
            with self:
                return fake_fn(*args, **kwargs)
        if any(not issubclass(t, FakeTensor) for t in types):
            return NotImplemented
        if func.name() in _LIFT_FNS and not isinstance(args[0], FakeTensor):
            # A constant made inside the mode (opdispatch.tensor passes it through od::lift_fresh): it becomes
            # a fake, whatever allow_non_fake_inputs says. PyTorch: FakeTensorMode.lift_fns.
            return self.from_tensor(args[0])
        flat, spec = tree_flatten((args, kwargs))
        for i, x in enumerate(flat):
            if isinstance(x, Tensor) and not isinstance(x, FakeTensor):
                if not self.allow_non_fake_inputs:
                    raise RuntimeError(
                        f"{func}: got a real tensor (not a FakeTensor) in FakeTensorMode. Please convert all "
                        f"Tensors to FakeTensors first (mode.from_tensor(t)) or instantiate FakeTensorMode with "
                        f"allow_non_fake_inputs=True.")
                flat[i] = self.from_tensor(x)
            elif isinstance(x, FakeTensor) and x.fake_mode is not self:
                raise RuntimeError(f"{func}: got a FakeTensor of another FakeTensorMode")
        args, kwargs = tree_unflatten(flat, spec)
        fakes = [x for x in flat if isinstance(x, FakeTensor)]

        from .._library import fake_impl

        holder = fake_impl.find(func._name)
        if holder is not None and holder.kernel is not None:
            with self, fake_impl.shape_env_for_fake_impls(self.shape_env):
                return holder(*args, **kwargs)
        if (not _C._dispatch_has_computed_kernel_for_dispatch_key(func._name, "Meta")
                and can_generate_trivial_fake_impl(func)):
            return generate_trivial_fake_impl(func, *args, **kwargs)
        return self._run_on_meta(func, fakes, args, kwargs)

    def _run_on_meta(self, func: OpOverload, fakes: list[FakeTensor], args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> Any:
        device = kwargs.get("device")
        if device is None:
            device = _common_device(func, fakes)
        if _has_device_argument(func):
            kwargs = {**kwargs, "device": "meta"}
        to_meta = lambda t: t._meta  # noqa: E731
        meta_args, meta_kwargs = tree_map_only(FakeTensor, to_meta, (args, kwargs))
        try:
            out = func(*meta_args, **meta_kwargs)
        except NotImplementedError as e:
            raise UnsupportedFakeTensorException(
                f"{func}: cannot run on fake tensors: it has no fake impl (opdispatch.library.register_fake) and "
                f"no kernel for meta tensors. The error was: {e}") from e
        by_twin = {id(f._meta): f for f in fakes}

        def wrap(t: Tensor) -> Tensor:
            known = by_twin.get(id(t))
            if known is not None:
                return known
            if not t.is_meta:
                raise RuntimeError(f"{func}: its kernel for meta tensors returned a tensor on {t.device}; "
                                   f"a Meta kernel must return meta tensors")
            for dim in (*Tensor.shape.__get__(t), *Tensor.stride(t)):
                self.shape_env.symbolize(dim)  # raises for sizes it cannot express
            fake = FakeTensor(self, t, device)
            by_twin[id(t)] = fake
            return fake

        return tree_map_only(Tensor, wrap, out)


_device_argument: dict[OpOverload, bool] = {}


def _is_tensor_constructor(func: OpOverload) -> bool:
    """Whether ``func`` makes a tensor from no tensor: none of its arguments
    holds tensors and it returns one Tensor (``ones``, ``empty``, ``arange``;
    not ``zeros_like``). AssertionError if ``func`` is not an OpOverload.
    PyTorch: torch._subclasses.fake_impls._is_tensor_constructor (imported
    into fake_tensor, where modes such as TwoTensorMode take it from)."""
    if not isinstance(func, OpOverload):
        raise AssertionError(f"func must be an OpOverload, got {type(func)}")
    schema = func._schema
    return not has_tensor_arg(schema) and len(schema.returns) == 1 and schema.returns[0].type == _C.TensorType.get()


def _has_device_argument(func: OpOverload) -> bool:
    """Whether ``func`` takes a keyword-only ``device`` (a factory: its outputs go there)."""
    has = _device_argument.get(func)
    if has is None:
        has = _device_argument[func] = any(a.name == "device" and a.kwarg_only for a in func._schema.arguments)
    return has


def _common_device(func: OpOverload, fakes: list[FakeTensor]) -> Any:
    """The inputs' device (0-d cpu tensors may join any device); cpu with no inputs."""
    devices = {str(f.device) for f in fakes if not (f.ndim == 0 and str(f.device) == "cpu")}
    if not devices:
        return "cpu"
    if len(devices) > 1:
        raise RuntimeError(f"{func}: expected all tensors to be on the same device, but found fake tensors on "
                           f"{', '.join(sorted(devices))}")
    return devices.pop()
