"""The parts of the docs that would drift if written by hand, made from the code: every node's
parameters from its declarations (type, default, range, read-only, description: what ``ros2
param describe`` shows), every service's and message's fields from its ``.srv`` or ``.msg``,
every command's options from the command line's own parser, and the tutorials' programs (the
ones the suite runs) shown whole. They sit in the Markdown pages themselves, so the pages read
whole where they are read (the repository's web view, an editor), between ``<!-- generated:
KEY -->`` and ``<!-- end generated -->``; KEY is ``parameters NODE``, ``service TYPE``,
``message TYPE``, ``cli``, ``file PATH`` or ``api MODULE [NAME ...]`` (signatures and
docstrings). A
renamed parameter, field or option, or an edited example, leaves the page stale, and
``test_docs`` says so.

    .venv/bin/python doc/_ext/generated_reference.py           # rewrite what is stale
    .venv/bin/python doc/_ext/generated_reference.py --check   # exit 1, naming the stale pages
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[1]
ROOT = DOC.parent
REGION = re.compile(r"(<!-- generated: (.+?) -->\n)(.*?)(<!-- end generated -->)", re.S)
FENCE = {".py": "python", ".yaml": "yaml", ".sh": "bash"}
NODES = {"rbd_dynamics": ("dynamics_node", "DynamicsNode"),  # node name: module, class
         "rbd_floating_base": ("floating_base_node", "FloatingBaseNode"),
         "rbd_simulator": ("simulator_node", "SimulatorNode"),
         "rbd_trajectory_controller": ("trajectory_controller_node", "TrajectoryControllerNode")}
TYPES = {1: "bool", 2: "integer", 3: "double", 4: "string", 5: "byte[]", 6: "bool[]",
         7: "integer[]", 8: "double[]", 9: "string[]"}


def _cell(text: Any) -> str:
    """Text for a Markdown table's cell, shown as written (no HTML tag, no emphasis)."""
    return (str(text).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")
            .replace("*", "\\*"))


def _yaml(value: Any) -> str:
    """A parameter's value as a YAML parameter file writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        return "[" + ", ".join(_yaml(v) for v in list(value)) + "]"
    if isinstance(value, float) and math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return repr(value)


@contextmanager
def in_process(name: str, urdf: str, *ros_args: str) -> Iterator[Any]:
    """The node ``name`` (a key of NODES) started in this process, on loopback in a domain of
    its own, with ``urdf`` as its robot_description and ``ros_args`` (``--params-file ...``)."""
    import importlib

    import rclpy
    from rclpy.parameter import Parameter

    from rbd_ros.runtime.local_ros import TESTS, isolate

    module, cls = NODES[name]
    isolate(*TESTS)
    context = rclpy.Context()
    rclpy.init(context=context, args=["--ros-args", "--log-level", "fatal", *ros_args])
    try:
        node = getattr(importlib.import_module(f"rbd_ros.nodes.{module}"), cls)(
            context=context, parameter_overrides=[Parameter("robot_description", value=urdf)])
        try:
            yield node
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def node_parameters(name: str) -> list[tuple[str, str, str, str, str]]:
    """(name, type, default, range, description) of each parameter the node declares, read
    from the node started in this process."""
    from rclpy.exceptions import ParameterUninitializedException
    from rclpy.parameter import Parameter

    from rbd_ros.nodes.parameters import CONTACT_KEYS
    from rbd_ros.robots import ARM, QUADRUPED

    urdf = (QUADRUPED if "floating" in name else ARM).read_text()
    rows = []
    with in_process(name, urdf) as node:
        for param in sorted(node.get_parameters_by_prefix("")):
            if param in ("use_sim_time", "start_type_description_service"):  # rclpy's own
                continue
            d = node.describe_parameter(param)
            try:
                value = node.get_parameter(param).value
            except ParameterUninitializedException:
                value = None  # declared with a type only: unset until given
            default = "" if value is None or param == "robot_description" else _yaml(value)
            span = ""
            for r in (*d.floating_point_range, *d.integer_range):
                span = f"[{r.from_value:g}, {r.to_value:g}]"
            kind = TYPES.get(d.type, "?") + (", read-only" if d.read_only else "")
            rows.append((param, kind, default, span, d.description))
        keys = CONTACT_KEYS if "floating" in name else {}
    # declared per link of contact_links, from the parameter file: none for the defaults
    for key, (value, text) in keys.items():
        kind = TYPES.get(Parameter.Type.from_parameter_value(value).value, "?")
        rows.append((f"contacts.<link>.{key}", kind, _yaml(value), "", text))
    return sorted(rows)


def parameters_page(node: str) -> str:
    lines = ["| parameter | type | default | range | what it does |", "|---|---|---|---|---|"]
    for name, kind, default, span, text in node_parameters(node):
        lines.append(f"| `{name}` | {kind} | {_cell(default) and f'`{_cell(default)}`'} | "
                     f"{span} | {_cell(text)} |")
    return "\n".join(lines) + "\n"


def cli_page() -> str:
    from rbd_ros.app.cli import parser

    os.environ["COLUMNS"] = "100"  # argparse wraps its help to this width
    top = parser()
    out = ["```text", top.format_help().rstrip(), "```", ""]
    for action in top._actions:  # argparse has no public list of its subcommands
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += [f"## rbd-ros {name}", "", "```text", sub.format_help().rstrip(), "```",
                        ""]
    return "\n".join(out)


def interface_page(kind: str, name: str) -> str:
    """The service (``kind`` srv) or message (msg) type ``name`` of rbd_ros_interfaces, read
    from its file: its opening comment, then every field (of the request and the response)
    with the comment above it."""
    lines = (ROOT / "rbd_ros_interfaces" / kind / f"{name}.{kind}").read_text().splitlines()
    intro: list[str] = []
    rows = ["| | field | type | meaning |", "|---|---|---|---|"]
    part, comment = "request" if kind == "srv" else "", []
    for line in lines:
        text = line.strip()
        if text.startswith("#"):
            comment.append(text.lstrip("#").strip())
        elif not text:  # a comment block followed by a blank line is about the whole service
            intro += comment
            comment = []
        elif text == "---":
            part, comment = "response", []
        else:
            type_, field = text.split()[:2]
            rows.append(f"| {part} | `{field}` | {type_} | {_cell(' '.join(comment))} |")
            part, comment = "", []
    return f"`rbd_ros_interfaces/{kind}/{name}`: {' '.join(intro)}\n\n" + "\n".join(rows) + "\n"


ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc):`~?\.?([^`]+)`")


def _markdown(doc: str | None) -> str:
    """A docstring as Markdown: reST's roles and double backquotes as code, a ``::`` block
    fenced."""
    import inspect

    text = ROLE.sub(r"`\1`", inspect.cleandoc(doc or "")).replace("``", "`")
    out: list[str] = []
    block = False
    for line in text.splitlines():
        if block and line and not line.startswith("    "):
            out += ["```", ""] if out[-1] else ["```"]
            block = False
        if block:
            out.append(line[4:])
            continue
        if line.endswith("::") and line.strip() != "::":
            out.append(line[:-1])
            out += ["", "```text"]
            block = True
            continue
        out.append(line)
    while block and out and not out[-1]:
        out.pop()
    return "\n".join(out + (["```"] if block else [])).strip() + "\n"


def _signature(name: str, obj: Any) -> str:
    import inspect

    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):  # a compiled function without one
        sig = "(...)"
    sig = re.sub(r"(: |-> )'([^']*)'", r"\1\2", sig)  # annotations kept as strings
    return f"```python\n{'class ' if inspect.isclass(obj) else ''}{name}{sig}\n```\n"


def api_page(module_name: str, names: list[str]) -> str:
    """Each of ``names`` in the module (all of its ``__all__`` but submodules when none are
    named): its signature and docstring; for a class, each public method's too."""
    import importlib
    import inspect

    module = importlib.import_module(module_name)
    names = names or [n for n in module.__all__ if not inspect.ismodule(getattr(module, n))]
    out = []
    for name in names:
        obj = getattr(module, name)
        out += [f"### `{module_name}.{name}`", "", _signature(name, obj), _markdown(obj.__doc__)]
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not member.__doc__ or not (
                        inspect.isfunction(member) or isinstance(member, property)):
                    continue  # as autodoc's :members: does: the documented ones
                if isinstance(member, property):
                    out += [f"`{name}.{attr}` (property): {_markdown(member.__doc__)}"]
                    continue
                out += [f"#### `{module_name}.{name}.{attr}`", "", _signature(attr, member),
                        _markdown(member.__doc__)]
    return "\n".join(out)


def content(key: str) -> str:
    """What the region ``key`` holds."""
    kind, _, arg = key.partition(" ")
    if kind == "parameters":
        return parameters_page(arg)
    if kind == "cli":
        return cli_page()
    if kind == "service":
        return interface_page("srv", arg)
    if kind == "message":
        return interface_page("msg", arg)
    if kind == "api":
        module, *names = arg.split()
        return api_page(module, names)
    if kind == "file":
        text = (ROOT / arg).read_text()
        return f"```{FENCE.get(Path(arg).suffix, 'text')}\n{text}```\n"
    raise ValueError(f"unknown generated region {key!r}")


def stale(write: bool) -> list[Path]:
    """The pages whose generated regions differ from the code's; rewritten with ``write``."""
    made: dict[str, str] = {}
    out = []
    for page in sorted(DOC.rglob("*.md")):
        if "_build" in page.parts:
            continue
        text = page.read_text()
        new = REGION.sub(lambda m: m[1] + made.setdefault(m[2], content(m[2])) + m[4], text)
        if new != text:
            out.append(page)
            if write:
                page.write_text(new)
    return out


if __name__ == "__main__":
    import importlib.util

    if importlib.util.find_spec("rbd_ros") is None:  # not installed: this tree's
        sys.path.insert(0, str(ROOT))
    check = sys.argv[1:] == ["--check"]
    pages = stale(write=not check)
    for page in pages:
        print(f"{'stale' if check else 'rewritten'}: {page.relative_to(ROOT)}")
    sys.exit(1 if check and pages else 0)
