"""make_fx: record the operator calls a function makes as a graph that prints
like code and can be called again on new inputs. PyTorch:
torch.fx.experimental.proxy_tensor.make_fx (returning a GraphModule).

    def f(x, y):
        return opdispatch.ops.mylib.scale(x + y, 2.0)

    g = make_fx(f)(opdispatch.randn(3), opdispatch.randn(3))
    print(g)              # def forward(self, x_1, y_1): add = opdispatch.ops.od.add.Tensor(x_1, y_1) ...
    g(a, b)               # replays the calls on a and b
    g = make_fx(f, tracing_mode="fake")(...)   # records on FakeTensors: no kernel touches data
"""
from __future__ import annotations

import contextlib
import dataclasses
import inspect
import itertools
import operator
from typing import Any, Callable, Optional

from . import _C
from ._ops import HigherOrderOperator, OpOverload
from ._subclasses.fake_tensor import FakeTensorMode
from ._subclasses.symbolic_shapes import SymInt
from .utils._python_dispatch import TorchDispatchMode
from .utils._pytree import TreeSpec, tree_flatten, tree_unflatten
from ._tensor_type import Tensor

__all__ = ["Graph", "GraphModule", "Node", "ProxyTorchDispatchMode", "make_fx", "sym_size"]

# Note [Tracing with a mode]
# make_fx pushes a tracer mode (an infrastructure mode, the PROXY slot) and,
# for tracing_mode="fake", a FakeTensorMode below it, then calls the function
# on the inputs (their fakes). Each operator call reaches the tracer first
# (it is above FAKE): the tracer runs the call below itself (on real tensors,
# or through FakeTensorMode), and records a node whose target is the
# OpOverload, whose arguments refer to the input placeholders and earlier
# nodes (tensors it has seen; any other tensor becomes a constant of the
# graph), and whose meta holds the output ("val") and its metadata
# ("tensor_meta"). Calls made inside a kernel or a fake impl run with the
# tracer popped, so only the function's own calls are recorded, as in
# PyTorch. A data-dependent size (a SymInt from new_dynamic_size, Note
# [Symbolic sizes]) gets a node ``u0 = sym_size(t, dim)`` after the call that
# produced it; ints the tracer sees that are a symbol's placeholder are
# recorded as the symbol, so the graph shows ``[u0, 2]`` and replaying it
# computes u0 from the data.

# Note [Tracing higher-order operators]
# A higher-order operator (cond, map_impl) reaches the tracer through its
# py_impl(ProxyTorchDispatchMode) kernel, with the tracer popped. The kernel
# traces each function argument into a subgraph (trace_subgraphs: a child
# tracer on a new Graph, the function's tensor arguments its placeholders,
# the same FakeTensorMode), computes the output by calling the operator
# again on the subgraphs (below the tracer: on real tensors, or through
# FakeTensorMode), and records one node (record) whose arguments name the
# subgraphs as attributes of the module (``true_graph_0 =
# self.true_graph_0``). A tensor a function uses without taking it as an
# argument (a closure) that the enclosing trace knows is lifted: it becomes an
# extra placeholder of every subgraph of the call and an extra argument of the
# node, so that replaying the graph on new inputs uses the new value, not the
# traced one. Any other tensor stays a constant of the subgraph. Outputs that
# are pytrees get one getitem node per container level down to each tensor.


def sym_size(t: Any, dim: int) -> int:
    """``t.shape[dim]`` (``t`` a tensor, ``dim`` an int): the target of the
    node that binds a data-dependent size (``u0``) when a graph replays.
    Raises IndexError for a ``dim`` out of range.
    PyTorch: torch.ops.aten.sym_size.int."""
    size: int = t.shape[dim]
    return size


@dataclasses.dataclass(eq=False)
class Node:
    """One step of a Graph. ``op`` is "placeholder" (an input), "get_attr" (a
    constant tensor, in ``Graph.constants``, or a subgraph, in
    ``Graph.subgraphs``), "call_function" (``target``
    called with ``args``/``kwargs``, which hold Nodes, SymInts and constants)
    or "output" (``args[0]``: the function's flat outputs). ``meta`` has "val"
    (the traced value) and, for tensors, "tensor_meta" (shape, dtype,
    stride, device). PyTorch: torch.fx.Node."""

    name: str
    op: str
    target: Any
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    meta: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __repr__(self) -> str:
        return self.name


@dataclasses.dataclass(frozen=True)
class TensorMetadata:
    """A traced tensor's metadata; sizes and strides may hold SymInts."""

    shape: tuple[Any, ...]
    dtype: Any
    stride: tuple[Any, ...]
    device: Any
    requires_grad: bool


class Graph:
    """The nodes of a trace, in order. PyTorch: torch.fx.Graph."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.constants: dict[str, Any] = {}
        self.subgraphs: dict[str, GraphModule] = {}
        self._names: dict[str, itertools.count[int]] = {}

    def _name(self, base: str) -> str:
        counter = self._names.setdefault(base, itertools.count())
        n = next(counter)
        return base if n == 0 else f"{base}_{n}"

    def create_node(self, op: str, target: Any, args: tuple[Any, ...] = (), kwargs: Optional[dict[str, Any]] = None,
                    name: Optional[str] = None) -> Node:
        """Appends a :class:`Node` (``op``: "placeholder", "get_attr",
        "call_function" or "output"; ``args``/``kwargs``: Nodes, SymInts and
        constants) named ``name``, or a fresh name from the target
        ("add", "add_1", ...), and returns it. PyTorch: torch.fx.Graph.create_node."""
        node = Node(name or self._name(_base_name(op, target)), op, target, args, kwargs or {})
        self.nodes.append(node)
        return node

    def python_code(self) -> str:
        """The graph as a Python function ``forward(self, <inputs>)``."""
        inputs = [n.name for n in self.nodes if n.op == "placeholder"]
        lines = [f"def forward(self, {', '.join(inputs)}):" if inputs else "def forward(self):"]
        for n in self.nodes:
            if n.op == "get_attr":
                lines.append(f"    {n.name} = self.{n.target}")
            elif n.op == "call_function":
                call = ", ".join([*(_text(a) for a in n.args), *(f"{k}={_text(v)}" for k, v in n.kwargs.items())])
                lines.append(f"    {n.name} = {_target_text(n.target)}({call})")
            elif n.op == "output":
                outs = n.args[0]
                lines.append(f"    return {_text(outs[0]) if len(outs) == 1 else _text(tuple(outs))}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.python_code()


def _base_name(op: str, target: Any) -> str:
    if op == "call_function":
        if isinstance(target, OpOverload):
            return target._opname
        return getattr(target, "__name__", "call")
    return {"output": "output", "get_attr": "_tensor_constant"}.get(op, str(target))


def _target_text(target: Any) -> str:
    if isinstance(target, OpOverload):
        return f"opdispatch.ops.{target}"  # opdispatch.ops.ns.op.overload, as PyTorch's code names it
    if isinstance(target, HigherOrderOperator):
        return repr(target)  # opdispatch.ops.higher_order.name
    if target is operator.getitem:
        return "operator.getitem"
    return f"opdispatch.tracing.{target.__name__}"


def _text(value: Any) -> str:
    if isinstance(value, (Node, SymInt)):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_text(v)}" for k, v in value.items()) + "}"
    return repr(value)


class GraphModule:
    """What make_fx returns: ``graph`` (its nodes), ``code`` (the graph as
    Python text; also ``str(gm)``), and ``gm(*args)``, which replays the
    recorded calls on new inputs (the tensors among ``args``, in the order
    of the traced ones) and returns outputs structured as the function's.
    The subgraphs of higher-order operator calls are attributes
    (``gm.true_graph_0``), GraphModules themselves.
    PyTorch: torch.fx.GraphModule."""

    def __init__(self, graph: Graph, in_spec: TreeSpec, out_spec: TreeSpec) -> None:
        self.graph = graph
        self._in_spec = in_spec
        self._out_spec = out_spec

    @property
    def nodes(self) -> list[Node]:
        """The graph's :class:`Node` list, in execution order."""
        return self.graph.nodes

    @property
    def code(self) -> str:
        """The graph as the Python text of ``def forward(self, <inputs>): ...``."""
        return self.graph.python_code()

    def __str__(self) -> str:
        return self.code

    def __getattr__(self, name: str) -> Any:
        graph = self.__dict__.get("graph")
        if graph is not None and name in graph.subgraphs:
            return graph.subgraphs[name]
        if graph is not None and name in graph.constants:
            return graph.constants[name]
        raise AttributeError(f"'GraphModule' object has no attribute '{name}'")

    def __call__(self, *args: Any) -> Any:
        leaves, spec = tree_flatten(args)
        if spec != self._in_spec:
            raise TypeError(f"the graph was traced with arguments structured as {self._in_spec}, got {spec}")
        inputs = iter(x for x in leaves if isinstance(x, Tensor))
        env: dict[Node, Any] = {}
        symbols: dict[str, int] = {}

        def value(a: Any) -> Any:
            if isinstance(a, Node):
                return env[a]
            if isinstance(a, SymInt):
                return a.evaluate(symbols)
            if isinstance(a, (list, tuple)):
                return type(a)(value(x) for x in a)
            if isinstance(a, dict):
                return {k: value(v) for k, v in a.items()}
            return a

        for n in self.graph.nodes:
            if n.op == "placeholder":
                try:
                    env[n] = next(inputs)
                except StopIteration:
                    raise TypeError(f"the graph needs a tensor for its input {n.name}") from None
            elif n.op == "get_attr":
                env[n] = getattr(self, n.target)
            elif n.op == "call_function":
                env[n] = n.target(*value(n.args), **value(n.kwargs))
                if n.target is sym_size:
                    symbols[n.name] = env[n]
            else:
                return tree_unflatten(value(n.args[0]), self._out_spec)
        raise RuntimeError("the graph has no output node")


class ProxyTorchDispatchMode(TorchDispatchMode):
    """The make_fx tracer: records each operator call it sees into ``graph``
    (Note [Tracing with a mode]); an infrastructure mode (the PROXY slot).
    Higher-order operators register their tracing rule for this class with
    ``py_impl(ProxyTorchDispatchMode)`` and use :meth:`trace_subgraphs` and
    :meth:`record` (Note [Tracing higher-order operators]).
    PyTorch: torch.fx.experimental.proxy_tensor.ProxyTorchDispatchMode."""

    def __init__(self, graph: Graph, fake_mode: Optional[FakeTensorMode],
                 parent: Optional[ProxyTorchDispatchMode] = None) -> None:
        super().__init__()
        self._mode_key = _C._TorchDispatchModeKey.PROXY
        self.graph = graph
        self.fake_mode = fake_mode
        self.parent = parent
        self.nodes_of: dict[int, tuple[Any, Node]] = {}  # id(tensor) -> (tensor kept alive, node)
        self.symbol_nodes: set[str] = set()
        self.lifted: dict[int, tuple[Any, Node]] = {}  # id(parent's tensor) -> (tensor, placeholder), lift order

    @classmethod
    def is_infra_mode(cls) -> bool:
        return True

    def track(self, t: Any, node: Node) -> None:
        """Makes ``node`` the node of tensor ``t`` in this trace (later calls
        on ``t`` refer to it), records its "val" and "tensor_meta", and adds a
        ``sym_size`` node for each data-dependent size not bound yet."""
        self.nodes_of[id(t)] = (t, node)
        node.meta["val"] = t
        node.meta["tensor_meta"] = TensorMetadata(tuple(t.shape), t.dtype, tuple(t.stride()), t.device,
                                                  t.requires_grad)
        for dim, size in enumerate(t.shape):
            if isinstance(size, SymInt) and size.coeff == 1 and size.offset == 0 and \
                    size.symbol not in self.symbol_nodes:
                self.symbol_nodes.add(size.symbol)
                sym = self.graph.create_node("call_function", sym_size, (node, dim), name=size.symbol)
                sym.meta["val"] = size

    def _track_tree(self, value: Any, node: Node) -> None:
        """Tracks the tensors of an output pytree: one getitem node per
        container level down to each tensor."""
        if isinstance(value, Tensor):
            self.track(value, node)
            return
        node.meta["val"] = value
        children = value.items() if isinstance(value, dict) else enumerate(value) \
            if isinstance(value, (list, tuple)) else ()
        for key, child in children:
            if any(isinstance(x, Tensor) for x in tree_flatten(child)[0]):
                self._track_tree(child, self.graph.create_node("call_function", operator.getitem, (node, key)))

    def _knows(self, t: Any) -> Optional[Node]:
        """The node of tensor ``t`` in this trace or an enclosing one, if any."""
        tracer: Optional[ProxyTorchDispatchMode] = self
        while tracer is not None:
            hit = tracer.nodes_of.get(id(t))
            if hit is not None:
                return hit[1]
            tracer = tracer.parent
        return None

    def _lift(self, t: Any, outer: Node) -> Node:
        """A placeholder for ``t``, a tensor of an enclosing trace (a closure
        of the function traced here). Note [Tracing higher-order operators]."""
        placeholder = Node(self.graph._name(outer.name), "placeholder", outer.name)
        last = max((i for i, n in enumerate(self.graph.nodes) if n.op == "placeholder"), default=-1)
        self.graph.nodes.insert(last + 1, placeholder)
        self.lifted[id(t)] = (t, placeholder)
        self.track(t, placeholder)
        return placeholder

    def _arg(self, a: Any) -> Any:
        if isinstance(a, Tensor):
            hit = self.nodes_of.get(id(a))
            if hit is not None:
                return hit[1]
            outer = self.parent._knows(a) if self.parent is not None else None
            if outer is not None:
                return self._lift(a, outer)
            name = self.graph._name("_tensor_constant")
            self.graph.constants[name] = a
            node = self.graph.create_node("get_attr", name, name=name)
            self.track(a, node)
            return node
        if isinstance(a, GraphModule):
            name = next(k for k, v in self.graph.subgraphs.items() if v is a)
            return self.graph.create_node("get_attr", name, name=self.graph._name(name))
        if isinstance(a, int) and not isinstance(a, bool) and self.fake_mode is not None:
            return self.fake_mode.shape_env.symbolize(a)
        if isinstance(a, (list, tuple)):
            return type(a)(self._arg(x) for x in a)
        if isinstance(a, dict):
            return {k: self._arg(v) for k, v in a.items()}
        return a

    def record(self, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> Any:
        """Records the call ``target(*args, **kwargs)`` that returned ``out``
        (any pytree) and returns ``out``. GraphModules among ``args`` must come
        from :meth:`trace_subgraphs`."""
        node = self.graph.create_node("call_function", target, self._arg(args),
                                      {k: self._arg(v) for k, v in kwargs.items()})
        self._track_tree(out, node)
        return out

    def trace_subgraphs(self, fns: list[tuple[str, Callable[..., Any]]], args: tuple[Any, ...]
                        ) -> tuple[list[GraphModule], list[Any]]:
        """Traces each ``fn(*args)`` of ``fns`` (``[(name prefix, fn)]``, e.g.
        ``("true_graph", true_fn)``) into a subgraph registered as
        ``<prefix>_<i>`` (one ``i`` for the whole call). Returns the
        GraphModules and the lifted tensors: every subgraph takes
        ``(*args, *lifted)`` (Note [Tracing higher-order operators]). Call it
        from a py_impl(ProxyTorchDispatchMode) kernel (this tracer popped)."""
        leaves, _ = tree_flatten(args)
        traced = []
        for _, fn in fns:
            child = ProxyTorchDispatchMode(Graph(), self.fake_mode, parent=self)
            names = _input_names(fn, args)
            for i, x in enumerate(leaves):
                if isinstance(x, Tensor):
                    child.track(x, child.graph.create_node("placeholder", names[i], name=names[i]))
            with child:
                out = fn(*args)
            out_leaves, out_spec = tree_flatten(out)
            traced.append((child, [child._arg(x) for x in out_leaves], out_spec))
        lifted: dict[int, Any] = {}
        for child, _, _ in traced:
            for key, (t, _) in child.lifted.items():
                lifted.setdefault(key, t)
        in_spec = tree_flatten((*args, *lifted.values()))[1]
        index = next(i for i in itertools.count()
                     if not any(f"{prefix}_{i}" in self.graph.subgraphs for prefix, _ in fns))
        modules = []
        for (prefix, _), (child, outs, out_spec) in zip(fns, traced):
            for key, t in lifted.items():
                if key not in child.lifted:
                    outer = self._knows(t)
                    assert outer is not None  # a child lifted it: this trace or an enclosing one knows it
                    child._lift(t, outer)
            child._order_lifted(list(lifted))
            child.graph.create_node("output", "output", (outs,))
            gm = GraphModule(child.graph, in_spec, out_spec)
            self.graph.subgraphs[f"{prefix}_{index}"] = gm
            modules.append(gm)
        return modules, list(lifted.values())

    def _order_lifted(self, keys: list[int]) -> None:
        """Puts the lifted placeholders in the order of ``keys`` (ids of the
        lifted tensors), right after the function's own placeholders."""
        lifted = [self.lifted[k][1] for k in keys]
        ids = {id(n) for n in lifted}
        rest = [n for n in self.graph.nodes if id(n) not in ids]
        last = max((i for i, n in enumerate(rest) if n.op == "placeholder"), default=-1)
        self.graph.nodes = rest[:last + 1] + lifted + rest[last + 1:]

    def __torch_dispatch__(self, func: OpOverload, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: Optional[dict[str, Any]] = None) -> Any:
        """Runs ``func`` below the tracer (on real tensors, or through the
        FakeTensorMode) and records it; raises what the call raises."""
        kwargs = kwargs or {}
        return self.record(func, args, kwargs, func(*args, **kwargs))


def make_fx(fn: Callable[..., Any], tracing_mode: str = "real") -> Callable[..., GraphModule]:
    """``make_fx(fn)(*args)``: calls ``fn(*args)`` and returns a
    :class:`GraphModule` of the operator calls it made (Note [Tracing with a
    mode]). ``args`` may be nested tuples, lists and dicts; the tensors among
    them become the graph's inputs (``x_1``, ...; other values are fixed at
    their traced values), and ``fn`` may return any such structure.

    tracing_mode: "real" runs ``fn`` on the inputs themselves; "fake" runs
        it on FakeTensors of them under a FakeTensorMode (fake impls and Meta
        kernels; no data is read), so data-dependent sizes become symbols.
        "symbolic" (symbolic input sizes) is not supported: ValueError.

    PyTorch: torch.fx.experimental.proxy_tensor.make_fx.
    """
    if tracing_mode not in ("real", "fake"):
        raise ValueError(f"make_fx(tracing_mode={tracing_mode!r}): expected 'real' or 'fake' (opdispatch has no "
                         f"symbolic input sizes; data-dependent sizes are symbolic under 'fake')")

    def traced(*args: Any) -> GraphModule:
        graph = Graph()
        leaves, in_spec = tree_flatten(args)
        fake_mode = FakeTensorMode(allow_non_fake_inputs=True) if tracing_mode == "fake" else None
        tracer = ProxyTorchDispatchMode(graph, fake_mode)
        names = _input_names(fn, args)
        for i, x in enumerate(leaves):
            if isinstance(x, Tensor):
                if fake_mode is not None:
                    x = leaves[i] = fake_mode.from_tensor(x)
                tracer.track(x, graph.create_node("placeholder", names[i], name=names[i]))
        with fake_mode if fake_mode is not None else contextlib.nullcontext(), tracer:
            out = fn(*tree_unflatten(leaves, in_spec))
        out_leaves, out_spec = tree_flatten(out)
        graph.create_node("output", "output", ([tracer._arg(x) for x in out_leaves],))
        return GraphModule(graph, in_spec, out_spec)

    return traced


def _input_names(fn: Callable[..., Any], args: tuple[Any, ...]) -> list[str]:
    """``<parameter>_1`` per flat input (PyTorch's names), ``arg<i>_1`` when unknown."""
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    try:
        params = list(itertools.takewhile(lambda p: p.kind in positional, inspect.signature(fn).parameters.values()))
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):
        base = params[i].name if i < len(params) else f"arg{i}"
        n = len(tree_flatten(a)[0])
        names += [f"{base}_1"] if n == 1 else [f"{base}_{j}_1" for j in range(n)]
    return names

