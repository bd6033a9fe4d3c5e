"""`python -m opdispatch coverage`: operators x dispatch keys, each cell
saying what serves the key (a kernel registered there, an alias-key kernel
and which, a backend fallback, a fallthrough, or nothing, and the py_impl
kernel the Python dispatcher would run instead), then the higher-order
operators x keys (their py_impl kernels and fallthroughs), then what each
operator has (CPU, Meta, autograd, a decomposition, membership of the Core
ATen opset) and how much of the Core ATen opset ``od`` defines, as text or as
an HTML page with the registration sites on hover."""
from __future__ import annotations

import dataclasses
import html
import textwrap
from typing import Any, Optional

from . import _C
from ._core_aten import CORE_ATEN, TORCH_VERSION
from ._introspection import (TableEntry, display_site, function_name, hop_table_entries, py_impl_entry, python_site,
                             table_entries)

#: Cell kinds: (one-letter code for text, label for HTML, meaning).
KINDS = {
    "kernel": ("K", "kernel", "a kernel registered at this key"),
    "CompositeExplicitAutogradNonFunctional": ("N", "CEA-NF", "the CompositeExplicitAutogradNonFunctional kernel"),
    "CompositeExplicitAutograd": ("E", "CEA", "the CompositeExplicitAutograd kernel (every backend)"),
    "CompositeImplicitAutograd": ("I", "CIA", "the CompositeImplicitAutograd kernel (a decomposition)"),
    "Autograd": ("A", "Autograd", "the Autograd kernel (every autograd key)"),
    "FuncTorchBatchedDecomposition": ("B", "batched", "the FuncTorchBatchedDecomposition kernel"),
    "fallback": ("F", "fallback", "a backend fallback (for every operator)"),
    "fallthrough": ("T", "skip", "a fallthrough: the key is skipped"),
    "ambiguous": ("X", "ambiguous", "ambiguous AutogradOther: calling raises"),
    "modes": ("M", "modes", "a higher-order operator's kernels per mode class and tensor subclass"),
    "missing": (".", "", "nothing serves the key: calling raises"),
}

#: A cell with a py_impl kernel: (text code, HTML class, meaning). The text grid shows the code instead of the
#: C++ entry's; the page marks the cell and keeps its C++ colour.
PY_IMPL = ("P", "pyimpl", "a py_impl kernel, run instead of the C++ entry while the Python dispatcher is on")


def cell_kind(entry: TableEntry) -> str:
    """The key of :data:`KINDS` for one table entry."""
    if not entry.served:
        return "missing"
    if entry.fallthrough:
        return "fallthrough"
    if entry.rule == "ambiguous autogradother":
        return "ambiguous"
    if entry.rule == "mode and subclass kernels":
        return "modes"
    if entry.rule == "backend fallback":
        return "fallback"
    if entry.rule == "kernel":
        return "kernel"
    return entry.source


@dataclasses.dataclass(frozen=True)
class Coverage:
    """``ops``: qualified names ("ns::op.overload"), sorted; ``schemas``:
    name -> schema text ("" for an operator with kernels but no definition);
    ``keys``: the columns, the runtime keys (and Undefined) that serve at
    least one of the operators (in C++ or with a py_impl kernel), by priority; ``cells``: (op, key) -> entry;
    ``py_cells``: (op, key) -> the py_impl kernel the Python dispatcher runs
    there (:func:`~opdispatch._introspection.py_impl_entry`; at the Python
    key, the operator's ``py_impl(ModeClass)`` kernels), only where there is
    one. ``hops``: the higher-order operators' names, sorted; ``hop_keys``
    and ``hop_cells``: their columns and entries
    (:func:`~opdispatch._introspection.hop_table_entries`)."""

    ops: list[str]
    schemas: dict[str, str]
    keys: list[str]
    cells: dict[tuple[str, str], TableEntry]
    py_cells: dict[tuple[str, str], TableEntry] = dataclasses.field(default_factory=dict)
    hops: list[str] = dataclasses.field(default_factory=list)
    hop_keys: list[str] = dataclasses.field(default_factory=list)
    hop_cells: dict[tuple[str, str], TableEntry] = dataclasses.field(default_factory=dict)
    #: The operators with a decomposition: a CompositeImplicitAutograd kernel, C++ or py_impl (what
    #: OpOverload.decompose runs).
    decomposed: frozenset[str] = frozenset()


#: The library that implements the Core ATen opset, under the same names as aten.
CORE_NAMESPACE = "od"


@dataclasses.dataclass(frozen=True)
class Support:
    """What one operator has. ``cpu``, ``meta``, ``autograd``: the
    :data:`KINDS` key of what serves CPU, Meta and AutogradCPU ("py_impl"
    where the Python dispatcher would run a py_impl kernel instead);
    ``decomposition``: it has a CompositeImplicitAutograd kernel
    (``OpOverload.decompose`` runs it); ``core``: it is an ``od`` operator
    named like an overload PyTorch 2.13 tags ``core`` (Core ATen,
    :data:`opdispatch._core_aten.CORE_ATEN`)."""

    cpu: str
    meta: str
    autograd: str
    decomposition: bool
    core: bool


#: The columns of the support table: (title, the key whose cell it shows, or None).
SUPPORT_COLUMNS = (("CPU", "CPU"), ("Meta", "Meta"), ("Autograd", "AutogradCPU"), ("Decomposition", None),
                   ("Core ATen", None))


def support(cov: Coverage, op: str) -> Support:
    """The :class:`Support` of operator ``op`` of ``cov``."""
    def kind(key: str) -> str:
        return "py_impl" if (op, key) in cov.py_cells else cell_kind(cov.cells[op, key])

    ns, _, name = op.partition("::")
    return Support(kind("CPU"), kind("Meta"), kind("AutogradCPU"), op in cov.decomposed,
                   ns == CORE_NAMESPACE and name in CORE_ATEN)


def core_aten_missing(cov: Coverage) -> Optional[list[str]]:
    """The Core ATen overloads ("add.Tensor") ``od`` does not define, sorted;
    None if ``cov`` does not cover the ``od`` namespace."""
    od = {op.partition("::")[2] for op in cov.ops if op.partition("::")[0] == CORE_NAMESPACE}
    return sorted(set(CORE_ATEN) - od) if od else None


def coverage(namespace: Optional[str] = None) -> Coverage:
    """The coverage of the operators of ``namespace`` (all operators and the
    higher-order operators if None; only the higher-order operators for
    "higher_order"). Raises ValueError if the namespace has no operators."""
    from ._ops import ops as ops_root

    ops = sorted(n for n in _C._dispatch_get_all_op_names() if namespace is None or n.split("::")[0] == namespace)
    hops = sorted(ops_root.higher_order) if namespace in (None, "higher_order") else []
    if not ops and not hops:
        raise ValueError(f"no operators in namespace {namespace!r}")
    cells: dict[tuple[str, str], TableEntry] = {}
    py_cells: dict[tuple[str, str], TableEntry] = {}
    decomposed = set()
    schemas = {}
    order: list[str] = [e.name for e in _C.DispatchKey.__members__.values()
                        if e.name == "Undefined" or not _C._dispatch_is_alias_key(e)]
    for op in ops:
        name, _, overload = op.partition(".")
        try:
            schemas[op] = str(_C._dispatch_find_schema_or_throw(name, overload).schema())
        except RuntimeError:
            schemas[op] = ""  # kernels registered without a definition
        for key, entry in table_entries(op).items():
            cells[op, key] = entry
        op_overload = _existing_overload(op)
        if op_overload is not None:
            py_cells.update(((op, k), e) for k, e in _py_impl_entries(op_overload).items())
        cia = _C.DispatchKey.CompositeImplicitAutograd
        if _C._dispatch_has_kernel_for_dispatch_key(op, cia) or (
                op_overload is not None and cia in op_overload.py_kernels):
            decomposed.add(op)
    hop_cells = {(name, key): entry for name in hops
                 for key, entry in hop_table_entries(getattr(ops_root.higher_order, name)).items()}
    keys = [k for k in order if any(cells[op, k].served or (op, k) in py_cells for op in ops)]
    hop_keys = [k for k in order if any(hop_cells[h, k].served for h in hops)]
    return Coverage(ops, schemas, keys, cells, py_cells, hops, hop_keys, hop_cells, frozenset(decomposed))


def _existing_overload(qualname: str) -> Optional[Any]:
    """The OpOverload of ``qualname`` if Python has made it (py_impl kernels
    live on it, so an operator never looked up from Python has none), else
    None; looks without creating one."""
    from ._ops import OpOverload, OpOverloadPacket, _OpNamespace, ops as ops_root

    name, _, overload = qualname.partition(".")
    ns, op = name.split("::", 1)
    namespace = vars(ops_root).get(ns)
    packet = vars(namespace).get(op) if isinstance(namespace, _OpNamespace) else None
    found = vars(packet).get(overload or "default") if isinstance(packet, OpOverloadPacket) else None
    return found if isinstance(found, OpOverload) else None


def _py_impl_entries(op: Any) -> dict[str, TableEntry]:
    """{runtime key: entry} of the keys where the Python dispatcher runs a
    py_impl kernel of OpOverload ``op``: the kernel resolve_key picks (alias
    keys included), and at the Python key its ``py_impl(ModeClass)`` kernels."""
    if not op.py_kernels and not op.python_key_table:
        return {}
    out = {}
    for key in _C.DispatchKey.__members__:
        k = _C.DispatchKey.__members__[key]
        if key == "Python" and op.python_key_table:
            modes = ", ".join(f"{cls.__name__}: {function_name(fn)} at {display_site(python_site(fn))}"
                              for cls, fn in op.python_key_table.items())
            out[key] = TableEntry(key, "mode and subclass kernels", f"py_impl kernels for modes: {modes}", "",
                                  False, "Python")
        elif key != "Python" and (key == "Undefined" or not _C._dispatch_is_alias_key(k)):
            entry = py_impl_entry(op, key)
            if entry is not None:
                out[key] = entry
    return out


def render_text(cov: Coverage) -> str:
    """Grids of one-letter codes (legend first), the keys numbered above
    their columns: the operators, then the higher-order operators."""
    lines = ["Legend:", *(f"  {code}  {meaning}" for code, _, meaning in KINDS.values()),
             f"  {PY_IMPL[0]}  {PY_IMPL[2]}"]
    if cov.ops:
        lines += ["", *_text_grid(cov.ops, cov.keys, cov.cells, cov.py_cells)]
    if cov.hops:
        lines += ["", "Higher-order operators (opdispatch.ops.higher_order; every kernel is a py_impl kernel):",
                  *_text_grid(cov.hops, cov.hop_keys, cov.hop_cells, {})]
    if cov.ops:
        lines += ["", "Per operator: what serves CPU, Meta and AutogradCPU (the codes above); D: a decomposition",
                  "(a CompositeImplicitAutograd kernel, which OpOverload.decompose runs); C: in the Core ATen opset:",
                  *_support_table(cov)]
    summary = core_aten_summary(cov)
    if summary is not None:
        lines += ["", summary]
    return "\n".join(lines)


def core_aten_summary(cov: Coverage, wrap: bool = True) -> Optional[str]:
    """"Core ATen opset of PyTorch 2.13.0: N of 193 overloads are od
    operators; missing (M): ..." (the list wrapped to 120 columns if
    ``wrap``), or None if ``cov`` does not cover ``od``."""
    missing = core_aten_missing(cov)
    if missing is None:
        return None
    text = (f"Core ATen opset of PyTorch {TORCH_VERSION}: {len(CORE_ATEN) - len(missing)} of {len(CORE_ATEN)} "
            f"overloads are {CORE_NAMESPACE} operators" + (f"; missing ({len(missing)}): " + ", ".join(missing)
                                                           if missing else ""))
    return "\n".join(textwrap.wrap(text, 120, subsequent_indent="  ")) if wrap else text


def _support_table(cov: Coverage) -> list[str]:
    width = max(len(op) for op in cov.ops)
    titles = [title for title, _ in SUPPORT_COLUMNS]
    lines = [" " * (width + 2) + " ".join(titles)]
    for op in cov.ops:
        s = support(cov, op)
        codes = [_code(s.cpu), _code(s.meta), _code(s.autograd), "D" if s.decomposition else ".",
                 "C" if s.core else "."]
        lines.append(f"{op:<{width}}  " + " ".join(f"{c:<{len(t)}}" for c, t in zip(codes, titles)).rstrip())
    return lines


def _code(kind: str) -> str:
    return PY_IMPL[0] if kind == "py_impl" else KINDS[kind][0]


def _text_grid(rows: list[str], keys: list[str], cells: dict[tuple[str, str], TableEntry],
               py_cells: dict[tuple[str, str], TableEntry]) -> list[str]:
    """The keys numbered from 1 (a list wrapped to 120 columns), then the
    grid: the column numbers written in two lines (tens, units) above the
    columns, and one line of codes per row."""
    width = max(len(r) for r in rows)
    lines = ["Keys:"]
    for item in (f"{n} {k}" for n, k in enumerate(keys, 1)):
        if len(lines[-1]) + 2 + len(item) > 120:
            lines.append("    ")
        lines[-1] += "  " + item
    numbers = [f"{n:>2}" for n in range(1, len(keys) + 1)]
    lines += [" " * (width + 2) + " ".join(n[i] for n in numbers) for i in (0, 1)]
    for r in rows:
        codes = " ".join(PY_IMPL[0] if (r, k) in py_cells else KINDS[cell_kind(cells[r, k])][0] for k in keys)
        lines.append(f"{r:<{width}}  {codes}")
    return lines


_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin: 0 0 .3em; }
.legend span { display: inline-block; margin: 0 .6em .4em 0; padding: .1em .5em; border-radius: 3px; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ddd; padding: 3px 5px; line-height: 1.4; text-align: center; white-space: nowrap; }
thead th { position: sticky; top: 0; background: #f4f4f4; writing-mode: vertical-rl; transform: rotate(180deg);
           font-weight: 600; padding: 6px 2px; }
tbody th { text-align: left; font-family: ui-monospace, monospace; font-weight: normal; background: #fafafa; }
td { font-size: 12px; min-width: 2.6em; }
.kernel { background: #2e7d32; color: #fff; }
.CompositeExplicitAutograd, .CompositeExplicitAutogradNonFunctional { background: #81c784; }
.CompositeImplicitAutograd { background: #aed581; }
.Autograd { background: #64b5f6; }
.FuncTorchBatchedDecomposition { background: #ce93d8; }
.fallback { background: #ffb74d; }
.fallthrough { background: #eeeeee; color: #888; }
.ambiguous { background: #e57373; color: #fff; }
.missing { background: #fff; color: #ccc; }
.modes { background: #fff176; }
.core { background: #4db6ac; color: #fff; }
thead th.extra { background: #e0f2f1; }
.extra { position: sticky; box-sizing: border-box; width: 64px; min-width: 64px; max-width: 64px; }
.extra-0 { right: 0; } .extra-1 { right: 64px; }
td.pyimpl { box-shadow: inset 0 0 0 3px #7b1fa2; font-weight: 600; }
.legend span.pyimpl { border: 3px solid #7b1fa2; }
td.pyimpl::after { content: " +py"; color: #7b1fa2; background: #fff; padding: 0 2px; border-radius: 2px; }
h2 { font-size: 1.15em; margin: 1.5em 0 .3em; }
"""


def _hover(op: str, entry: TableEntry) -> str:
    text = f"{op} at {entry.key}\n[{entry.rule}] {entry.describe()}"
    if entry.served:
        text += f"\n{'fallthrough ' if entry.fallthrough else ''}{entry.origin}"
    return text


def _html_table(corner: str, rows: list[str], keys: list[str], cells: dict[tuple[str, str], TableEntry],
                py_cells: dict[tuple[str, str], TableEntry],
                row_titles: dict[str, str], extra: Optional[dict[str, list[tuple[str, str, str]]]] = None) -> str:
    """``extra``: more columns after the keys', {title: [(class, text, tooltip) per row]} (at most two: they
    stay at the window's right edge while the keys' columns scroll)."""
    esc = html.escape
    extra = extra or {}
    sticky = [f"extra extra-{len(extra) - 1 - j}" for j in range(len(extra))]
    head = "".join(f"<th>{esc(k)}</th>" for k in keys) + "".join(
        f'<th class="{cls}">{esc(t)}</th>' for cls, t in zip(sticky, extra))
    body = []
    for i, r in enumerate(rows):
        tds = []
        for k in keys:
            entry = cells[r, k]
            kind = cell_kind(entry)
            hover = _hover(r, entry)
            py = py_cells.get((r, k))
            if py is not None:
                hover += (f"\nWith the Python dispatcher on: [{py.rule}] py_impl({py.source}) kernel "
                          f"{py.kernel}" + (f" at Python {py.site}" if py.site else ""))
            cls = f"{kind} {PY_IMPL[1]}" if py is not None else kind
            tds.append(f'<td class="{cls}" title="{esc(hover)}">{esc(KINDS[kind][1])}</td>')
        tds += [f'<td class="{cls} {where}" title="{esc(tip)}">{esc(text)}</td>' for where, (cls, text, tip) in
                zip(sticky, (column[i] for column in extra.values()))]
        body.append(f'<tr><th title="{esc(row_titles[r])}">{esc(r)}</th>{"".join(tds)}</tr>')
    return (f'<table><thead><tr><th>{esc(corner)}</th>{head}</tr></thead>\n<tbody>\n{chr(10).join(body)}\n'
            f"</tbody></table>\n")


def _support_columns(cov: Coverage) -> dict[str, list[tuple[str, str, str]]]:
    """The operators' table's Decomposition and Core ATen columns (CPU, Meta and Autograd are its key columns)."""
    decomposition, core = [], []
    for op in cov.ops:
        s = support(cov, op)
        decomposition.append(("CompositeImplicitAutograd", "yes", f"{op}: OpOverload.decompose runs its "
                              "CompositeImplicitAutograd kernel") if s.decomposition else
                             ("missing", "", f"{op}: no decomposition (no CompositeImplicitAutograd kernel)"))
        core.append(("core", "core", f"{op}: PyTorch {TORCH_VERSION} tags aten::{op.partition('::')[2]} core")
                    if s.core else ("missing", "", f"{op}: not in the Core ATen opset"))
    return {"Decomposition": decomposition, "Core ATen": core}


def render_html(cov: Coverage, title: str) -> str:
    """A self-contained HTML page: a legend, then the operators' table
    (operators as rows, keys as columns, then the Decomposition and Core ATen
    columns), after the Core ATen summary (:func:`core_aten_summary`), and
    the higher-order operators' table.
    Each cell's tooltip gives the rule and the kernel's registration site (and
    the py_impl kernel of a marked cell), each operator's its schema."""
    esc = html.escape
    legend = "".join(f'<span class="{kind}">{esc(label or "none")}: {esc(meaning)}</span>'
                     for kind, (_, label, meaning) in KINDS.items())
    legend += f'<span class="{PY_IMPL[1]}">+py: {esc(PY_IMPL[2])}</span>'
    parts = []
    if cov.ops:
        titles = {op: cov.schemas[op] or "(no definition: kernels only)" for op in cov.ops}
        parts.append(f"<p>{len(cov.ops)} operators x {len(cov.keys)} dispatch keys (highest priority last). Hover "
                     f"over a cell for the rule that chose its kernel and where that kernel was registered, over "
                     f"an operator for its schema.</p>\n")
        summary = core_aten_summary(cov, wrap=False)
        if summary is not None:
            parts.append(f'<p id="core-aten">{esc(summary)}</p>\n')
        parts.append(_html_table("operator", cov.ops, cov.keys, cov.cells, cov.py_cells, titles,
                                 _support_columns(cov)))
    if cov.hops:
        titles = {h: f"opdispatch.ops.higher_order.{h}: a HigherOrderOperator, dispatched in Python to its "
                     f"py_impl kernels" for h in cov.hops}
        parts.append(f'<h2 id="higher-order">Higher-order operators</h2>\n<p>{len(cov.hops)} higher-order '
                     f"operators x {len(cov.hop_keys)} dispatch keys. They have no C++ entry: every kernel is a "
                     f"py_impl kernel (per key, alias keys included; at the Python key, per mode class and tensor "
                     f"subclass), and the keys they skip are fallthroughs.</p>\n")
        parts.append(_html_table("higher-order operator", cov.hops, cov.hop_keys, cov.hop_cells, {}, titles))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f"<style>{_CSS}</style></head><body>\n<h1>{esc(title)}</h1>\n"
            f'<div class="legend">{legend}</div>\n{"".join(parts)}</body></html>\n')
