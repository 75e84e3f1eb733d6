"""Call rbd_ros's four dynamics services from your own node: the gravity torques, the torques
for a motion (inverse dynamics), the accelerations that torques give (forward dynamics), the
mass matrix, and what a refused request looks like.

    python3 dynamics_client.py      (with the dynamics node running on the bundled arm)
"""

import sys

import rclpy

from rbd_ros_interfaces.srv import ForwardDynamics, GravityTorques, InverseDynamics, MassMatrix

JOINTS = [f"joint{k}" for k in range(1, 8)]
Q = [0.0, 0.4, 0.0, -1.2, 0.0, 1.6, 0.8]
REST = [0.0] * 7


def call(node, client, request, seconds=60.0):
    """One service call, waited for; the response, or None if no answer came within
    ``seconds``. Asked again every 3 s without an answer: a new client's first response can be
    lost while DDS is still matching it to the server (the services only compute, so asking
    twice is harmless)."""
    waited = 0.0
    while waited < seconds:
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future, timeout_sec=3.0)
        if future.done():
            return future.result()
        client.remove_pending_request(future)
        waited += 3.0
    return None


def answer(node, client, request):
    """The response of a call that must succeed; SystemExit with the reason if it did not."""
    res = call(node, client, request)
    if res is None:
        sys.exit(f"{client.srv_name}: no answer within a minute")
    if not res.success:
        sys.exit(f"{client.srv_name} refused: {res.message}")
    return res


def main() -> int:
    rclpy.init()
    node = rclpy.create_node("my_dynamics_client")
    try:
        services = {kind: node.create_client(kind, f"/rbd_dynamics/{name}") for kind, name in (
            (GravityTorques, "gravity_torques"), (InverseDynamics, "inverse_dynamics"),
            (ForwardDynamics, "forward_dynamics"), (MassMatrix, "mass_matrix"))}
        for client in services.values():
            if not client.wait_for_service(timeout_sec=60.0):
                print(f"no service {client.srv_name}: is the dynamics node running?",
                      file=sys.stderr)
                return 1
        # the torques that hold the arm at Q
        res = answer(node, services[GravityTorques],
                     GravityTorques.Request(joint_names=JOINTS, positions=Q))
        print("gravity torques (N m):", " ".join(f"{x:.3f}" for x in res.efforts))
        # the torques that accelerate joint 4 at 1 rad/s^2 from rest at Q
        res = answer(node, services[InverseDynamics], InverseDynamics.Request(
            joint_names=JOINTS, positions=Q, velocities=REST,
            accelerations=[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]))
        print("inverse dynamics (N m):", " ".join(f"{x:.3f}" for x in res.efforts))
        # and back: the accelerations those torques give (joint 4's 1 rad/s^2)
        res = answer(node, services[ForwardDynamics], ForwardDynamics.Request(
            joint_names=JOINTS, positions=Q, velocities=REST, efforts=res.efforts))
        print("forward dynamics (rad/s^2):", " ".join(f"{x:.3f}" for x in res.accelerations))
        # the mass matrix, row-major, in the response's joint order: its diagonal
        res = answer(node, services[MassMatrix], MassMatrix.Request(joint_names=JOINTS,
                                                                     positions=Q))
        n = len(res.joint_names)
        print("mass matrix diagonal (kg m^2):",
              " ".join(f"{res.mass_matrix[k * n + k]:.3f}" for k in range(n)))
        # a request that names three joints of seven is refused, with the reason
        res = call(node, services[InverseDynamics],
                   InverseDynamics.Request(joint_names=JOINTS[:3], positions=Q[:3]))
        if res is None:
            raise SystemExit("no answer within a minute")
        print("refused:" if not res.success else "accepted?", res.message)
        return 0
    finally:
        node.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    sys.exit(main())
