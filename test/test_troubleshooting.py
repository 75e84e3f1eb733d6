"""Every text the nodes and the ``rbd-ros`` commands can say (a warning, a line of ``~/status``,
a refusal of an input, of a service request or of a command's options, a report's warning) is
on the troubleshooting page, with its cause and fix."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rbd_ros"
#: where users meet the texts: the nodes, the commands and what they read and write
SOURCES = [*sorted((PACKAGE / "nodes").glob("*.py")), PACKAGE / "app" / "cli.py",
           *sorted((PACKAGE / "wire").glob("*.py")),
           *(PACKAGE / "dynamics" / "estimation" / f for f in ("timeline.py", "legged.py")),
           *sorted((PACKAGE / "bag").glob("*.py")), *sorted((PACKAGE / "identify").glob("*.py"))]
#: the calls that say something, and which argument is the text
SAYING = {"warn": 1, "report": 1, "say": 0, "warning": 0, "error": 0, "InputError": 0,
          "BagError": 0, "OutputError": 0, "ModelError": 0, "TooFewStatesError": 0,
          "ValueError": 0}
#: functions whose returned text a node says (a timeline's notes, a stale joint's, a refusal's)
RETURNING = {"add", "at", "stale_note", "_unknown"}
SHORTEST = 12  # shorter pieces ("(limit ", " ms ") say nothing on their own


def _pieces(node: ast.AST) -> Iterator[str]:
    """The literal parts of a text: a string, an f-string's constant parts, a sum of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.JoinedStr):
        for value in node.values:
            yield from _pieces(value)
    elif isinstance(node, ast.BinOp):
        yield from _pieces(node.left)
        yield from _pieces(node.right)
    elif isinstance(node, ast.IfExp):
        yield from _pieces(node.body)
        yield from _pieces(node.orelse)
    elif isinstance(node, ast.Tuple):  # a (value, note) returned
        for item in node.elts:
            yield from _pieces(item)


def said() -> dict[str, str]:
    """Each literal piece (stripped, at least SHORTEST long) of what is said: where."""
    out = {}
    for path in SOURCES:
        tree = ast.parse(path.read_text())
        texts: list[ast.AST] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                at = SAYING.get(name)
                if at is not None and len(node.args) > at:
                    texts.append(node.args[at])
            elif isinstance(node, ast.FunctionDef) and node.name in RETURNING:
                texts += [r.value for r in ast.walk(node)
                          if isinstance(r, ast.Return) and r.value is not None]
            elif isinstance(node, ast.JoinedStr | ast.Constant) and \
                    next(_pieces(node), "").startswith("warning: "):  # a report's
                texts.append(node)
        for text in texts:
            for piece in _pieces(text):
                if len(piece.strip()) >= SHORTEST:
                    where = path.relative_to(PACKAGE)
                    out[piece.strip()] = f"{where}:{getattr(text, 'lineno', '?')}"
    return out


def test_every_text_the_nodes_and_commands_say_is_on_the_troubleshooting_page() -> None:
    page = (ROOT / "doc" / "troubleshooting.md").read_text()
    texts = said()
    assert len(texts) > 60, "the texts were not found: has the nodes' code moved?"
    missing = {t: where for t, where in texts.items() if t not in page}
    assert not missing, ("add these to doc/troubleshooting.md, with their cause and fix:\n"
                         + "\n".join(f"  {where}: {t!r}" for t, where in missing.items()))
