"""Print each collision the dynamics node flags: when, on which link, through which joints,
again as more joints cross their thresholds, and when it clears.

    python3 collision_monitor.py      (with the dynamics node running, collision_thresholds set)

``~/collision`` (diagnostic_msgs/DiagnosticArray) comes on every change of the flags and once
a second; its first status is the robot's: ERROR while a joint is flagged, with the likely
contact links in its ``links`` value.
"""

import sys

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus


def main() -> int:
    rclpy.init()
    node = rclpy.create_node("collision_monitor")
    last = {"joints": ""}  # the flagged joints last printed

    def on_collision(msg):
        robot = msg.status[0]
        values = {kv.key: kv.value for kv in robot.values}
        if values["joints"] == last["joints"]:
            return  # the once-a-second repeat, or no change
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        if robot.level == DiagnosticStatus.ERROR:
            print(f"{stamp:.3f} collision on {values['links']} (joints {values['joints']})",
                  flush=True)
        else:
            print(f"{stamp:.3f} clear", flush=True)
        last["joints"] = values["joints"]

    node.create_subscription(DiagnosticArray, "/rbd_dynamics/collision", on_collision, 10)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
