"""Checks the built HTML documentation (issue 34): every relative link points
at a file of the build and, with a #fragment, at an id in it; no page shows a
path of the machine that built it (/root/, /home/, /tmp/, /work/). External
links are not fetched (CI reaches only the package registries).

    python .ci/check_links.py build/docs/html
"""
from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

MACHINE_PATH = re.compile(r"(?<![\w.])/(root|home|tmp|work)/[\w.-]+")


class Page(HTMLParser):
    """The hrefs and ids of one page."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name == "href" and value and tag == "a":
                self.hrefs.append(value)


def main(root: Path) -> int:
    pages = {p: Page() for p in sorted(root.rglob("*.html"))}
    for path, page in pages.items():
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
    problems = []
    for path, page in pages.items():
        if "_modules" in path.parts:  # viewcode's copies of the source
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in MACHINE_PATH.finditer(re.sub(r"<[^>]+>", " ", text)):
            problems.append(f"{path.relative_to(root)}: a machine path {match.group(0)!r}")
        for href in page.hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith("mailto:"):
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{path.relative_to(root)}: dead link {href!r}")
            elif parts.fragment and target.suffix == ".html" and target in pages:
                if unquote(parts.fragment) not in pages[target].ids:
                    problems.append(f"{path.relative_to(root)}: link {href!r} names no id in {target.name}")
    for problem in problems:
        print(problem)
    print(f"checked {len(pages)} pages: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
