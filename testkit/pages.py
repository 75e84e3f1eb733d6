"""What the documentation shows a program printing, or drawing, is what it prints or draws."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def assert_shown(page: str, first: str, printed: str) -> None:
    """The ``text`` block of ``page`` that starts with the line ``first`` is ``printed``, line
    by line in order: a line ending in ``...`` stands for any line it begins, and a line of
    just ``...`` for any lines."""
    blocks = [b for b in re.findall(r"```text\n(.*?)```", (ROOT / page).read_text(), re.S)
              if b.startswith(first)]
    assert len(blocks) == 1, f"{page}: {len(blocks)} text blocks start with {first!r}"
    lines = iter(printed.splitlines())
    for shown in blocks[0].strip("\n").split("\n"):
        if shown.strip() == "...":
            continue
        for line in lines:
            if line == shown or (shown.endswith("...") and line.startswith(shown[:-3])):
                break
        else:
            raise AssertionError(f"{page} shows {shown!r}, which is not printed (in that "
                                 f"order):\n{printed}")


def assert_drawn_as_committed(drawn: Path) -> None:
    """The picture ``drawn`` is the committed ``doc/images/<its name>`` (to antialiasing)."""
    from matplotlib import pyplot as plt

    a, b = plt.imread(drawn), plt.imread(ROOT / "doc" / "images" / drawn.name)
    assert a.shape == b.shape and np.abs(a - b).max() < 0.05, \
        f"{drawn.name} changed: redraw it with scripts/pictures.py"
