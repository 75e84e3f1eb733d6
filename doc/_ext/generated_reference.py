"""Sphinx extension: the reference tables that would drift if written by hand, made from the code
when the docs are built: every node's parameters from its declarations (type, default, range,
read-only, description: what ``ros2 param describe`` shows) and every command's options from
the command line's own parser. A renamed parameter or option changes the docs."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "reference" / "_generated"
NODES = (("dynamics_node", "DynamicsNode"), ("floating_base_node", "FloatingBaseNode"),
         ("simulator_node", "SimulatorNode"))
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


def node_parameters(module: str, cls: str) -> list[tuple[str, str, str, str, str]]:
    """(name, type, default, range, description) of each parameter the node declares, read
    from a node started in this process (on loopback, in a domain of its own)."""
    import importlib

    import rclpy
    from rclpy.exceptions import ParameterUninitializedException
    from rclpy.parameter import Parameter

    from rbd_ros.local_ros import TESTS, isolate
    from rbd_ros.robots import ARM, QUADRUPED

    isolate(*TESTS)
    urdf = (QUADRUPED if "floating" in module else ARM).read_text()
    context = rclpy.Context()
    rclpy.init(context=context, args=["--ros-args", "--log-level", "error"])
    try:
        node = getattr(importlib.import_module(f"rbd_ros.nodes.{module}"), cls)(
            context=context, parameter_overrides=[Parameter("robot_description",
                                                            value=urdf)])
        rows = []
        for name in sorted(node.get_parameters_by_prefix("")):
            if name in ("use_sim_time", "start_type_description_service"):  # rclpy's own
                continue
            d = node.describe_parameter(name)
            try:
                value = node.get_parameter(name).value
            except ParameterUninitializedException:
                value = None  # declared with a type only: unset until given
            default = "" if value is None or name == "robot_description" else _yaml(value)
            span = ""
            for r in (*d.floating_point_range, *d.integer_range):
                span = f"[{r.from_value:g}, {r.to_value:g}]"
            kind = TYPES.get(d.type, "?") + (", read-only" if d.read_only else "")
            rows.append((name, kind, default, span, d.description))
        node.destroy_node()
        return rows
    finally:
        rclpy.shutdown(context=context)


def parameters_page(module: str, cls: str) -> str:
    lines = ["| parameter | type | default | range | what it does |", "|---|---|---|---|---|"]
    for name, kind, default, span, text in node_parameters(module, cls):
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
    for module, cls in NODES:
        (OUT / f"{module}_parameters.md").write_text(parameters_page(module, cls))
    (OUT / "cli.md").write_text(cli_page())


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True, "version": "1"}
