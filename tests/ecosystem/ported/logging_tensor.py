# Written after pytorch/pytorch torch/testing/_internal/logging_tensor.py
# (LoggingTensor, LoggingTensorMode, LoggingTensorHandler, log_input,
# capture_logs, capture_logs_with_logging_tensor_mode): a wrapper subclass
# and a mode that log every operator call to the "LoggingTensor" logger, and
# a handler that renders each record as "$ret: dtype[shape] = op($args)" with
# short ids per tensor. The original ran on PyTorch 2.13 first. Changes
# beyond the name map: the traceback collection (GatherTraceback, the
# python_tb / script_tb / cpp_tb flags, torch._C._profiler) is left out;
# opdispatch has no profiler.
import contextlib
import functools
import itertools
import logging
from collections.abc import Iterator

import opdispatch as torch
from opdispatch.utils._dtype_abbrs import dtype_abbrs as _dtype_abbrs
from opdispatch.utils._python_dispatch import TorchDispatchMode
from opdispatch.utils._pytree import tree_map
from opdispatch.utils.weak import WeakTensorKeyDictionary

logger = logging.getLogger("LoggingTensor")


class LoggingTensor(torch.Tensor):
    elem: torch.Tensor

    __slots__ = ["elem"]

    context = contextlib.nullcontext

    @staticmethod
    def __new__(cls, elem, *args, **kwargs):
        # A wrapper with the inner tensor's metadata and no memory of its own.
        r = torch.Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(), dtype=elem.dtype,
            layout=elem.layout, device=elem.device, requires_grad=kwargs.get("requires_grad", False))
        r.elem = elem.detach() if r.requires_grad else elem
        return r

    def __repr__(self):
        return super().__repr__(tensor_contents=f"{self.elem}")

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(e):
            return e.elem if isinstance(e, cls) else e

        def wrap(e):
            return cls(e) if isinstance(e, torch.Tensor) else e

        with cls.context():
            rs = tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs)))
        logging.getLogger("LoggingTensor").info(f"{func.__module__}.{func.__name__}", args, kwargs, rs)
        return rs


class LoggingTensorMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = {} if kwargs is None else kwargs
        rs = func(*args, **kwargs)
        logging.getLogger("LoggingTensor").info(f"{func.__module__}.{func.__name__}", args, kwargs, rs)
        return rs


class LoggingTensorReentrant(LoggingTensor):
    context = torch.overrides.enable_reentrant_dispatch


class LoggingTensorHandler(logging.Handler):
    def __init__(self, log_list, use_shortid_for_all_tensors, with_type):
        logging.Handler.__init__(self)
        self.log_list = log_list
        self.use_shortid_for_all_tensors = use_shortid_for_all_tensors
        self.memo = WeakTensorKeyDictionary()
        self.next_id = 0
        self.with_type = with_type

    def _shortid(self, t):
        if t not in self.memo:
            self.memo[t] = self.next_id
            self.next_id += 1
        return self.memo[t]

    def _fmt(self, a, with_type=False):
        cond_cls = torch.Tensor if self.use_shortid_for_all_tensors else LoggingTensor
        if not isinstance(a, cond_cls):
            return repr(a)
        typed = f": {_dtype_abbrs[a.dtype]}[{', '.join(map(str, a.shape))}]" if with_type and self.with_type else ""
        return f"${self._shortid(a)}{typed}"

    def emit(self, record):
        fmt_args = ", ".join(itertools.chain(
            (str(tree_map(self._fmt, a)) for a in record.args[0]),
            (f"{k}={str(tree_map(self._fmt, v))}" for k, v in record.args[1].items()),
        ))
        fmt_rets = tree_map(functools.partial(self._fmt, with_type=True), record.args[2])
        self.log_list.append(f"{fmt_rets} = {record.msg}({fmt_args})")


def log_input(name, var):
    logger.info("input", (name,), {}, var)


@contextlib.contextmanager
def capture_logs(is_mode=False) -> Iterator[list[str]]:
    log_list: list[str] = []
    handler = LoggingTensorHandler(log_list, with_type=True, use_shortid_for_all_tensors=is_mode)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield log_list
    finally:
        logger.removeHandler(handler)


@contextlib.contextmanager
def capture_logs_with_logging_tensor_mode():
    with LoggingTensorMode(), capture_logs(True) as logs:
        yield logs
