"""Real ROS 2 nodes for tests: a node under test in its own process, and a probe node here."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rclpy
from rcl_interfaces.srv import GetParameterTypes, SetParameters
from rclpy.client import Client
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data

# what the other side uses -- robot_state_publisher's description, a driver's sensor-data
# joint states -- written here, not taken from the nodes, so the tests check they match
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
SENSOR = qos_profile_sensor_data
RESEND_S = 3.0  # s: Probe.call sends a request again after this long without an answer
#: s: how long a wait for something that must come lasts before the test fails: a deadline that
#: only a broken node misses, never one a slow machine does (a node starting beside a test run
#: on two cores spends seconds on imports, its kernels' cache and discovery). A wait returns as
#: soon as what it waits for comes, so a healthy run never waits this long
PATIENCE_S = 300.0


def params_file(path: Path, node: str, params: dict[str, Any]) -> Path:
    """A ROS 2 parameters file; strings go in YAML block style so a URDF fits."""
    lines = [f"{node}:", "  ros__parameters:"]
    for k, v in params.items():
        if isinstance(v, str) and "\n" not in v:
            lines.append(f"    {k}: {json.dumps(v)}")  # (JSON's strings are YAML's)
        elif isinstance(v, str):
            lines.append(f"    {k}: |")
            lines += ["      " + line for line in v.splitlines()]
        elif isinstance(v, bool):
            lines.append(f"    {k}: {'true' if v else 'false'}")
        else:
            lines.append(f"    {k}: {v!r}".replace("'", '"'))
    path.write_text("\n".join(lines) + "\n")
    return path


class Process:
    """A program in its own process, its output kept; stopped with SIGINT (and killed with what
    it started if it has not ended a minute later)."""

    def __init__(self, *argv: str) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=os.environ.copy(), start_new_session=True)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> str:
        if self.alive():
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        out, _ = self.proc.communicate()
        return out


class EffortController(Process):
    """A node named /effort_controller holding its ``joints`` as ros2_control's forward command
    controllers do, in its own process (what the nodes ask for their command order)."""

    def __init__(self, joints: list[str]) -> None:
        super().__init__(sys.executable, "-c", (
            "import rclpy\n"
            "rclpy.init()\n"
            "node = rclpy.create_node('effort_controller')\n"
            f"node.declare_parameter('joints', {joints!r})\n"
            "try:\n    rclpy.spin(node)\nexcept KeyboardInterrupt:\n    pass\n"))


class NodeProcess(Process):
    """``python -m module --ros-args ...``."""

    def __init__(self, module: str, *ros_args: str) -> None:
        super().__init__(sys.executable, "-m", module, "--ros-args", *ros_args)


class Probe:
    """A node in the test process that publishes and records what it receives."""

    def __init__(self, name: str = "probe") -> None:
        self.node: Node = rclpy.create_node(name)
        self.received: dict[str, list[Any]] = {}
        self.subscriptions: dict[str, Any] = {}

    def listen(self, msg_type: type, topic: str, qos: Any = 10) -> list[Any]:
        box: list[Any] = []
        self.received[topic] = box
        self.subscriptions[topic] = self.node.create_subscription(msg_type, topic, box.append,
                                                                  qos)
        return box

    def listen_sent(self, msg_type: type, topic: str, qos: Any = 10) -> list[tuple[int, Any]]:
        """(when its publisher sent it, ns on the machine's clock: DDS's source timestamp; the
        message) for each message: what a node published when, whenever it arrives."""
        box: list[tuple[int, Any]] = []
        self.subscriptions[topic] = self.node.create_subscription(
            msg_type, topic, lambda m, info: box.append((int(info["source_timestamp"]), m)), qos)
        return box

    def sent_to_us(self, *topics: str, timeout: float = PATIENCE_S) -> bool:
        """Until a node's ``/diagnostics`` say it sends ``topics`` (its ``outputs sent``: its
        publishers have matched a subscriber, ours), or ``timeout`` s. What a node publishes
        before its writer matches our reader is lost, and under load that match can come
        seconds after ours (:meth:`matched`)."""
        from diagnostic_msgs.msg import DiagnosticArray

        sent: set[str] = set()

        def take(msg: DiagnosticArray) -> None:
            for status in msg.status:
                for kv in status.values:
                    if kv.key == "outputs sent":
                        sent.update(kv.value.split(", "))

        sub = self.node.create_subscription(DiagnosticArray, "/diagnostics", take, 100)
        try:
            return self.spin_until(lambda: set(topics) <= sent, timeout)
        finally:
            self.node.destroy_subscription(sub)

    def matched(self) -> bool:
        """Every topic listened to has a publisher matched to its subscription (DDS's own
        match, which the ROS graph's ``count_publishers`` can announce before it is made: under
        load, what a node published in between was lost)."""
        return all(s.get_publisher_count() > 0 for s in self.subscriptions.values())

    def spin_until(self, done: Callable[[], bool], timeout: float = PATIENCE_S) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if done():
                return True
            rclpy.spin_once(self.node, timeout_sec=0.02)
        return done()

    def spin_for(self, seconds: float) -> None:
        self.spin_until(lambda: False, seconds)

    def call(self, srv_type: type, name: str, request: Any, timeout: float = PATIENCE_S,
             retry: bool = True) -> Any:
        """The service's response. A new client's first request can be answered before the
        server has matched its response reader, and that response is lost (rclpy logs "failed
        to send response"), most often on a loaded machine: so the request is sent again after
        RESEND_S without an answer, unless ``retry`` is False (a request that must not be
        repeated)."""
        client: Client[Any, Any] = self.node.create_client(srv_type, name)
        try:
            assert client.wait_for_service(timeout_sec=timeout), \
                f"service {name} did not appear"
            deadline = time.monotonic() + timeout
            while True:
                future = client.call_async(request)
                wait = deadline - time.monotonic()
                if self.spin_until(future.done, min(RESEND_S, wait) if retry else wait):
                    return future.result()
                client.remove_pending_request(future)
                assert retry and time.monotonic() < deadline, f"service {name} did not answer"
        finally:
            self.node.destroy_client(client)

    def set_parameter(self, node: str, name: str, value: Any) -> Any:
        """Set one parameter of ``node`` (its full name) through its ``set_parameters``
        service, as ``ros2 param set`` does, a list in the type the node declared (an empty
        one, or whole numbers for an array of doubles). The node's result: ``successful`` and
        ``reason``."""
        declared = Parameter.Type(self.call(
            GetParameterTypes, f"{node}/get_parameter_types",
            GetParameterTypes.Request(names=[name])).types[0])
        if isinstance(value, list) and declared in (Parameter.Type.DOUBLE_ARRAY,
                                                    Parameter.Type.STRING_ARRAY):
            if declared == Parameter.Type.DOUBLE_ARRAY and all(
                    isinstance(x, int | float) and not isinstance(x, bool) for x in value):
                value = [float(x) for x in value]
            param = Parameter(name, declared, value)
        else:
            param = Parameter(name, value=value)
        request = SetParameters.Request(parameters=[param.to_parameter_msg()])
        return self.call(SetParameters, f"{node}/set_parameters", request).results[0]

    def close(self) -> None:
        self.node.destroy_node()
