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
from typing import Any, Callable, Iterator, Optional

from . import _C
from ._ops import HigherOrderOperator, OpOverload, ops
from ._subclasses.fake_tensor import FakeTensorMode
from ._subclasses.symbolic_shapes import SymInt
from .utils._python_dispatch import TorchDispatchMode
from .utils._pytree import TreeSpec, tree_flatten, tree_unflatten
from ._tensor_type import Tensor

__all__ = ["Graph", "GraphModule", "Node", "Proxy", "ProxyTorchDispatchMode", "PythonCode", "Tracer", "TracerRoot",
           "disable_proxy_modes_tracing", "make_fx", "sym_size", "track_tensor_tree"]

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

    @property
    def all_input_nodes(self) -> list[Node]:
        """The Nodes among ``args`` and ``kwargs`` (nested in containers too),
        each once, in order. PyTorch: torch.fx.Node.all_input_nodes."""
        found: dict[int, Node] = {}
        for leaf in tree_flatten((self.args, self.kwargs), is_leaf=lambda x: isinstance(x, Node))[0]:
            if isinstance(leaf, Node):
                found.setdefault(id(leaf), leaf)
        return list(found.values())

    def is_impure(self) -> bool:
        """Whether dead-code elimination must keep the node though nothing
        uses it: a placeholder, the output, or a call of an operator that
        writes to an argument (a mutable schema). PyTorch: torch.fx.Node.is_impure."""
        if self.op in ("placeholder", "output"):
            return True
        return self.op == "call_function" and isinstance(self.target, OpOverload) and \
            bool(self.target._schema.is_mutable)


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
        # name -> a module the graph calls: a traced branch or body (GraphModule), or a module a
        # higher-order operator's tracing rule registered (tracer.root.register_module).
        self.subgraphs: dict[str, Any] = {}
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

    def users(self) -> dict[Node, list[Node]]:
        """Node -> the nodes that take it as an argument, in graph order."""
        out: dict[Node, list[Node]] = {n: [] for n in self.nodes}
        for n in self.nodes:
            for a in n.all_input_nodes:
                out.setdefault(a, []).append(n)
        return out

    def eliminate_dead_code(self) -> bool:
        """Removes the nodes whose values nothing uses (last first, so chains
        of them go), keeping impure ones (:meth:`Node.is_impure`); returns
        whether any node was removed. A removed ``get_attr`` of a constant
        forgets the constant. PyTorch: torch.fx.Graph.eliminate_dead_code."""
        changed = False
        users = self.users()
        for n in reversed(list(self.nodes)):
            if users[n] or n.is_impure():
                continue
            self.nodes.remove(n)
            for a in n.all_input_nodes:
                users[a].remove(n)
            if n.op == "get_attr" and n.target in self.constants:
                del self.constants[n.target]
            changed = True
        return changed

    def lint(self) -> None:
        """Checks the graph: unique node names, every argument a node defined
        earlier in the graph, placeholders before other nodes, one output node
        and it last, get_attr targets that exist. Raises RuntimeError naming
        the first problem. PyTorch: torch.fx.Graph.lint."""
        seen: set[int] = set()
        names: set[str] = set()
        for i, n in enumerate(self.nodes):
            if n.name in names:
                raise RuntimeError(f"Node redefined name {n.name}!")
            names.add(n.name)
            for a in n.all_input_nodes:
                if id(a) not in seen:
                    raise RuntimeError(f"Argument '{a}' of Node '{n}' was used before it has been defined! Please "
                                       f"check that Nodes in the graph are topologically ordered")
            if n.op == "placeholder" and any(m.op != "placeholder" for m in self.nodes[:i]):
                raise RuntimeError(f"placeholder {n} comes after a node that is not a placeholder")
            if n.op == "output" and i != len(self.nodes) - 1:
                raise RuntimeError(f"the output node {n} is not the graph's last node")
            if n.op == "get_attr" and n.target not in self.constants and n.target not in self.subgraphs:
                raise RuntimeError(f"Node {n} target {n.target} does not reference a constant or a subgraph")
            seen.add(id(n))
        if not self.nodes or self.nodes[-1].op != "output":
            raise RuntimeError("the graph has no output node")

    def print_tabular(self) -> None:
        """Prints one row per node: opcode, name, target, args, kwargs.
        PyTorch: torch.fx.Graph.print_tabular (which needs the tabulate
        package; opdispatch aligns the columns itself)."""
        rows = [["opcode", "name", "target", "args", "kwargs"]]
        rows += [[n.op, n.name, _target_text(n.target) if n.op == "call_function" else str(n.target),
                  _text(n.args), _text(n.kwargs)] for n in self.nodes]
        widths = [max(len(r[c]) for r in rows) for c in range(5)]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        print("\n".join(lines))


@dataclasses.dataclass(frozen=True)
class PythonCode:
    """What :meth:`GraphModule.recompile` returns: ``src``, the forward's
    Python text. PyTorch: torch.fx.graph.PythonCode."""

    src: str


# Short dtype names for print_readable's annotations, as PyTorch writes them ("f32[3, 4]").
_DTYPE_ABBREVIATIONS = {"float16": "f16", "float32": "f32", "float64": "f64", "complex64": "c64",
                        "complex128": "c128", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
                        "uint8": "u8", "bool": "b8"}


def _annotation(value: Any) -> str:
    """``: "f32[3, 4]"`` for a traced tensor value, "" otherwise."""
    if not isinstance(value, Tensor):
        return ""
    dtype = _DTYPE_ABBREVIATIONS.get(str(value.dtype).rpartition(".")[2], str(value.dtype))
    return f': "{dtype}[{", ".join(str(s) for s in value.shape)}]"'


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

    def __init__(self, graph: Graph, in_spec: TreeSpec, out_spec: TreeSpec, name: Optional[str] = None) -> None:
        self.graph = graph
        self._in_spec = in_spec
        self._out_spec = out_spec
        self._name = name

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

    def forward(self, *args: Any) -> Any:
        """Replays the graph on ``args`` (as calling the module does).
        PyTorch: GraphModule.forward."""
        return self(*args)

    def recompile(self) -> PythonCode:
        """Makes the module follow its graph after the graph was edited
        (``eliminate_dead_code``, ...). opdispatch's module interprets its
        graph on every call and prints its code from it, so there is nothing
        to regenerate; returns the code. PyTorch: GraphModule.recompile."""
        return PythonCode(self.code)

    def named_children(self) -> Iterator[tuple[str, Any]]:
        """(name, subgraph) of the higher-order operator branches and bodies
        this graph calls (``true_graph_0``, ``body_graph_0``, ...).
        PyTorch: torch.nn.Module.named_children."""
        yield from self.graph.subgraphs.items()

    def children(self) -> Iterator[Any]:
        """The subgraphs of :meth:`named_children`. PyTorch: torch.nn.Module.children."""
        for _, module in self.named_children():
            yield module

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Any]]:
        """("", self), then every subgraph, nested ones with dotted names
        ("true_graph_0.body_graph_0"), depth first. PyTorch: torch.nn.Module.named_modules."""
        yield prefix, self
        for name, module in self.named_children():
            path = f"{prefix}.{name}" if prefix else name
            if isinstance(module, GraphModule):
                yield from module.named_modules(path)
            else:
                yield path, module

    def modules(self) -> Iterator[Any]:
        """The modules of :meth:`named_modules`. PyTorch: torch.nn.Module.modules."""
        for _, module in self.named_modules():
            yield module

    def print_readable(self, print_output: bool = True) -> str:
        """The module as a class whose forward is the graph's code, with each
        tensor's dtype and sizes as annotations (``x_1: "f32[3]"``) and the
        subgraphs as nested classes; printed unless ``print_output`` is
        false, and returned. PyTorch: GraphModule.print_readable."""
        text = self._readable(type(self).__name__ if self._name is None else self._name, 0)
        if print_output:
            print(text)
        return text

    def _readable(self, name: str, indent: int) -> str:
        pad = "    " * indent
        lines = [f"{pad}class {name}(opdispatch.tracing.GraphModule):"]
        for child_name, child in self.named_children():
            if isinstance(child, GraphModule):
                lines.append(child._readable(child_name, indent + 1))
                lines.append("")
        inputs = [f"{n.name}{_annotation(n.meta.get('val'))}" for n in self.graph.nodes if n.op == "placeholder"]
        lines.append(f"{pad}    def forward(self{''.join(', ' + i for i in inputs)}):")
        for line in self.code.splitlines()[1:]:
            node_name = line.strip().partition(" = ")[0]
            node = next((n for n in self.graph.nodes if n.name == node_name and n.op != "placeholder"), None)
            if node is not None and " = " in line:
                line = line.replace(f"{node_name} = ", f"{node_name}{_annotation(node.meta.get('val'))} = ", 1)
            lines.append(f"{pad}    {line}")
        return "\n".join(lines)

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

    @property
    def tracer(self) -> Tracer:
        """The tracer API a higher-order operator's tracing rule uses
        (``mode.tracer.create_proxy`` / ``unwrap_proxy`` / ``root``). PyTorch:
        ProxyTorchDispatchMode.tracer (a PythonKeyTracer)."""
        return Tracer(self)

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
        if isinstance(a, Proxy):
            return a.node
        if not isinstance(a, (list, tuple, dict)) and any(v is a for v in self.graph.subgraphs.values()):
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
        FakeTensorMode) and records it, od::lift_fresh as od::lift_fresh_copy
        (Note [Lifted constants in a trace]); raises what the call raises."""
        kwargs = kwargs or {}
        if func is ops.od.lift_fresh.default:
            func = ops.od.lift_fresh_copy.default
        return self.record(func, args, kwargs, func(*args, **kwargs))


# Note [Lifted constants in a trace]
# A tensor made from Python data inside a traced function (the value of
# x[0] = 1.0) reaches the graph as a constant of the module passed through
# od::lift_fresh, which returns its argument itself. Recorded as it is, an
# in-place update of the result would write into the module's constant and
# change the next run; the trace records od::lift_fresh_copy instead, which
# copies. PyTorch: proxy_call (torch/fx/experimental/proxy_tensor.py).


# Note [The tracer API of a tracing rule]
# A higher-order operator written outside opdispatch records itself the way
# PyTorch's are written: its py_impl(ProxyTorchDispatchMode) kernel computes
# the output with the tracer off (disable_proxy_modes_tracing), maps its
# arguments to Proxies (mode.tracer.unwrap_proxy: a tensor the trace knows
# becomes the Proxy of its node; a module registered with
# tracer.root.register_module a get_attr node), makes the node
# (tracer.create_proxy) and ties the output tensors to it
# (track_tensor_tree: a getitem node per element of a tuple or list output).
# These are a thin layer over the mode's own record / track / _arg.


class Proxy:
    """A value being traced: ``node`` is the Node that computes it; indexing
    records a getitem node. PyTorch: torch.fx.Proxy."""

    def __init__(self, node: Node, tracer: Tracer) -> None:
        self.node = node
        self.tracer = tracer

    def __getitem__(self, key: Any) -> Proxy:
        return Proxy(self.tracer.mode.graph.create_node("call_function", operator.getitem, (self.node, key)),
                     self.tracer)

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"


class TracerRoot:
    """``tracer.root``: the module being built, to which a tracing rule adds
    the modules its node calls (``register_module(name, module)``, also
    ``add_module``); ``hasattr(root, name)`` tells whether a name is taken.
    The modules become attributes of the GraphModule make_fx returns.
    PyTorch: the root nn.Module of a Tracer."""

    def __init__(self, graph: Graph) -> None:
        self._graph = graph

    def __getattr__(self, name: str) -> Any:
        graph = self.__dict__["_graph"]
        if name in graph.subgraphs:
            return graph.subgraphs[name]
        if name in graph.constants:
            return graph.constants[name]
        raise AttributeError(f"the traced module has no attribute '{name}'")

    def register_module(self, name: str, module: Any) -> None:
        """Makes ``module`` the module's attribute ``name``. Raises
        KeyError if the name is taken. PyTorch: nn.Module.register_module."""
        if name in self._graph.subgraphs or name in self._graph.constants:
            raise KeyError(f"attribute '{name}' already exists")
        self._graph.subgraphs[name] = module

    add_module = register_module


class Tracer:
    """The tracer of a :class:`ProxyTorchDispatchMode` as PyTorch's tracing
    rules use it (Note [The tracer API of a tracing rule]).
    PyTorch: torch.fx.experimental.proxy_tensor.PythonKeyTracer."""

    def __init__(self, mode: ProxyTorchDispatchMode) -> None:
        self.mode = mode
        self.root = TracerRoot(mode.graph)
        self.graph = mode.graph

    def unwrap_proxy(self, e: Any) -> Any:
        """The Proxy of ``e`` if the trace knows it (a tensor it has seen, a
        module of :attr:`root`; a tensor it has not seen becomes a constant
        of the graph), else ``e``. PyTorch: PythonKeyTracer.unwrap_proxy."""
        if isinstance(e, Tensor) or any(v is e for v in self.mode.graph.subgraphs.values()):
            return Proxy(self.mode._arg(e), self)
        return e

    def create_proxy(self, kind: str, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                     name: Optional[str] = None) -> Proxy:
        """Records a node (``kind`` "call_function", ...) calling ``target``
        with ``args`` / ``kwargs``, which may hold Proxies, and returns its
        Proxy. ``name``: the node's name (made unique). PyTorch: TracerBase.create_proxy."""
        node = self.mode.graph.create_node(kind, target, self.mode._arg(args),
                                           {k: self.mode._arg(v) for k, v in kwargs.items()},
                                           name=None if name is None else self.mode.graph._name(name))
        return Proxy(node, self)


def track_tensor_tree(inner_res: Any, proxy_res: Proxy, *, constant: Any, tracer: Tracer) -> Any:
    """Ties the tensors of ``inner_res`` (a tensor, or a tuple or list of
    them, possibly nested) to ``proxy_res``'s node: a tensor to the node
    itself, each element of a tuple or list to a getitem node of it; later
    calls on those tensors refer to those nodes. Returns ``inner_res``.
    ``constant`` must be None (no constant propagation).
    PyTorch: torch.fx.experimental.proxy_tensor.track_tensor_tree."""
    if constant is not None:
        raise NotImplementedError("track_tensor_tree(constant=...): opdispatch propagates no constants; pass None")
    if isinstance(inner_res, Tensor):
        tracer.mode.track(inner_res, proxy_res.node)
    elif isinstance(inner_res, (tuple, list)):
        proxy_res.node.meta["val"] = inner_res
        for i, item in enumerate(inner_res):
            if any(isinstance(x, Tensor) for x in tree_flatten(item)[0]):
                track_tensor_tree(item, proxy_res[i], constant=None, tracer=tracer)
    return inner_res


@contextlib.contextmanager
def disable_proxy_modes_tracing() -> Iterator[Optional[ProxyTorchDispatchMode]]:
    """For the block, the make_fx tracer (if one is active) records nothing:
    it leaves its slot and is restored after; yields it (or None).
    PyTorch: torch.fx.experimental.proxy_tensor.disable_proxy_modes_tracing."""
    mode = _C._unset_dispatch_mode(_C._TorchDispatchModeKey.PROXY)
    try:
        yield mode if isinstance(mode, ProxyTorchDispatchMode) else None
    finally:
        if mode is not None:
            _C._set_dispatch_mode(mode)


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
        return GraphModule(graph, in_spec, out_spec, getattr(fn, "__name__", None))

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

