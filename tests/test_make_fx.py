"""make_fx (opdispatch.tracing): graphs of the operator calls a function
makes, recorded by a mode on real tensors or FakeTensors, printed as code and
replayed on new inputs. PyTorch: torch.fx.experimental.proxy_tensor.make_fx
(its GraphModule's nodes, code and call)."""
from __future__ import annotations

import operator

import pytest

import opdispatch
from opdispatch import Tensor, _C, ops
from opdispatch._subclasses.fake_tensor import FakeTensor
from opdispatch._subclasses.symbolic_shapes import SymInt
from opdispatch.library import Library, custom_op
from opdispatch.tracing import GraphModule, make_fx, sym_size
from opdispatch.utils._python_dispatch import TorchDispatchMode

import custom_op_db


@pytest.fixture
def ns(request):
    return "fx_" + request.node.name[:40]


@pytest.fixture
def scale(ns):
    @custom_op(f"{ns}::scale", mutates_args=())
    def scale(x: Tensor, factor: float) -> Tensor:
        return opdispatch.from_numpy(x.numpy() * factor)

    @scale.register_fake
    def _(x, factor):
        return opdispatch.empty_like(x)

    return scale


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_graph_of_builtin_and_custom_ops_prints_as_code_and_replays(ns, scale, tracing_mode):
    def f(x, y):
        z = scale(x + y, 2.0)
        return z.relu(), opdispatch.zeros(2)

    x, y = opdispatch.randn(3), opdispatch.randn(3)
    gm = make_fx(f, tracing_mode=tracing_mode)(x, y)
    assert isinstance(gm, GraphModule)
    assert str(gm) == gm.code == f"""\
def forward(self, x_1, y_1):
    add = opdispatch.ops.od.add.Tensor(x_1, y_1)
    scale = opdispatch.ops.{ns}.scale.default(add, 2.0)
    relu = opdispatch.ops.od.relu.default(scale)
    zeros = opdispatch.ops.od.zeros.default([2])
    return (relu, zeros)"""
    x_1, y_1, add, scale_node, relu, zeros, output = gm.nodes
    assert [n.op for n in gm.nodes] == ["placeholder"] * 2 + ["call_function"] * 4 + ["output"]
    assert add.target is ops.od.add.Tensor and add.args == (x_1, y_1)
    assert scale_node.target is scale._opoverload and scale_node.args == (add, 2.0)
    assert relu.args == (scale_node,) and output.args == ([relu, zeros],)
    meta = relu.meta["tensor_meta"]
    assert (meta.shape, meta.dtype, meta.stride, str(meta.device)) == ((3,), opdispatch.float32, (1,), "cpu")
    assert (type(relu.meta["val"]) is FakeTensor) == (tracing_mode == "fake")
    a, b = opdispatch.randn(3), opdispatch.randn(3)
    got, want = gm(a, b), f(a, b)
    assert isinstance(got, tuple) and [t.tolist() for t in got] == [t.tolist() for t in want]


def test_fake_tracing_reads_no_data(ns):
    lib = Library(ns, "DEF")
    lib.define("boom(Tensor x) -> Tensor")

    def cpu(x):
        raise AssertionError("the CPU kernel must not run under fake tracing")

    lib.impl("boom", cpu, "CPU")
    lib.impl("boom", lambda x: opdispatch.empty_like(x), "Meta")
    gm = make_fx(lambda x: getattr(ops, ns).boom(x) * 2, tracing_mode="fake")(opdispatch.randn(4))
    assert [n.name for n in gm.nodes] == ["x_1", "boom", "mul", "output"]
    lib._destroy()


def test_data_dependent_sizes_are_symbols_in_the_graph_and_its_metadata():
    def f(x):
        nz = custom_op_db.numpy_nonzero(x)
        return opdispatch.ones(nz.shape[0]) * 2, nz.view(-1)

    gm = make_fx(f, tracing_mode="fake")(opdispatch.randn(4, 4))
    assert gm.code == f"""\
def forward(self, x_1):
    numpy_nonzero = opdispatch.ops.{custom_op_db.NS}.numpy_nonzero.default(x_1)
    u0 = opdispatch.tracing.sym_size(numpy_nonzero, 0)
    ones = opdispatch.ops.od.ones.default([u0])
    mul = opdispatch.ops.od.mul.Scalar(ones, 2)
    view = opdispatch.ops.od.view.default(numpy_nonzero, [-1])
    return (mul, view)"""
    by_name = {n.name: n for n in gm.nodes}
    assert by_name["u0"].target is sym_size and isinstance(by_name["ones"].args[0][0], SymInt)
    assert [str(d) for d in by_name["numpy_nonzero"].meta["tensor_meta"].shape] == ["u0", "2"]
    assert [str(d) for d in by_name["view"].meta["tensor_meta"].shape] == ["2*u0"]
    x = opdispatch.tensor([[0.0, 1.0], [2.0, 0.0], [3.0, 3.0]])
    assert [t.tolist() for t in gm(x)] == [t.tolist() for t in f(x)] == [[2.0] * 4, [0, 1, 1, 0, 2, 0, 2, 1]]


def test_multiple_outputs_constants_and_nested_inputs(ns):
    lib = Library(ns, "DEF")
    lib.define("halves(Tensor x) -> (Tensor, Tensor)")
    lib.impl("halves", lambda x: (x[:2].clone(), x[2:].clone()), "CPU")
    bias = opdispatch.tensor([10.0, 20.0])

    def f(inputs):
        lo, hi = getattr(ops, ns).halves(inputs["x"])
        return {"sum": lo + hi + bias, "scale": inputs["k"]}

    gm = make_fx(f)({"x": opdispatch.arange(4.0), "k": 3})
    names = [n.name for n in gm.nodes]
    assert names == ["inputs_0_1", "halves", "getitem", "getitem_1", "add", "_tensor_constant", "add_1", "output"]
    getitem = gm.nodes[2]
    assert getitem.target is operator.getitem and getitem.args == (gm.nodes[1], 0)
    assert gm.graph.constants["_tensor_constant"] is bias
    out = gm({"x": opdispatch.tensor([1.0, 2.0, 3.0, 4.0]), "k": 3})
    assert out["sum"].tolist() == [14.0, 26.0] and out["scale"] == 3
    with pytest.raises(TypeError, match="traced with arguments structured as"):
        gm(opdispatch.arange(4.0))
    lib._destroy()


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_a_tensor_made_inside_the_trace_is_a_lifted_copy_of_a_constant(tracing_mode):
    # PyTorch 2.13: make_fx(lambda x: x + torch.tensor([1.0, 2.0]))(torch.randn(2)) records
    # _tensor_constant0 -> aten.lift_fresh_copy.default -> aten.add.Tensor(x_1, lift_fresh_copy).
    def f(x):
        return x + opdispatch.tensor([1.0, 2.0])

    gm = make_fx(f, tracing_mode=tracing_mode)(opdispatch.randn(2))
    calls = [n.target for n in gm.nodes if n.op == "call_function"]
    assert calls == [ops.od.lift_fresh_copy.default, ops.od.add.Tensor]
    assert gm(opdispatch.tensor([1.0, 1.0])).tolist() == [2.0, 3.0]


def test_cpp_kernels_and_autograd_are_traced_at_the_python_key(ns):
    cpp = _C._dispatch_library("FRAGMENT", ns, "")
    cpp.def_schema_t_t(f"{ns}::ident(Tensor x) -> Tensor", "CPU", "", "identity")
    x = opdispatch.randn(3, requires_grad=True)
    gm = make_fx(lambda x: getattr(ops, ns).ident(x * x))(x)
    assert [str(n.target) for n in gm.nodes if n.op == "call_function"] == ["od.mul.Tensor", f"{ns}.ident.default"]
    # The tracer sits below autograd: the input requires grad; the recorded call is the one below autograd.
    assert gm.nodes[0].meta["tensor_meta"].requires_grad and len(gm.nodes) == 4
    cpp.reset()


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_a_backward_pass_is_traced_with_the_saved_output_detached(tracing_mode):
    # log_softmax's formula saves its output; the node keeps it as od::detach of it, which the tracer records
    # (PyTorch's graph of the same function: _log_softmax, detach, sum, ones_like, expand, detach,
    # _log_softmax_backward_data; sum's 0-d gradient is expanded as it is). No tensor of the backward pass becomes
    # a constant.
    def f(x):
        y = x.log_softmax(0)
        return opdispatch.autograd.grad(y.sum(), x)[0]

    x = opdispatch.tensor([1.0, 2.0], requires_grad=True)
    gm = make_fx(f, tracing_mode=tracing_mode)(x)
    calls = [n for n in gm.nodes if n.op == "call_function"]
    assert [str(n.target) for n in calls] == [
        "od._log_softmax.default", "od.detach.default", "od.sum.default", "od.ones_like.default", "od.expand.default",
        "od._log_softmax_backward_data.default"]
    assert calls[1].args[0] is calls[0] and calls[-1].args[1] is calls[1]
    assert not gm.graph.constants and gm.nodes[-1].args[0] == [calls[-1]]
    assert gm(x).tolist() == f(x).tolist()


def test_user_modes_run_above_the_tracer():
    seen = []

    class Doubling(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            if func is ops.od.neg.default:
                return ops.od.mul.Scalar(args[0], -2)  # the tracer sees what the mode does
            return func(*args, **kwargs)

    def f(x):
        with Doubling():
            return x.neg()

    gm = make_fx(f)(opdispatch.ones(2))
    assert seen == ["od.neg.default"]  # the mode runs popped: its own call goes to the tracer
    assert [str(n.target) for n in gm.nodes if n.op == "call_function"] == ["od.mul.Scalar"]
    assert _C._len_torch_dispatch_stack() == 0


def test_tracing_mode_must_be_real_or_fake():
    with pytest.raises(ValueError, match="expected 'real' or 'fake'"):
        make_fx(lambda x: x, tracing_mode="symbolic")


# --- make_fx's GraphModule as torch.fx's (issue 28 item 5), each against PyTorch 2.13 -------------------------


def _traced_with_dead_code():
    def f(x, y):
        a = x + y
        x * 2  # unused
        return a.relu()

    return make_fx(f)(opdispatch.ones(3), opdispatch.ones(3))


def test_forward_nodes_and_dead_code_elimination():
    # PyTorch 2.13: nodes (placeholder x_1, placeholder y_1, call_function add, mul, relu, output), add's args
    # (x_1, y_1); eliminate_dead_code() -> True and drops mul; lint() -> None; the module replays as before.
    g = _traced_with_dead_code()
    assert [(n.op, n.name) for n in g.graph.nodes] == [
        ("placeholder", "x_1"), ("placeholder", "y_1"), ("call_function", "add"), ("call_function", "mul"),
        ("call_function", "relu"), ("output", "output")]
    add = g.graph.nodes[2]
    assert add.target is ops.od.add.Tensor and add.args == (g.graph.nodes[0], g.graph.nodes[1]) and add.kwargs == {}
    assert isinstance(add.meta["val"], Tensor) and add.all_input_nodes == [g.graph.nodes[0], g.graph.nodes[1]]
    assert g.forward(opdispatch.ones(3), -2 * opdispatch.ones(3)).tolist() == [0.0, 0.0, 0.0]
    assert g.graph.eliminate_dead_code() is True
    assert [n.name for n in g.graph.nodes] == ["x_1", "y_1", "add", "relu", "output"]
    assert g.graph.eliminate_dead_code() is False
    assert g.graph.lint() is None
    assert g.recompile().src == g.code and "mul" not in g.code
    assert g(opdispatch.ones(3), opdispatch.ones(3)).tolist() == [2.0, 2.0, 2.0]


def test_dead_code_elimination_keeps_mutations():
    def f(x):
        x.add_(1)
        x * 3  # unused
        return x.sin()

    g = make_fx(f)(opdispatch.zeros(2))
    g.graph.eliminate_dead_code()
    assert [n.name for n in g.graph.nodes] == ["x_1", "add_", "sin", "output"]


def test_lint_finds_a_broken_graph():
    g = _traced_with_dead_code()
    g.graph.nodes.insert(0, g.graph.nodes.pop(2))  # add before its inputs
    with pytest.raises(RuntimeError, match="Argument 'x_1' of Node 'add' was used before it has been defined"):
        g.graph.lint()


def test_print_tabular_and_print_readable(capsys):
    g = _traced_with_dead_code()
    g.graph.eliminate_dead_code()
    g.graph.print_tabular()
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert table[5].split() == ["call_function", "relu", "opdispatch.ops.od.relu.default", "(add,)", "{}"]
    # PyTorch 2.13: 'class f(torch.nn.Module):\n    def forward(self, x_1: "f32[3]", y_1: "f32[3]"):' and
    # 'add: "f32[3]" = torch.ops.aten.add.Tensor(x_1, y_1)'.
    text = g.print_readable(print_output=False)
    assert text.splitlines()[:3] == [
        "class f(opdispatch.tracing.GraphModule):",
        '    def forward(self, x_1: "f32[3]", y_1: "f32[3]"):',
        '        add: "f32[3]" = opdispatch.ops.od.add.Tensor(x_1, y_1)']
    assert capsys.readouterr().out == ""
    g.print_readable()
    assert capsys.readouterr().out == text + "\n"


def test_named_modules_of_cond_and_map_branches():
    from opdispatch._higher_order_ops import cond, map as hop_map

    # PyTorch 2.13: ['', 'true_graph_0', 'false_graph_0'] and ['', 'body_graph_0'].
    gc = make_fx(lambda x, pred: cond(pred, lambda x: x.sin(), lambda x: x.cos(), (x,)))(
        opdispatch.ones(3), opdispatch.tensor(True))
    assert [name for name, _ in gc.named_modules()] == ["", "true_graph_0", "false_graph_0"]
    assert [name for name, _ in gc.named_children()] == ["true_graph_0", "false_graph_0"]
    assert list(gc.children()) == [gc.true_graph_0, gc.false_graph_0]
    assert all(isinstance(m, GraphModule) for m in gc.modules())
    gm = make_fx(lambda xs, y: hop_map(lambda x, y: x * y, xs, y))(opdispatch.ones(2, 3), opdispatch.ones(3))
    assert [name for name, _ in gm.named_modules()] == ["", "body_graph_0"]
    readable = gc.print_readable(print_output=False)
    assert "    class true_graph_0(opdispatch.tracing.GraphModule):" in readable


def test_tracing_a_wrapper_subclass_input():
    # PyTorch 2.13 records the calls the function makes on the subclass (mul, sin), its __torch_dispatch__
    # running below the tracer: x_1, mul, sin, output (aten.mul.Tensor there: PyTorch wraps the 2).
    from opdispatch.utils._pytree import tree_map

    class Scaled(Tensor):
        @staticmethod
        def __new__(cls, elem):
            return Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)

        def __init__(self, elem):
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            unwrap = lambda x: x.elem if isinstance(x, Scaled) else x  # noqa: E731
            out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
            return tree_map(lambda x: Scaled(x) if isinstance(x, Tensor) else x, out)

    g = make_fx(lambda x: (x * 2).sin())(Scaled(opdispatch.ones(3)))
    assert [n.name for n in g.graph.nodes] == ["x_1", "mul", "sin", "output"]
    assert g.graph.nodes[2].target is ops.od.sin.default
    assert g(opdispatch.zeros(3)).tolist() == [0.0, 0.0, 0.0]
