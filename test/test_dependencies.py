"""The package imports only what package.xml declares (by rosdep key); the offline tools'
extras that have no key load lazily and, when missing, say how to install them."""

from __future__ import annotations

import ast
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rbd_ros.bag.errors import EXTRAS

ROOT = Path(__file__).resolve().parents[1]
#: top-level Python module -> the rosdep key that installs it (None: an extra with no key)
KEYS = {
    "numpy": "python3-numpy", "numba": "python3-numba", "urdf_parser_py": "urdfdom_py",
    "rclpy": "rclpy", "rcl_interfaces": "rcl_interfaces", "action_msgs": "action_msgs",
    "builtin_interfaces": "builtin_interfaces", "std_msgs": "std_msgs", "std_srvs": "std_srvs",
    "sensor_msgs": "sensor_msgs", "geometry_msgs": "geometry_msgs",
    "diagnostic_msgs": "diagnostic_msgs",
    "trajectory_msgs": "trajectory_msgs", "nav_msgs": "nav_msgs",
    "rosgraph_msgs": "rosgraph_msgs", "rbd_ros_interfaces": "rbd_ros_interfaces",
    "control_msgs": "control_msgs",
    "launch": "launch", "launch_ros": "launch_ros",
    "xacro": "xacro", "ruamel": "python3-ruamel.yaml",
    "matplotlib": "python3-matplotlib", "scipy": "python3-scipy",
    "rosbags": None, "mcap": None, "zstandard": None, "pyarrow": None, "dask": None,
    "distributed": None,
}


def imports(paths: list[Path]) -> dict[str, set[str]]:
    """Top-level third-party modules imported anywhere in ``paths`` -> the files."""
    found: dict[str, set[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0
                     and node.module else [])
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("rbd_ros", "__future__"):
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_import_has_a_rosdep_key_in_package_xml() -> None:
    declared = {e.text or "" for e in ET.parse(ROOT / "package.xml").getroot()
                if e.tag in ("exec_depend", "depend")}
    used = imports(sorted((ROOT / "rbd_ros").rglob("*.py")) + sorted((ROOT / "launch").glob("*.py")))
    unknown = sorted(set(used) - set(KEYS))
    assert not unknown, f"imports with no known rosdep key: {unknown} in {[used[m] for m in unknown]}"
    missing = sorted(k for m in used if (k := KEYS[m]) and k not in declared)
    assert not missing, f"package.xml lacks {missing}"
    unused = sorted(declared - {KEYS[m] for m in used} - {"python3-numpy"})
    assert not unused, f"package.xml declares {unused}, which nothing imports"
    keyless = sorted(m for m in used if KEYS[m] is None)
    assert set(keyless) <= set(EXTRAS), keyless  # each says how to install it


def test_no_key_is_pip_only() -> None:
    """The ROS buildfarm releases only packages whose every key is a system or ROS package:
    a rosdep key ending in -pip (pip only) keeps the package off it."""
    keys = [e.text or "" for e in ET.parse(ROOT / "package.xml").getroot() if "depend" in e.tag]
    assert len(keys) > 20
    assert not [k for k in keys if k.endswith("-pip")]
    assert "mcap-ros2-support" not in keys  # pip only too, though its key says not


BLOCK = """
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Missing())
sys.argv = ["rbd-ros", *{args!r}]
{body}
"""


def run_without(blocked: set[str], body: str, *args: str) -> subprocess.CompletedProcess[str]:
    code = BLOCK.format(blocked=blocked, args=list(args), body=body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)


def test_info_and_the_nodes_need_no_offline_extra() -> None:
    pytest.importorskip("rclpy", reason="the nodes run on ROS 2")
    extras = set(EXTRAS)
    r = run_without(extras, "import rbd_ros.nodes.dynamics_node, rbd_ros.nodes.floating_base_node, "
                            "rbd_ros.nodes.simulator_node\nfrom rbd_ros.app.cli import main\n"
                            "sys.exit(main())", "info")
    assert r.returncode == 0, r.stderr
    assert "model 'arm7'" in r.stdout


def test_an_offline_tool_without_its_extra_says_how_to_install_it(tmp_path: Path) -> None:
    for tool, module, advice in (
            ("analyze", "rosbags", "pip install rosbags"),
            ("analyze", "mcap", "pip install mcap"),
            ("identify", "scipy", "pip install scipy (rosdep key python3-scipy)")):
        r = run_without({module}, "from rbd_ros.app.cli import main\nsys.exit(main())", tool,
                        str(tmp_path), "--out", str(tmp_path / "out"))
        assert r.returncode == 2, r.stderr
        assert f"needs the Python package '{module}', which is not installed: {advice}" in \
            r.stderr and "Traceback" not in r.stderr, r.stderr


def test_colcon_test_runs_pytest() -> None:
    """colcon's ament_python test step runs pytest only when setup.py names it; otherwise
    unittest finds nothing and reports 'Ran 0 tests ... OK'."""
    text = (ROOT / "setup.py").read_text()
    assert 'extras_require={"test": ["pytest"]}' in text


def test_the_version_floors_agree_and_are_the_ones_tested() -> None:
    """numpy's and numba's floors, in package.xml (for rosdep and the .deb) and setup.py (for
    pip), are the versions of requirements-noble.txt, on which CI runs every test that needs
    no ROS."""
    import re

    xml = {e.text: e.get("version_gte") for e in ET.parse(ROOT / "package.xml").getroot()
           if e.tag == "exec_depend"}
    setup = dict(re.findall(r'"(numpy|numba)>=([\d.]+)"', (ROOT / "setup.py").read_text()))
    tested = dict(re.findall(r"^(numpy|numba)==([\d.]+)$",
                             (ROOT / "requirements-noble.txt").read_text(), re.M))
    for name in ("numpy", "numba"):
        floor = xml[f"python3-{name}"]
        assert floor and setup[name] == floor, (name, floor, setup)
        assert tested[name].startswith(floor + "."), (name, floor, tested)
