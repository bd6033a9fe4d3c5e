"""A small pytree library: nested tuples, lists, dicts and namedtuples whose
non-container values are leaves, and node types registered with
register_pytree_node. PyTorch: torch/utils/_pytree.py (same names).

    leaves, spec = tree_flatten(({"a": x}, [y, 3]))    # [x, y, 3], a TreeSpec
    tree_unflatten([1, 2, 3], spec)                    # ({"a": 1}, [2, 3])
    tree_map_only(Tensor, lambda t: t * 2, tree)       # doubles the tensors only
"""
from __future__ import annotations

import collections
import dataclasses
import types
from typing import Any, Callable, Iterable, Iterator, Optional, Union

__all__ = ["LeafSpec", "TreeSpec", "arg_tree_leaves", "register_pytree_node", "tree_all", "tree_all_only", "tree_any",
           "tree_any_only", "tree_flatten", "tree_iter", "tree_leaves", "tree_map", "tree_map_", "tree_map_only",
           "tree_map_only_", "tree_structure", "tree_unflatten"]

PyTree = Any


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


FlattenFn = Callable[[Any], tuple[list[Any], Any]]
UnflattenFn = Callable[[Iterable[Any], Any], Any]


@dataclasses.dataclass(frozen=True)
class _NodeDef:
    flatten: FlattenFn
    unflatten: UnflattenFn


#: Node types registered with register_pytree_node, by exact type.
_REGISTERED: dict[type, _NodeDef] = {}


def register_pytree_node(cls: type, flatten_fn: FlattenFn, unflatten_fn: UnflattenFn, *,
                         serialized_type_name: Optional[str] = None, **unused: Any) -> None:
    """Makes instances of ``cls`` (exactly that type) pytree nodes:
    ``flatten_fn(node) -> (children, context)`` and ``unflatten_fn(children,
    context) -> node``. Raises ValueError if ``cls`` is already a node type.
    The serialisation keywords PyTorch takes are accepted and unused.
    PyTorch: torch.utils._pytree.register_pytree_node."""
    if cls in _REGISTERED or cls in (tuple, list, dict, collections.OrderedDict, collections.defaultdict):
        raise ValueError(f"{cls} is already registered as pytree node.")
    _REGISTERED[cls] = _NodeDef(flatten_fn, unflatten_fn)


def _children(node: Any) -> Optional[tuple[type, Any, list[Any]]]:
    """(node type, context, children) of a container node; None for a leaf."""
    registered = _REGISTERED.get(type(node))
    if registered is not None:
        children, context = registered.flatten(node)
        return type(node), context, list(children)
    if _is_namedtuple(node):
        return type(node), None, list(node)
    if type(node) in (tuple, list):
        return type(node), None, list(node)
    if type(node) is collections.defaultdict:
        keys = list(node)
        return collections.defaultdict, (node.default_factory, keys), [node[k] for k in keys]
    if isinstance(node, dict):
        keys = list(node)
        return collections.OrderedDict if type(node) is collections.OrderedDict else dict, keys, [node[k] for k in keys]
    return None


@dataclasses.dataclass(frozen=True)
class TreeSpec:
    """The structure of a pytree: a node's type, its context (a dict's keys),
    and its children's specs. ``num_leaves`` counts the leaves below it."""

    type: Optional[type]
    context: Any
    children_specs: tuple["TreeSpec", ...]

    @property
    def num_leaves(self) -> int:
        return sum(c.num_leaves for c in self.children_specs)

    def is_leaf(self) -> bool:
        return False

    def __repr__(self) -> str:
        name = getattr(self.type, "__name__", str(self.type))
        inner = ", ".join(repr(c) for c in self.children_specs)
        return f"TreeSpec({name}, {self.context!r}, [{inner}])"


class LeafSpec(TreeSpec):
    """The spec of a leaf."""

    def __init__(self) -> None:
        super().__init__(None, None, ())

    @property
    def num_leaves(self) -> int:
        return 1

    def is_leaf(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "*"


_LEAF = LeafSpec()


def _flatten_into(tree: PyTree, leaves: list[Any], is_leaf: Optional[Callable[[Any], bool]]) -> TreeSpec:
    node = None if is_leaf is not None and is_leaf(tree) else _children(tree)
    if node is None:
        leaves.append(tree)
        return _LEAF
    node_type, context, children = node
    return TreeSpec(node_type, context, tuple(_flatten_into(c, leaves, is_leaf) for c in children))


def tree_flatten(tree: PyTree, is_leaf: Optional[Callable[[Any], bool]] = None) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order (dicts in insertion order) and its
    structure. ``is_leaf(x)`` may declare a container a leaf."""
    leaves: list[Any] = []
    spec = _flatten_into(tree, leaves, is_leaf)
    return leaves, spec


def tree_leaves(tree: PyTree, is_leaf: Optional[Callable[[Any], bool]] = None) -> list[Any]:
    """The leaves of ``tree`` in order."""
    return tree_flatten(tree, is_leaf)[0]


def arg_tree_leaves(*args: PyTree, **kwargs: PyTree) -> list[Any]:
    """The leaves of ``(args, kwargs)``: positional ones first."""
    return tree_leaves((args, kwargs))


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The pytree of structure ``treespec`` with ``leaves`` in order. Raises
    ValueError if the number of leaves does not match."""
    values = list(leaves)
    if len(values) != treespec.num_leaves:
        raise ValueError(f"tree_unflatten(leaves, treespec): treespec expects {treespec.num_leaves} leaves, "
                         f"got {len(values)}")
    return _build(treespec, iter(values))


def _build(spec: TreeSpec, it: Iterator[Any]) -> Any:
    """The pytree of ``spec`` with its leaves taken from ``it`` in order. (A
    module-level function rather than a closure: a closure that calls itself
    is a reference cycle, which kept the leaves, tensors included, alive
    until the cyclic garbage collector ran.)"""
    if spec.is_leaf():
        return next(it)
    children = [_build(c, it) for c in spec.children_specs]
    registered = _REGISTERED.get(spec.type) if spec.type is not None else None
    if registered is not None:
        return registered.unflatten(children, spec.context)
    if spec.type is dict:
        return dict(zip(spec.context, children))
    if spec.type is collections.OrderedDict:
        return collections.OrderedDict(zip(spec.context, children))
    if spec.type is collections.defaultdict:
        factory, keys = spec.context
        return collections.defaultdict(factory, zip(keys, children))
    if spec.type is list:
        return children
    if spec.type is tuple:
        return tuple(children)
    assert spec.type is not None  # only a leaf has no type
    return spec.type(*children)  # a namedtuple


def tree_map(fn: Callable[[Any], Any], tree: PyTree, *rests: PyTree,
             is_leaf: Optional[Callable[[Any], bool]] = None) -> PyTree:
    """The pytree of ``tree``'s structure with ``fn(leaf, *same leaves of rests)``
    in place of each leaf. Raises ValueError if a ``rests`` tree has another structure."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = []
    for r in rests:
        r_leaves, r_spec = tree_flatten(r, is_leaf)
        if r_spec != spec:
            raise ValueError(f"tree_map: the trees have different structures: {spec} and {r_spec}")
        others.append(r_leaves)
    return tree_unflatten([fn(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(fn: Callable[..., Any], tree: PyTree, *rests: PyTree,
              is_leaf: Optional[Callable[[Any], bool]] = None) -> PyTree:
    """Calls ``fn(leaf, *same leaves of rests)`` for each leaf, for its
    effect, and returns ``tree`` itself. Raises ValueError as tree_map does."""
    tree_map(fn, tree, *rests, is_leaf=is_leaf)
    return tree


TypeOrTypes = Union[type, tuple[type, ...], types.UnionType]
TypeOrTypesOrPred = Union[TypeOrTypes, Callable[[Any], bool]]


def _selector(type_or_types_or_pred: TypeOrTypesOrPred) -> Callable[[Any], bool]:
    """isinstance against a type, a tuple or union of types, else the predicate itself."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        return lambda x: isinstance(x, type_or_types_or_pred)
    return type_or_types_or_pred


def tree_map_only(type_or_types_or_pred: TypeOrTypesOrPred, /, fn: Callable[[Any], Any], tree: PyTree,
                  is_leaf: Optional[Callable[[Any], bool]] = None) -> PyTree:
    """tree_map applying ``fn`` to the leaves that are instances of the type(s)
    given, or that the predicate given accepts; other leaves stay as they are."""
    chosen = _selector(type_or_types_or_pred)
    return tree_map(lambda x: fn(x) if chosen(x) else x, tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred: TypeOrTypesOrPred, /, fn: Callable[[Any], Any], tree: PyTree,
                   is_leaf: Optional[Callable[[Any], bool]] = None) -> PyTree:
    """tree_map_ calling ``fn`` on the chosen leaves only (see tree_map_only); returns ``tree``."""
    chosen = _selector(type_or_types_or_pred)
    return tree_map_(lambda x: fn(x) if chosen(x) else None, tree, is_leaf=is_leaf)


def tree_iter(tree: PyTree, is_leaf: Optional[Callable[[Any], bool]] = None) -> Iterable[Any]:
    """The leaves of ``tree``, in order."""
    return iter(tree_leaves(tree, is_leaf))


def tree_structure(tree: PyTree, is_leaf: Optional[Callable[[Any], bool]] = None) -> TreeSpec:
    """The structure of ``tree`` (tree_flatten's TreeSpec)."""
    return tree_flatten(tree, is_leaf)[1]


def tree_any(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Optional[Callable[[Any], bool]] = None) -> bool:
    """Whether ``pred`` holds for some leaf."""
    return any(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_all(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Optional[Callable[[Any], bool]] = None) -> bool:
    """Whether ``pred`` holds for every leaf."""
    return all(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_any_only(type_or_types: TypeOrTypes, /, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Optional[Callable[[Any], bool]] = None) -> bool:
    """Whether ``pred`` holds for some leaf that is an instance of ``type_or_types``."""
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, type_or_types))


def tree_all_only(type_or_types: TypeOrTypes, /, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Optional[Callable[[Any], bool]] = None) -> bool:
    """Whether ``pred`` holds for every leaf that is an instance of ``type_or_types``."""
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, type_or_types))
