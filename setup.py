"""ament_python package rbd_ros (colcon build) that also installs with plain pip."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "rbd_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    package_data={f"{PACKAGE}.robots": ["*.urdf"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/urdf", glob(f"{PACKAGE}/robots/*.urdf")),
    ],
    python_requires=">=3.10",
    install_requires=["setuptools", "numpy", "numba", "urdf-parser-py"],
    # colcon test runs pytest only when the package names it (else unittest: "Ran 0 tests")
    extras_require={"test": ["pytest"]},
    zip_safe=False,
    maintainer="rbd_ros developers",
    maintainer_email="rbd-ros@example.com",
    description="Live rigid-body dynamics for ROS 2 (RNEA, ABA, CRBA, floating base).",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "rbd-ros = rbd_ros.cli:main",
            "dynamics_node = rbd_ros.nodes.dynamics_node:main",
            "simulator_node = rbd_ros.nodes.simulator_node:main",
            "floating_base_node = rbd_ros.nodes.floating_base_node:main",
        ],
    },
)
