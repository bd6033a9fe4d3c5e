"""Sphinx extension: the source's ``Note [Title]`` blocks as a page, and every
mention of ``Note [Title]`` in the documentation (pages and docstrings) as a
link to its block there.

A note is defined in the source as a comment line ``// Note [Title]`` (C++)
or ``# Note [Title]`` (Python), its text the comment lines that follow, or as
a line ``Note [Title]`` alone in a Python docstring, its text the lines that
follow up to the end of the docstring. The ``design-notes`` directive renders
them all; a mention of a title no block defines is a build warning (an error
under ``-W``), so references stay true."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

_COMMENT_NOTE = re.compile(r"^\s*(//+|#) Note \[([^\]]+)\]\s*$")
_DOCSTRING_NOTE = re.compile(r"^\s*Note \[([^\]]+)\]\s*$")
_MENTION = re.compile(r"Note\s+\[([^\]]+)\]")
_PAGE = "notes"


@dataclass(frozen=True)
class Note:
    title: str
    file: str  # relative to the repository
    line: int
    text: str

    @property
    def anchor(self) -> str:
        return "note-" + re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")


def _normal(title: str) -> str:
    """A title as written across wrapped comment lines: markers and runs of white space folded."""
    return re.sub(r"\s+", " ", re.sub(r"\n\s*(//+|#)?", " ", title)).strip()


def _notes_of(path: Path, repo: Path) -> list[Note]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        comment = _COMMENT_NOTE.match(line)
        docstring = None if comment or path.suffix != ".py" else _DOCSTRING_NOTE.match(line)
        if not comment and not docstring:
            continue
        body = []
        if comment:
            marker = comment.group(1)
            for following in lines[i + 1:]:
                stripped = following.strip()
                if not stripped.startswith(marker) or _COMMENT_NOTE.match(following):
                    break
                body.append(stripped[len(marker):].removeprefix(" "))
        else:
            for following in lines[i + 1:]:
                if '"""' in following or _DOCSTRING_NOTE.match(following):
                    body.append(following.split('"""', 1)[0].strip())
                    break
                body.append(following.strip())
        title = (comment.group(2) if comment else docstring.group(1)).strip()
        found.append(Note(title, str(path.relative_to(repo)), i + 1, "\n".join(body).strip()))
    return found


def collect(repo: Path) -> dict[str, Note]:
    """Every note of the C++ and Python sources under ``repo``, by title."""
    notes: dict[str, Note] = {}
    files = sorted([*repo.glob("csrc/**/*.h"), *repo.glob("csrc/**/*.cpp"), *repo.glob("python/**/*.py")])
    for path in files:
        for note in _notes_of(path, repo):
            notes.setdefault(note.title, note)
    return notes


class DesignNotes(Directive):
    """``.. design-notes::``: every note, by title, each with where it is in the source."""

    def run(self) -> list[nodes.Node]:
        env = self.state.document.settings.env
        out: list[nodes.Node] = []
        for note in sorted(env.app.design_notes.values(), key=lambda n: n.title.lower()):
            section = nodes.section(ids=[note.anchor])
            section += nodes.title(text=f"Note [{note.title}]")
            section += nodes.paragraph(text=f"{note.file}, line {note.line}")
            section += nodes.literal_block(text=note.text)
            out.append(section)
        return out


def _link_mentions(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    notes = app.design_notes
    for text in list(doctree.findall(nodes.Text)):
        parent = text.parent
        if isinstance(parent, (nodes.literal_block, nodes.title, nodes.reference)) or docname == _PAGE:
            continue
        source = str(text)
        if not _MENTION.search(source):
            continue
        pieces: list[nodes.Node] = []
        last = 0
        for match in _MENTION.finditer(source):
            note = notes.get(_normal(match.group(1)))
            if note is None:
                if match.group(1) != "...":
                    logger.warning("Note [%s] is mentioned but no source block defines it", _normal(match.group(1)),
                                   location=parent)
                continue
            pieces.append(nodes.Text(source[last:match.start()]))
            uri = app.builder.get_relative_uri(docname, _PAGE) + "#" + note.anchor
            pieces.append(nodes.reference("", match.group(0), refuri=uri))
            last = match.end()
        if pieces:
            pieces.append(nodes.Text(source[last:]))
            parent.replace(text, pieces)


def setup(app: Sphinx) -> dict[str, bool]:
    app.design_notes = collect(Path(app.confdir).parent)
    app.add_directive("design-notes", DesignNotes)
    app.connect("doctree-resolved", _link_mentions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
