# Written after pytorch/pytorch test/functorch/test_control_flow.py
# (TestControlFlowTraced: test_cond_traced_not_nested, test_cond_nested_traced,
# test_map_real / test_map_fake): cond with branches of their own, cond
# nested in a branch with a second predicate, and map over the first
# dimension, each traced with make_fx and replayed through graph.forward.
# The PyTorch 2.13 form (functorch.experimental.control_flow's cond / map,
# torch.fx.experimental.proxy_tensor.make_fx) ran first.
from opdispatch._higher_order_ops import cond, map


def true_fn(x):
    return x.sin()


def false_fn(x):
    return x.cos()


def not_nested(x, y):
    return cond(y, true_fn, false_fn, [x])


def true_nested(y):
    return y * y


def false_nested(y):
    return y + y


def true_fn_outer(x, pred2):
    z = cond(pred2, true_nested, false_nested, [x])
    return x + z


def false_fn_outer(x, _):
    return x.cos()


def nested(x, pred, pred2):
    return cond(pred, true_fn_outer, false_fn_outer, [x, pred2])


def body(x, y):
    return x + y


def mapped(xs, y):
    return map(body, xs, y)
