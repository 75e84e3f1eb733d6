"""The house's floors (doc/design.md's table) hold: every module of rbd_ros/, launch/, bench/
and testkit/ (the helpers of the tests and the benchmarks) has a floor, and none imports from a
floor above its own. The tests themselves (test/) stand above every floor and are not
checked."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("rbd_ros", "launch", "bench", "testkit")


def floors() -> list[tuple[str, int]]:
    """(path prefix, floor) from the table in doc/design.md, longest prefix first."""
    rows = re.findall(r"^\| (\d) \| .* \| (.*) \|$", (ROOT / "doc" / "design.md").read_text(),
                      re.M)
    out = [(path, int(floor)) for floor, where in rows for path in re.findall(r"`([^`]+)`",
                                                                              where)]
    assert out, "doc/design.md: no floor table"
    return sorted(out, key=lambda p: -len(p[0]))


def floor_of(path: Path, table: list[tuple[str, int]]) -> int | None:
    rel = path.relative_to(ROOT).as_posix()
    return next((f for prefix, f in table if rel == prefix or (prefix.endswith("/") and
                                                              rel.startswith(prefix))), None)


def modules() -> list[Path]:
    out = []
    for top in CHECKED:
        for p in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" in p.parts:
                continue
            out.append(p)
    return out


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path``, relative ones made absolute; for ``from X
    import Y`` both X and X.Y (Y may be a module)."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (".".join(package[: len(package) - node.level + 1]) if node.level else "")
            name = ".".join(x for x in (base, node.module or "") if x)
            out += [(node.lineno, name)] + [(node.lineno, f"{name}.{a.name}")
                                            for a in node.names]
    return out


def source(module: str) -> Path | None:
    """The file of ``module`` if it is one of the checked ones (bench's and the tests' helpers
    are imported by their own names, from their folders)."""
    parts = module.split(".")
    for base in (ROOT, ROOT / "bench", ROOT / "testkit"):
        p = base.joinpath(*parts)
        for f in (p.with_suffix(".py"), p / "__init__.py"):
            if f.is_file() and f.resolve().is_relative_to(ROOT) and not f.name.startswith("test_"):
                return f
    return None


def test_no_import_runs_up_a_floor() -> None:
    table = floors()
    homeless, up = [], []
    for path in modules():
        mine = floor_of(path, table)
        if mine is None:
            homeless.append(str(path.relative_to(ROOT)))
            continue
        for line, module in imported(path):
            target = source(module)
            theirs = floor_of(target, table) if target else None
            if theirs is not None and theirs > mine:
                up.append(f"{path.relative_to(ROOT)}:{line} (floor {mine}) imports {module} "
                          f"(floor {theirs}): an import runs back up")
    assert not homeless, f"modules on no floor of doc/design.md's table: {homeless}"
    assert not up, "\n".join(up)


#: the core's rooms (doc/design.md), each importing only from those before it
CORE_ROOMS = ("errors", "multibody", "algorithm", "contact", "estimation", "control")


def test_the_core_rooms_import_only_the_rooms_before_them() -> None:
    core = ROOT / "rbd_ros" / "dynamics"
    wrong = []
    for path in sorted(core.rglob("*.py")):
        room = path.relative_to(core).parts[0].removesuffix(".py")
        if room == "__init__":
            continue
        assert room in CORE_ROOMS, f"{path.relative_to(ROOT)}: in no room of CORE_ROOMS"
        for line, module in imported(path):
            parts = module.split(".")
            if parts[:2] == ["rbd_ros", "dynamics"] and len(parts) > 2 and parts[2] in CORE_ROOMS \
                    and CORE_ROOMS.index(parts[2]) > CORE_ROOMS.index(room):
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({room}) imports {module} "
                             f"({parts[2]}, a room after it)")
    assert not wrong, "\n".join(wrong)
