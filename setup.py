"""ament_python package rbd_ros (colcon build) that also installs with plain pip."""

import os
import subprocess
import sys
from glob import glob

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.install import install

PACKAGE = "rbd_ros"


class InstallAndCompile(install):
    """install, then numba's kernels compiled into the installed package (rbd_ros.app.numba_cache),
    so that no node compiles when it starts. Without numba or numpy here (a build before
    rosdep), the nodes compile on their first start instead. colcon's --symlink-install (setup.py
    develop) keeps the cache in the source folder, filled on the first start."""

    def run(self) -> None:
        super().run()
        if self.root is not None:  # a wheel being built (bdist_wheel) or a staged install
            return
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            x for x in (self.install_lib, os.environ.get("PYTHONPATH")) if x))
        # from install_lib: the source folder (colcon's working directory) must not be imported
        done = subprocess.run([sys.executable, "-m", f"{PACKAGE}.app.numba_cache"], env=env,
                              cwd=self.install_lib, check=False)
        if done.returncode:
            print(f"warning: {PACKAGE}'s compiled kernels are not cached: the nodes compile "
                  "them on their first start (about half a minute)", file=sys.stderr)


class BuildWithNumpy(build_ext):
    """build_ext with numpy's C headers (the per-call entry,
    rbd_ros/dynamics/multibody/_entry.c), found when it runs: reading the package's metadata
    needs no numpy."""

    def finalize_options(self) -> None:
        super().finalize_options()
        import numpy

        self.include_dirs.append(numpy.get_include())


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    package_data={PACKAGE: ["py.typed"], f"{PACKAGE}.dynamics.multibody": ["*.pyi"],
                  f"{PACKAGE}.robots": ["*.urdf"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/urdf", glob(f"{PACKAGE}/robots/*.urdf")),
    ],
    ext_modules=[Extension(f"{PACKAGE}.dynamics.multibody._entry",
                           [f"{PACKAGE}/dynamics/multibody/_entry.c"])],
    python_requires=">=3.11",  # what is tested; 3.10 cannot install the pinned numpy
    # the floors are tested (requirements-noble.txt)
    install_requires=["setuptools", "numpy>=1.26", "numba>=0.59", "urdf-parser-py"],
    # colcon test runs pytest only when the package names it (else unittest: "Ran 0 tests")
    extras_require={"test": ["pytest"]},
    zip_safe=False,
    cmdclass={"install": InstallAndCompile, "build_ext": BuildWithNumpy},
    maintainer="rbd_ros developers",
    maintainer_email="rbd-ros@example.com",
    description="Live rigid-body dynamics for ROS 2 (RNEA, ABA, CRBA, floating base).",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "rbd-ros = rbd_ros.app.cli:main",
            "dynamics_node = rbd_ros.nodes.dynamics_node:main",
            "simulator_node = rbd_ros.nodes.simulator_node:main",
            "floating_base_node = rbd_ros.nodes.floating_base_node:main",
            "trajectory_controller_node = rbd_ros.nodes.trajectory_controller_node:main",
        ],
    },
)
