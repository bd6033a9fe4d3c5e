"""The same pytree program under PyTorch and opdispatch (argument: torch or opdispatch):
tests/test_pytree.py compares its output with tests/data/pytree_snippet.torch.txt,
recorded from PyTorch 2.13 (python tests/data/pytree_snippet.py torch)."""
import collections
import sys
NAME = sys.argv[1]
if NAME == "torch":
    import torch as lib
    from torch.utils import _pytree as pytree
else:
    import opdispatch as lib
    from opdispatch.utils import _pytree as pytree

class Point:
    def __init__(self, x, y): self.x, self.y = x, y
pytree.register_pytree_node(Point, lambda p: ([p.x, p.y], "pt"), lambda xs, ctx: Point(*xs))
try:
    pytree.register_pytree_node(Point, lambda p: ([], None), lambda xs, c: None)
except ValueError as e:
    print("dup:", "already registered" in str(e))
tree = {"a": Point(1, 2.5), "b": collections.OrderedDict(z=3, y=[4, "s"]), "c": collections.defaultdict(list, k=(5,))}
leaves, spec = pytree.tree_flatten(tree)
print(leaves)
back = pytree.tree_unflatten([x * 2 if isinstance(x, (int, float)) else x for x in leaves], spec)
print(type(back["a"]).__name__, back["a"].x, back["a"].y, type(back["b"]).__name__, list(back["b"].items()),
      type(back["c"]).__name__, back["c"].default_factory is list, dict(back["c"]))
seen = []
r = pytree.tree_map_(seen.append, [1, (2, 3)])
print(seen, r)
print(pytree.tree_map_only(int, lambda x: -x, [1, 2.0, "a", (3,)]))
print(pytree.tree_map_only((int, str), lambda x: x * 2, [1, 2.0, "a"]))
print(pytree.tree_map_only(lambda x: isinstance(x, float), lambda x: 0, [1, 2.0]))
out = []
pytree.tree_map_only_(str, out.append, [1, "a", ("b", 2)])
print(out)
print(pytree.tree_any_only(int, lambda x: x > 2, [1, 2.5, 3]), pytree.tree_all_only(int, lambda x: x > 0, [1, -2.0, 3]))
print(pytree.tree_any(lambda x: x == 3, [1, (3,)]), pytree.tree_all(lambda x: x > 0, {"a": 1, "b": [2, 0]}))
print(list(pytree.tree_iter([1, [2, {"k": 3}]])), pytree.tree_structure([1, (2,)]).num_leaves)
print(lib.is_tensor(1), lib.is_tensor(lib.ones(1)), lib.is_tensor([lib.ones(1)]))
