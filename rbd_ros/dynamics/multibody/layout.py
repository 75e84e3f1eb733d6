"""Where each number sits in the packed rows the compiled kernels read and write: one row of
``Model.mf`` per body (constant), one row of ``Data.W`` per body (work). Every offset a kernel
uses is named here.

A motion vector is ``[omega; v]`` and a force ``[n; f]``: the angular part first, then
``LINEAR`` on. A spatial inertia is stored row-major as the 6x6 ``[[Io, m c^], [m c^T, m 1]]``
(``Io`` about the body's origin, ``c`` its centre of mass).
"""

#: one row of ``Model.mi`` per body: its parent, joint type, first full q index, first full v
#: index; one block of ``Data.M6`` per body, four 6x6 matrices (and one block of scratch after
#: the bodies'): ABA's and CRBA's
MI_WIDTH = 4
M6_BODY = (4, 6, 6)

LINEAR = 3  # where the linear part of a motion or force vector starts
INERTIA_SIZE = 36  # a 6x6 spatial inertia, row-major

#: one row of ``Model.mf``: the tree transform ``X_T`` (its rotation E_T, row-major, then its
#: translation r_T), the joint's motion subspace S, the body's spatial inertia, the joint's
#: viscous damping and Coulomb friction, and its armature (the motor's rotor inertia as the
#: joint feels it: on the mass matrix's diagonal)
MF_E, MF_R, MF_S, MF_I, MF_DAMPING, MF_COULOMB, MF_ARMATURE = 0, 9, 12, 18, 54, 55, 56
MF_WIDTH = 57
#: entries of the spatial inertia at ``MF_I``: the mass m at (3, 3), and m c (x, y, z) as
#: they stand in m c^ at (2, 4), (0, 5), (1, 3)
MF_MASS = MF_I + 6 * 3 + 3
MF_MC = (MF_I + 6 * 2 + 4, MF_I + 5, MF_I + 6 * 1 + 3)

#: one row of ``Data.W``, shared by RNEA, ABA, the momentum and the kinematics: the transform
#: from the parent X (12: E row-major, then r), the velocity v, acceleration a, force f (ABA:
#: the bias force pA; the momentum: the body's, then its subtree's), the velocity-product
#: acceleration c and ABA's u (6 each)
W_X, W_V, W_A, W_F, W_C, W_U = 0, 12, 18, 24, 30, 36
#: ABA's gripper groups (``aba_mimic.group_*``), at the group's members and its host: the
#: coupling U (6), the coordinate's D and w (u = -w once folded), its acceleration theta''
W_GU, W_GD, W_GW, W_GA = 42, 48, 49, 50
#: ABA's M^-1 sweeps over the stored factors (``aba_mimic.minv_apply``): the bias force, the
#: acceleration and u (6 each)
W_SP, W_SA, W_SU = 51, 57, 63
#: CRBA's: the transform O from the tree's root frame to the body's (12), the joint's motion
#: subspace in the root's frame (6)
W_O, W_OS = 69, 81
W_WIDTH = 87

#: the header of ``Model.maps``, the integer maps packed for the kernels: the sizes nq_full,
#: nv_full, nv, the mimic rows', the mimic bodies', nb and nq; the maps follow
MAPS_NQF, MAPS_NVF, MAPS_NV, MAPS_NMIMIC, MAPS_NMIMIC_BODIES, MAPS_NB, MAPS_NQ = range(7)
MAPS_HEADER = 7
