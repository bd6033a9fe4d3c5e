"""`python -m opdispatch coverage`: operators x dispatch keys, each cell
saying what serves the key (a kernel registered there, an alias-key kernel
and which, a backend fallback, a fallthrough, or nothing), as text or as an
HTML page with the registration sites on hover."""
from __future__ import annotations

import dataclasses
import html
from typing import Optional

from . import _C
from ._introspection import TableEntry, table_entries

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
    "missing": (".", "", "nothing serves the key: calling raises"),
}


def cell_kind(entry: TableEntry) -> str:
    """The key of :data:`KINDS` for one table entry."""
    if not entry.served:
        return "missing"
    if entry.fallthrough:
        return "fallthrough"
    if entry.rule == "ambiguous autogradother":
        return "ambiguous"
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
    least one of the operators, by priority; ``cells``: (op, key) -> entry."""

    ops: list[str]
    schemas: dict[str, str]
    keys: list[str]
    cells: dict[tuple[str, str], TableEntry]


def coverage(namespace: Optional[str] = None) -> Coverage:
    """The coverage of the operators of ``namespace`` (all operators if None).
    Raises ValueError if the namespace has no operators."""
    ops = sorted(n for n in _C._dispatch_get_all_op_names() if namespace is None or n.split("::")[0] == namespace)
    if not ops:
        raise ValueError(f"no operators in namespace {namespace!r}")
    cells: dict[tuple[str, str], TableEntry] = {}
    schemas = {}
    order: list[str] = []
    for op in ops:
        name, _, overload = op.partition(".")
        try:
            schemas[op] = str(_C._dispatch_find_schema_or_throw(name, overload).schema)
        except RuntimeError:
            schemas[op] = ""  # kernels registered without a definition
        entries = table_entries(op)
        order = list(entries)
        for key, entry in entries.items():
            cells[op, key] = entry
    keys = [k for k in order if any(cells[op, k].served for op in ops)]
    return Coverage(ops, schemas, keys, cells)


def render_text(cov: Coverage) -> str:
    """A grid of one-letter codes (legend first), the key names written downwards above their columns."""
    width = max(len(op) for op in cov.ops)
    tall = max(len(k) for k in cov.keys)
    lines = ["Legend:", *(f"  {code}  {meaning}" for code, _, meaning in KINDS.values()), ""]
    for row in range(tall):
        lines.append(" " * (width + 2) + " ".join(k[row] if row < len(k) else " " for k in cov.keys))
    for op in cov.ops:
        codes = " ".join(KINDS[cell_kind(cov.cells[op, k])][0] for k in cov.keys)
        lines.append(f"{op:<{width}}  {codes}")
    return "\n".join(lines)


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
"""


def _hover(op: str, entry: TableEntry) -> str:
    text = f"{op} at {entry.key}\n[{entry.rule}] {entry.describe()}"
    if entry.served:
        text += f"\n{'fallthrough ' if entry.fallthrough else ''}{entry.origin}"
    return text


def render_html(cov: Coverage, title: str) -> str:
    """A self-contained HTML page: a legend, then the table (operators as
    rows, keys as columns); each cell's tooltip gives the rule and the
    kernel's registration site, each operator's its schema."""
    esc = html.escape
    legend = "".join(f'<span class="{kind}">{esc(label or "none")}: {esc(meaning)}</span>'
                     for kind, (_, label, meaning) in KINDS.items())
    head = "".join(f"<th>{esc(k)}</th>" for k in cov.keys)
    rows = []
    for op in cov.ops:
        cells = []
        for k in cov.keys:
            entry = cov.cells[op, k]
            kind = cell_kind(entry)
            cells.append(f'<td class="{kind}" title="{esc(_hover(op, entry))}">{esc(KINDS[kind][1])}</td>')
        schema = cov.schemas[op] or "(no definition: kernels only)"
        rows.append(f'<tr><th title="{esc(schema)}">{esc(op)}</th>{"".join(cells)}</tr>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f"<style>{_CSS}</style></head><body>\n<h1>{esc(title)}</h1>\n"
            f"<p>{len(cov.ops)} operators x {len(cov.keys)} dispatch keys (highest priority last). Hover over a "
            f"cell for the rule that chose its kernel and where that kernel was registered, over an operator for "
            f'its schema.</p>\n<div class="legend">{legend}</div>\n'
            f'<table><thead><tr><th>operator</th>{head}</tr></thead>\n<tbody>\n{chr(10).join(rows)}\n'
            f"</tbody></table>\n</body></html>\n")
