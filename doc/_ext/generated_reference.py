"""Sphinx extension: the reference tables that would drift if written by hand, made from the code
when the docs are built: every node's parameters from its declarations (type, default, range,
read-only, description: what ``ros2 param describe`` shows) and every command's options from
the command line's own parser. A renamed parameter or option changes the docs."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "reference" / "_generated"
NODES = {"rbd_dynamics": ("dynamics_node", "DynamicsNode"),  # node name: module, class
         "rbd_floating_base": ("floating_base_node", "FloatingBaseNode"),
         "rbd_simulator": ("simulator_node", "SimulatorNode")}
TYPES = {1: "bool", 2: "integer", 3: "double", 4: "string", 5: "byte[]", 6: "bool[]",
         7: "integer[]", 8: "double[]", 9: "string[]"}


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _yaml(value: Any) -> str:
    """A parameter's value as a YAML parameter file writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        return "[" + ", ".join(_yaml(v) for v in list(value)) + "]"
    return repr(value)


@contextmanager
def in_process(name: str, urdf: str, *ros_args: str) -> Iterator[Any]:
    """The node ``name`` (a key of NODES) started in this process, on loopback in a domain of
    its own, with ``urdf`` as its robot_description and ``ros_args`` (``--params-file ...``)."""
    import importlib

    import rclpy
    from rclpy.parameter import Parameter

    from rbd_ros.local_ros import TESTS, isolate

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
    return rows


def parameters_page(node: str) -> str:
    lines = ["| parameter | type | default | range | what it does |", "|---|---|---|---|---|"]
    for name, kind, default, span, text in node_parameters(node):
        lines.append(f"| `{name}` | {kind} | {_cell(default) and f'`{_cell(default)}`'} | "
                     f"{span} | {_cell(text)} |")
    return "\n".join(lines) + "\n"


def cli_page() -> str:
    from rbd_ros.cli import parser

    os.environ["COLUMNS"] = "100"  # argparse wraps its help to this width
    top = parser()
    out = ["```text", top.format_help().rstrip(), "```", ""]
    for action in top._actions:  # argparse has no public list of its subcommands
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += [f"## rbd-ros {name}", "", "```text", sub.format_help().rstrip(), "```",
                        ""]
    return "\n".join(out)


def generate(app: Any = None) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for node, (module, _) in NODES.items():
        (OUT / f"{module}_parameters.md").write_text(parameters_page(node))
    (OUT / "cli.md").write_text(cli_page())


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True, "version": "1"}
