"""The coverage page in a real browser (run by .ci/browser-check.sh): writes
`python -m opdispatch coverage --html` for built-in, custom (Library and
custom_op) and C++ extension operators, has headless Chromium render it,
checks the DOM Chromium built (every operator a row, each cell's kind and
hover text, py_impl kernels marked, the higher-order operators' section) and
the screenshot (the cell colours and the py_impl mark are painted), and
leaves the page and the PNG in OUT_DIR for a person to look at.

Usage: python .ci/browser_check.py OUT_DIR
"""
from __future__ import annotations

import html.parser
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parent.parent
CUSTOM_OPS = textwrap.dedent("""\
    # Custom operators for the browser check: one of each kind of cell.
    import opdispatch
    from opdispatch.library import Library, custom_op, fallthrough_kernel

    lib = Library("browsercheck", "DEF")
    lib.define("direct(Tensor x) -> Tensor")
    lib.impl("direct", lambda x: x, "CPU")
    lib.impl("direct", fallthrough_kernel, "PrivateUse1")
    lib.define("implicit(Tensor x) -> Tensor")
    lib.impl("implicit", lambda x: x, "CompositeImplicitAutograd")

    @custom_op("browsercheck::made_by_custom_op", mutates_args=())
    def made_by_custom_op(x: opdispatch.Tensor) -> opdispatch.Tensor:
        return x.clone()

    @opdispatch.ops.browsercheck.direct.default.py_impl(opdispatch._C.DispatchKey.Meta)
    def direct_meta(x):
        return x
""")
#: Colours of _coverage's CSS that the screenshot must show: kernel, Autograd, backend fallback, CIA, the
#: py_impl mark, a higher-order operator's mode kernels.
PAINTED = {"kernel": (0x2E, 0x7D, 0x32), "Autograd": (0x64, 0xB5, 0xF6), "fallback": (0xFF, 0xB7, 0x4D),
           "CompositeImplicitAutograd": (0xAE, 0xD5, 0x81), "pyimpl": (0x7B, 0x1F, 0xA2),
           "modes": (0xFF, 0xF1, 0x76), "CompositeExplicitAutograd": (0x81, 0xC7, 0x84)}


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    sys.exit("browser check: no Chromium on PATH (Debian: apt-get install chromium)")


def browser(*args: str) -> subprocess.CompletedProcess:
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


class Rows(html.parser.HTMLParser):
    """The table rows of the DOM Chromium dumped: {operator: [(class, text, title)]}."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[tuple[str, str, str]]] = {}
        self._row: list | None = None
        self._cell: list | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr":
            self._row = []
        elif tag in ("th", "td") and self._row is not None:
            self._cell = [a.get("class", ""), "", a.get("title", "")]

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None and self._row is not None:
            self._row.append(tuple(self._cell))
            self._cell = None
        elif tag == "tr" and self._row:
            self.rows[self._row[0][1]] = self._row[1:]
            self._row = None


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OPDISPATCH_EXTENSIONS_DIR": str(out / "extensions"), "PYTHONPATH": str(out)}
    (out / "browsercheck_ops.py").write_text(CUSTOM_OPS)
    build = subprocess.run(
        [sys.executable, "-c", "import glob, opdispatch.cpp_extension as c; "
         "print(c.load('myext', glob.glob('examples/extension/*.cpp')).path)"],
        cwd=REPO, env=env, capture_output=True, text=True, check=True, timeout=900)
    page = out / "coverage.html"
    subprocess.run([sys.executable, "-m", "opdispatch", "coverage", "--html", str(page), "--load",
                    build.stdout.strip(), "--import", "browsercheck_ops"], env=env, check=True, timeout=300)

    dom = browser("--dump-dom", page.as_uri()).stdout
    rows = Rows()
    rows.feed(dom)
    header = rows.rows.pop("operator")
    keys = [text for _, text, _ in header]
    hop_keys = [text for _, text, _ in rows.rows.pop("higher-order operator")]
    for op in ("od::add.Tensor", "myext::fma", "myext::relu_", "browsercheck::direct",
               "browsercheck::made_by_custom_op"):
        assert op in rows.rows, f"row {op} missing from the rendered page"
    cell = dict(zip(keys, rows.rows["myext::fma"]))
    assert cell["CPU"][:2] == ("kernel", "kernel") and "cpu_kernels.cpp:" in cell["CPU"][2], cell["CPU"]
    assert cell["AutogradCPU"][0] == "fallback" and "_library/autograd.py:" in cell["AutogradCPU"][2], cell["AutogradCPU"]
    assert dict(zip(keys, rows.rows["myext::relu_"]))["ADInplaceOrView"][0] == "kernel"
    direct = dict(zip(keys, rows.rows["browsercheck::direct"]))
    assert direct["PrivateUse1"][:2] == ("fallthrough", "skip") and "browsercheck_ops.py:7" in direct["CPU"][2]
    assert dict(zip(keys, rows.rows["browsercheck::implicit"]))["CPU"][:2] == ("CompositeImplicitAutograd", "CIA")
    assert dict(zip(keys, rows.rows["od::add.Tensor"]))["AutogradCPU"][0] == "Autograd"
    assert direct["Meta"][0] == "missing pyimpl" and "direct_meta at Python" in direct["Meta"][2], direct["Meta"]
    cond = dict(zip(hop_keys, rows.rows["cond"]))
    assert cond["Python"][:2] == ("modes", "modes") and "FakeTensorMode" in cond["Python"][2], cond["Python"]
    assert cond["CPU"][0] == "CompositeExplicitAutograd" and cond["PythonDispatcher"][0] == "fallthrough"

    png = out / "coverage.png"
    browser("--window-size=1600,1200", f"--screenshot={png}", page.as_uri())
    colours = {rgb for _, rgb in Image.open(png).convert("RGB").getcolors(maxcolors=1 << 24)}
    missing = [kind for kind, rgb in PAINTED.items() if rgb not in colours]
    assert not missing, f"the screenshot shows no cell painted as {missing}"
    # The higher-order operators alone (coverage higher_order): their cells, painted.
    hop_page = out / "coverage-higher-order.html"
    subprocess.run([sys.executable, "-m", "opdispatch", "coverage", "higher_order", "--html", str(hop_page)],
                   env=env, check=True, timeout=300)
    hop_png = out / "coverage-higher-order.png"
    browser("--window-size=1600,700", f"--screenshot={hop_png}", hop_page.as_uri())
    pixels = Image.open(hop_png).convert("RGB")
    colours = {rgb for _, rgb in pixels.crop((0, 250, *pixels.size)).getcolors(maxcolors=1 << 24)}  # below the legend
    missing = [kind for kind in ("modes", "Autograd", "CompositeExplicitAutograd") if PAINTED[kind] not in colours]
    assert not missing, f"the higher-order operators' screenshot shows no cell painted as {missing}"
    print(f"browser check passed: {len(rows.rows) - 2} operators x {len(keys)} keys and 2 higher-order operators "
          f"x {len(hop_keys)} keys rendered by Chromium; look at {png} and {hop_png}")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
