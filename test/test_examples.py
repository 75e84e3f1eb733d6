"""The commands the README and the docs show stay true to the code: every `rbd-ros` command line
parses with the command's own parser, every `ros2 launch rbd_ros ...` names a launch file of
the package and only arguments it declares, every `ros2 run rbd_ros ...` an executable it
installs. (What the suite can also run, it runs: the demo, the service tutorial's client.)"""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest

from rbd_ros.cli import parser, split_ros_args

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "doc").rglob("*.md"))]


def commands() -> list[tuple[str, list[str]]]:
    """(page, words) for every command of a bash block: continuation lines and quotes over
    several lines joined, comments dropped."""
    found = []
    for page in PAGES:
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(), re.S):
            text = ""
            for line in block.replace("\\\n", " ").splitlines():
                text += line + "\n"
                try:
                    words = shlex.split(text, comments=True)
                except ValueError:  # a quote still open: the command goes on
                    continue
                if words:
                    found.append((str(page.relative_to(ROOT)), words))
                text = ""
    return found


def launch_arguments(name: str) -> set[str]:
    tree = ast.parse((ROOT / "launch" / name).read_text())
    return {str(node.args[0].value) for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", "") == "DeclareLaunchArgument"
            and isinstance(node.args[0], ast.Constant)}


def executables() -> set[str]:
    text = (ROOT / "setup.py").read_text()
    return set(re.findall(r'"([\w-]+) = rbd_ros[\w.]*:main"', text))


def test_the_pages_show_commands() -> None:
    kinds = {words[0] for _, words in commands()}
    assert {"ros2", "bash", ".venv/bin/rbd-ros"} <= kinds, kinds


@pytest.mark.parametrize("page,words", commands())
def test_each_command_is_one_the_code_takes(page: str, words: list[str]) -> None:
    if "&&" in words:
        words = words[len(words) - words[::-1].index("&&"):]
    command = " ".join(words)
    if words[0].endswith("rbd-ros") or words[:4] == ["ros2", "run", "rbd_ros", "rbd-ros"]:
        argv, _ = split_ros_args(words[1:] if words[0].endswith("rbd-ros") else words[4:])
        try:
            parser().parse_args(argv)
        except SystemExit as e:
            pytest.fail(f"{page}: `{command}` does not parse (exit {e.code})")
    elif words[:3] == ["ros2", "launch", "rbd_ros"]:
        declared = launch_arguments(words[3])
        given = [w.split(":=")[0] for w in words[4:] if ":=" in w]
        assert set(given) <= declared, f"{page}: {sorted(set(given) - declared)} not declared"
    elif words[:3] == ["ros2", "run", "rbd_ros"]:
        assert words[3] in executables(), f"{page}: no executable {words[3]}"
