"""The floating-base node's answer for one state, from Python without ROS: how the bundled
quadruped's weight and motion are split over its feet, and where its ZMP is.

    python3 contact_split.py
"""

import numpy as np

from rbd_ros.dynamics import Data, load_urdf
from rbd_ros.dynamics.contact.balance import Support
from rbd_ros.dynamics.contact.contacts import Contact, solve
from rbd_ros.robots import QUADRUPED

model = load_urdf(QUADRUPED, floating_base=True)  # a free-flyer root is added
data = Data(model)
feet = [Contact(f"{leg}_foot") for leg in ("LF", "RF", "LH", "RH")]  # point feet

q = model.neutral()  # base at the origin, level: [x y z, quaternion x y z w, joints]
q[7:] = [0.0, 0.4, -0.8] * 4  # HAA, HFE, KFE of each leg: knees bent
v, a = np.zeros(model.nv), np.zeros(model.nv)  # at rest; a[:6]: the base's acceleration

for what, contacts, base_acceleration in [
        ("standing", feet, [0.0, 0.0, 0.0]),
        ("right front foot lifted, speeding up", [feet[0], feet[2], feet[3]], [1.0, 0.5, 0.0]),
        ("right feet lifted", [feet[0], feet[2]], [0.0, 0.0, 0.0])]:
    a[:3] = base_acceleration
    r = solve(model, data, q, v, a, contacts, mu=0.7)
    print(f"{what}:")
    if not r.feasible:
        print(f"  impossible: {r.reason}")
        continue
    for link, force in r.forces.items():  # world axes (r.wrenches: in the foot's frame)
        print(f"  {link}: {force[2]:6.1f} N up, {np.hypot(*force[:2]):5.1f} N along the ground")
    print(f"  joint torques (N m): {np.round(r.tau, 2)}")
    b = Support(model, contacts).balance(r)  # on the ground under the feet, world axes
    print(f"  ZMP ({b.zmp[0]:.3f}, {b.zmp[1]:.3f}) m, {b.zmp_margin * 100:.1f} cm inside the "
          f"support polygon of {len(b.support_polygon)} corners")
