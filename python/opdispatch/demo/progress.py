"""A plain-text progress bar for one epoch: redrawn in place with ``\\r`` on a
terminal, a single summary line otherwise (logs, pipes, CI)."""
from __future__ import annotations

from typing import TextIO


class EpochProgress:
    """Progress of epoch ``epoch`` of ``epochs``, which has ``total`` batches.

    ``update(done, loss)`` after each batch redraws the bar when ``live``;
    ``finish(text)`` writes the final line (without the bar when not
    ``live``), ``text`` appended.
    """

    WIDTH = 30

    def __init__(self, stream: TextIO, epoch: int, epochs: int, total: int, live: bool) -> None:
        self.stream = stream
        self.prefix = f"epoch {epoch:>{len(str(epochs))}}/{epochs}"
        self.total = total
        self.live = live
        self.last = ""

    def _line(self, done: int, loss: float) -> str:
        count = f"{done:>{len(str(self.total))}}/{self.total}"
        if not self.live:
            return f"{self.prefix}  {count} batches  loss {loss:.4f}"
        filled = self.WIDTH * done // self.total
        bar = "#" * filled + "." * (self.WIDTH - filled)
        return f"{self.prefix} [{bar}] {count}  loss {loss:.4f}"

    def update(self, done: int, loss: float) -> None:
        self.last = self._line(done, loss)
        if self.live:
            self.stream.write("\r" + self.last)
            self.stream.flush()

    def finish(self, text: str = "") -> None:
        line = self.last + text
        self.stream.write(("\r" if self.live else "") + line + "\n")
        self.stream.flush()
