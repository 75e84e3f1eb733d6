"""The commands the README and the docs show stay true to the code: every `rbd-ros` command line
parses with the command's own parser, every `ros2 launch rbd_ros ...` names a launch file of
the package and only arguments it declares, every `ros2 run rbd_ros ...` an executable it
installs. (What the suite can also run, it runs: the demo, the service tutorial's client.)"""

from __future__ import annotations

import ast
import re
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rbd_ros.app.cli import parser, split_ros_args

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "doc" / "_ext"))  # the docs' generator starts our nodes
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


#: the robot each parameters file the pages show is written for, by its file name
YAML_ROBOTS = {"my_arm.yaml": "arm7", "anymal.yaml": "anymal_c", "talos.yaml": "talos",
               "dynamics.yaml": "arm7", "floating_base.yaml": "quadruped",  # (config/)
               "trajectory_controller.yaml": "arm7", "my_arm_control.yaml": "arm7"}
#: YAML files the pages show for other programs (checked by the tests of their pages)
FOREIGN = {"controllers.yaml": "ros2_control's controller manager",
           "moveit_controllers.yaml": "MoveIt"}


def parameter_files(foreign: bool = False) -> list[tuple[str, str, str]]:
    """(page, file name, text) of every YAML block that starts with ``# <name>.yaml``: our
    nodes' (``foreign``: other programs')."""
    found = []
    for page in PAGES:
        for block in re.findall(r"```yaml\n(.*?)```", page.read_text(), re.S):
            m = re.match(r"# (\S+\.yaml)\n", block)
            assert m is not None, f"{page}: a YAML block without its file name: {block[:60]}"
            if (m.group(1) in FOREIGN) == foreign:
                found.append((str(page.relative_to(ROOT)), m.group(1), block))
    return found


def test_the_pages_show_parameter_files() -> None:
    assert {name for _, name, _ in parameter_files()} | {
        "dynamics.yaml", "floating_base.yaml", "trajectory_controller.yaml"} == set(YAML_ROBOTS)


def robot_urdf(robot: str) -> str:
    """The URDF of a bundled robot or of one from example-robot-data (skipped without it)."""
    from rbd_ros.robots import ARM, QUADRUPED

    if robot in ("arm7", "quadruped"):
        return (ARM if robot == "arm7" else QUADRUPED).read_text()
    from pinref import robot_path  # skips without example-robot-data

    return Path(robot_path(robot)).read_text()


@contextmanager
def started(name: str, text: str, tmp_path: Path) -> Iterator[tuple[Any, str, dict[str, Any]]]:
    """(node, its name, the parameters the file sets) for the node a parameters file is for,
    started in this process (as the docs' generator starts it) with the file as its
    ``--params-file`` (rcl reads it, as for a launched node) on the robot the file is written
    for."""
    import yaml
    from generated_reference import in_process

    urdf = robot_urdf(YAML_ROBOTS[name])
    (tmp_path / name).write_text(text)
    (top,) = yaml.safe_load(text).items()
    key = top[0].removeprefix("/**/")

    def flat(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in tree.items():
            out.update(flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k: v})
        return out

    with in_process(key, urdf, "--params-file", str(tmp_path / name)) as node:
        yield node, key, flat(top[1]["ros__parameters"])


def graph_of(node: Any) -> dict[str, dict[str, list[str]]]:
    """The node's topics ("in", "out"), services and action servers as the ROS graph shows them
    (as the ros2 CLI sees them), once it shows every topic the node made: until then, under
    load, the graph's cache can show only part of them (a CI run saw only its action's)."""
    import time

    from rclpy.action import get_action_server_names_and_types_by_node

    me = (node.get_name(), node.get_namespace())
    own = ({s.topic_name for s in node.subscriptions}, {p.topic_name for p in node.publishers})
    deadline = time.monotonic() + 300
    while True:
        graph = {"in": dict(node.get_subscriber_names_and_types_by_node(*me)),
                 "out": dict(node.get_publisher_names_and_types_by_node(*me)),
                 "services": dict(node.get_service_names_and_types_by_node(*me)),
                 "actions": dict(get_action_server_names_and_types_by_node(node, *me))}
        if (own[0] <= graph["in"].keys() and own[1] <= graph["out"].keys()) or \
                time.monotonic() > deadline:
            return graph
        time.sleep(0.05)


@pytest.mark.parametrize("page,name,text", parameter_files())
def test_each_parameters_file_is_taken_by_its_node(page: str, name: str, text: str,
                                                   tmp_path: Path) -> None:
    """The node the file is for, started with it on the robot it is written for, takes it
    whole: every parameter declared and set to the file's value, its model live, its
    contacts those the file names."""
    with started(name, text, tmp_path) as (node, key, given):
        unknown = [p for p in given if not node.has_parameter(p)]
        assert not unknown, f"{page}: {name}: {unknown} are no parameters of {key}"
        # (the trajectory controller makes its live part once it has a command order too)
        model = node.bare if key == "rbd_trajectory_controller" else node.live
        assert model is not None, f"{page}: {name}: the node refused its model"
        for p, value in given.items():
            assert node.get_parameter(p).value == value, (page, name, p)
        if key == "rbd_floating_base":
            assert [c.link for c in node.live.contacts] == given["contact_links"]


def ros2_commands() -> list[tuple[str, list[str]]]:
    """The ros2 CLI commands that talk to our nodes: topics, parameters, services."""
    return [(page, words) for page, words in commands() if words[0] == "ros2"
            and words[1] in ("topic", "param", "service", "action")]


@pytest.mark.parametrize("page,words", ros2_commands())
def test_each_ros2_command_names_what_the_node_offers(page: str, words: list[str],
                                                      tmp_path: Path) -> None:
    """(No ros2 CLI to run them with here.) Against the node the command talks to, started
    with the pages' parameters file for it: an echoed topic is one it publishes, a published
    one it subscribes to with that type and the data fills that message, a parameter set is
    accepted, a called service is offered with that type and the data fills its request."""
    import importlib

    import yaml
    from rclpy.parameter import Parameter

    files = {name: text for _, name, text in parameter_files()}
    floating = any(w.startswith(("/rbd_floating_base", "/active_contacts")) for w in words)
    controller = any(w.startswith("/rbd_trajectory_controller") for w in words)
    name = "anymal.yaml" if floating else "my_arm_control.yaml" if controller else "my_arm.yaml"

    def type_of(text: str) -> Any:
        package, kind, cls = text.split("/")
        return getattr(importlib.import_module(f"{package}.{kind}"), cls)

    def fill(cls: Any, data: str) -> None:
        """The message ``data`` (YAML, as the CLI takes it) describes: each key a field
        (rosidl's constructors ignore others), each value one it takes."""
        fields = yaml.safe_load(data)
        unknown = set(fields) - set(cls.get_fields_and_field_types())
        assert not unknown, f"{page}: {sorted(unknown)} are no fields of {cls.__name__}"
        msg = cls()
        for k, v in fields.items():
            setattr(msg, k, v)  # rosidl checks the value's type and size

    with started(name, files[name], tmp_path) as (node, _, _):
        graph = graph_of(node)
        args = [w for w in words[3:] if not w.startswith("--")]
        if words[1:3] in (["topic", "echo"], ["topic", "hz"]):
            offered = graph["out"]
            assert args[0] in offered, f"{page}: {node.get_name()} publishes no {args[0]}"
        elif words[1:3] == ["topic", "pub"]:
            taken = graph["in"]
            assert taken.get(args[0]) == [args[1]], f"{page}: {args[0]} is not {taken}"
            fill(type_of(args[1]), args[2])
        elif words[1:3] == ["param", "set"]:
            assert args[0] == f"/{node.get_name()}", page
            (result,) = node.set_parameters([Parameter(args[1], value=yaml.safe_load(args[2]))])
            assert result.successful, f"{page}: {' '.join(words)}: {result.reason}"
        elif words[1:3] == ["action", "send_goal"]:
            offered = graph["actions"]
            assert offered.get(args[0]) == [args[1]], f"{page}: {args[0]} is not {offered}"
            fill(type_of(args[1]).Goal, args[2])
        elif words[1:3] == ["service", "call"]:
            offered = graph["services"]
            assert offered.get(args[0]) == [args[1]], f"{page}: {args[0]} is not {offered}"
            fill(type_of(args[1]).Request, args[2])
        else:
            pytest.fail(f"{page}: no check for `{' '.join(words)}`")


@pytest.mark.parametrize("section,config", [
    ("The dynamics node", "dynamics.yaml"), ("The floating-base node", "floating_base.yaml"),
    ("The trajectory controller", "trajectory_controller.yaml")])
def test_the_topic_tables_are_the_nodes(section: str, config: str, tmp_path: Path) -> None:
    """doc/nodes.md's topic table of a node (written by hand) lists what the node, started
    with its config/ file, subscribes to and publishes, by name and type, and nothing else."""
    text = (ROOT / "doc" / "nodes.md").read_text().split(f"## {section}")[1].split("\n## ")[0]
    with started(config, (ROOT / "config" / config).read_text(), tmp_path) as (node, key, _):
        links = [c.link for c in node.live.contacts] if key == "rbd_floating_base" else []
        graph = {k: v for k, v in graph_of(node).items() if k in ("in", "out")}
        for rclpy_own in ("/parameter_events", "/rosout"):
            for entities in graph.values():
                entities.pop(rclpy_own, None)
        # an action's own topics (its feedback and status): the section names the action
        actions = {t.split("/_action/")[0] for t in graph["out"] if "/_action/" in t}
        for action in actions:
            assert f"`{action.replace(f'/{key}', '~', 1)}`" in text, (section, action)
            for entities in graph.values():
                for t in [t for t in entities if t.startswith(f"{action}/_action/")]:
                    del entities[t]
        table: dict[str, dict[str, str]] = {"in": {}, "out": {}}
        for direction, names, kind in re.findall(r"^\| (in|out) \| ([^|]+) \| ([^|]+) \|", text,
                                             re.M):
            names = re.findall(r"`([^`]+)`", names)
            typed = re.match(r"(\w+)/(\w+)", kind)
            for name in names:
                full = (name.replace("~", f"/{key}") if name.startswith("~") else
                        name if name.startswith("/") else f"/{name}")
                for each in ([full.replace("<link>", link) for link in links]
                             if "<link>" in full else [full]):
                    table[direction][each] = (f"{typed[1]}/msg/{typed[2]}" if typed and
                                         len(names) == 1 else "")
        for side in ("in", "out"):
            assert set(table[side]) == set(graph[side]), (
                f"doc/nodes.md, {section}, {side}: the table lists "
                f"{sorted(set(table[side]) - set(graph[side]))} that the node has not, and "
                f"lacks {sorted(set(graph[side]) - set(table[side]))}")
            for topic, kind in table[side].items():
                assert not kind or graph[side][topic] == [kind], (section, topic, kind)


OFFLINE = ("analyze", "identify", "info")  # what runs without a ROS graph or a cluster


def offline_commands() -> list[tuple[str, list[str]]]:
    return [(page, words) for page, words in commands() if words[0].endswith("rbd-ros")
            and len(words) > 1 and words[1] in OFFLINE and "--scheduler" not in words]


def arm_recording(path: Path, payload: list[float] | None = None) -> Path:
    """The bundled arm on an exciting trajectory (five sines per joint, 30 s at 250 Hz), one
    motion for every call, with its efforts (the URDF's, friction included, plus 0.3 N m of
    noise; with ``payload`` on link7) and its commanded efforts on /effort_controller/commands."""
    from recordings import write_joint_states

    from rbd_ros.dynamics import Data, load_urdf, rnea
    from rbd_ros.robots import ARM

    m = load_urdf(ARM)
    if payload:
        m = m.with_payload("link7", payload)
    d = Data(m)
    rng = np.random.default_rng(3)
    t = np.arange(0.0, 30.0, 1 / 250)
    w = 2 * np.pi * 0.1 * np.arange(1, 6)
    A, B = rng.normal(size=(2, 7, 5)) / np.arange(1, 6)
    S, C = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    scale = 2.0 / np.abs(S @ A.T + C @ B.T).max(axis=0)  # within +-2 rad
    q = (S @ A.T + C @ B.T) * scale
    v = ((C * w) @ A.T - (S * w) @ B.T) * scale
    a = (-(S * w**2) @ A.T - (C * w**2) @ B.T) * scale
    tau = np.array([rnea(m, d, *x, friction=True) for x in zip(q, v, a, strict=True)])
    return write_joint_states(path, [10**18 + round(x * 1e9) for x in t], q, v,
                              tau + rng.normal(0.0, 0.3, tau.shape), commands=tau,
                              command_topic="/effort_controller/commands")


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding one recording of the arm (:func:`arm_recording`)."""
    folder = tmp_path_factory.mktemp("bags")
    arm_recording(folder / "run1")
    return folder


@pytest.fixture(scope="module")
def carrying(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same motion, the arm carrying a payload on link7."""
    from payloads import payload_values

    return arm_recording(tmp_path_factory.mktemp("carrying") / "run1", payload_values())


@pytest.fixture(scope="module")
def standing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled quadruped standing for a second: joint states and odometry at 500 Hz."""
    from recordings import write_legged

    from rbd_ros.dynamics import load_urdf
    from rbd_ros.robots import QUADRUPED

    model = load_urdf(QUADRUPED, floating_base=True)
    names = [j.name for j in model.joints if j.kind == "revolute"]
    t = np.arange(0.0, 1.0, 0.002)
    q = np.tile([0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0, *np.tile([0.0, 0.4, -0.8], 4)], (len(t), 1))
    zero = np.zeros((len(t), model.nv))
    return write_legged(tmp_path_factory.mktemp("standing") / "run1", QUADRUPED.read_text(),
                        t, q, zero, zero[:, 6:], names, 10**18)


@pytest.mark.parametrize("page,words", offline_commands())
def test_each_offline_command_runs_on_a_recording(page: str, words: list[str],
                                                  recordings: Path, carrying: Path,
                                                  standing: Path, tmp_path: Path) -> None:
    """Run as shown, a recording's or a folder's placeholder standing for the arm's recording
    (or its folder), every output folder in a temporary one: it succeeds and says what it
    did."""
    import subprocess

    places = {"my_recording/": recordings / "run1", "~/bags/run1": recordings / "run1",
              "exciting_bag/": recordings / "run1", "carrying_bag/": carrying,
              "empty_bag/": recordings / "run1", "my_quadruped_run/": standing,
              "config/floating_base.yaml": ROOT / "config" / "floating_base.yaml",
              "~/bags": recordings}
    argv = words[1:]
    for k, w in enumerate(argv):
        if w in places:
            argv[k] = str(places[w])
        elif k and argv[k - 1] == "--out":
            argv[k] = str(tmp_path / w)
    r = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", *argv], capture_output=True,
                       text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, f"{page}: `{' '.join(words)}`: {r.stdout} {r.stderr}"
    said = {"analyze": "joint states analysed", "identify": "written: ", "info": "model '"}
    assert said[argv[0]] in r.stdout, f"{page}: `{' '.join(words)}`: {r.stdout}"


def test_the_trajectory_controller_tutorial_wires_moveit_and_ros2_control_to_it(
        tmp_path: Path) -> None:
    """doc/tutorials/trajectory_controller.md's files for the others: MoveIt's controller
    (name and action_ns) is the action the node serves, started with the page's parameters
    file; MoveIt's, the effort controller's and the arm's joints are the same; the launch
    command's commands_topic is that effort controller's."""
    import yaml

    from rbd_ros.dynamics import load_urdf
    from rbd_ros.robots import ARM

    page = "doc/tutorials/trajectory_controller.md"
    files = {name: yaml.safe_load(text) for p, name, text in parameter_files(foreign=True)
             if p == page}
    moveit = files["moveit_controllers.yaml"]["moveit_simple_controller_manager"]
    (name,) = moveit["controller_names"]
    assert moveit[name]["type"] == "FollowJointTrajectory"
    effort = files["controllers.yaml"]["effort_controller"]["ros__parameters"]["joints"]
    assert moveit[name]["joints"] == effort == load_urdf(ARM).state_joint_names
    assert "effort_controller" in files["controllers.yaml"]["controller_manager"][
        "ros__parameters"]
    launch = [w for p, w in commands() if p == page and w[:2] == ["ros2", "launch"]]
    assert launch and "commands_topic:=/effort_controller/commands" in launch[0], launch
    text = dict((n, t) for p, n, t in parameter_files() if p == page)["my_arm_control.yaml"]
    with started("my_arm_control.yaml", text, tmp_path) as (node, _, _):
        servers = graph_of(node)["actions"]
    assert servers.get(f"/{name}/{moveit[name]['action_ns']}") == [
        "control_msgs/action/FollowJointTrajectory"], servers


def test_a_destroyed_trajectory_controller_leaves_nothing_in_the_graph(tmp_path: Path) -> None:
    """Started and destroyed in this process three times (as the tests above and a component
    container do): each new one is alone under its name in the ROS graph. (rclpy's destroy_node
    leaves an action server alive, and a third start found the graph showing an earlier node's
    action topics under the name instead of its own.)"""
    text = (ROOT / "config" / "trajectory_controller.yaml").read_text()
    for _ in range(3):
        with started("trajectory_controller.yaml", text, tmp_path) as (node, key, _):
            graph = graph_of(node)
            assert f"/{key}/status" in graph["out"], graph["out"]
