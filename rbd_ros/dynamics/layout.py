"""Where each number sits in the packed rows the compiled kernels read and write: one row of
``Model.mf`` per body (constant), one row of ``Data.W`` per body (work). Every offset a kernel
uses is named here.

A motion vector is ``[omega; v]`` and a force ``[n; f]``: the angular part first, then
``LINEAR`` on. A spatial inertia is stored row-major as the 6x6 ``[[Io, m c^], [m c^T, m 1]]``
(``Io`` about the body's origin, ``c`` its centre of mass).
"""

LINEAR = 3  # where the linear part of a motion or force vector starts
INERTIA_SIZE = 36  # a 6x6 spatial inertia, row-major

#: one row of ``Model.mf``: the tree transform ``X_T`` (its rotation E_T, row-major, then its
#: translation r_T), the joint's motion subspace S, the body's spatial inertia, the joint's
#: viscous damping and Coulomb friction
MF_E, MF_R, MF_S, MF_I, MF_DAMPING, MF_COULOMB = 0, 9, 12, 18, 54, 55
MF_WIDTH = 56
#: entries of the spatial inertia at ``MF_I``: the mass m at (3, 3), and m c (x, y, z) as
#: they stand in m c^ at (2, 4), (0, 5), (1, 3)
MF_MASS = MF_I + 6 * 3 + 3
MF_MC = (MF_I + 6 * 2 + 4, MF_I + 5, MF_I + 6 * 1 + 3)

#: one row of ``Data.W``: the transform from the parent X (12: E row-major, then r), the
#: velocity v, acceleration a, force f (ABA: the bias force pA), the velocity-product
#: acceleration c, ABA's u (6 each); then ABA's mimic groups and M^-1 sweeps (see aba_mimic):
#: W_MP the group's coupling U or a sweep's bias force, W_MA a sweep's acceleration (the
#: group's coordinate acceleration at W_MA), W_MU the group's D and w or a sweep's u
W_X, W_V, W_A, W_F, W_C, W_U, W_MP, W_MA, W_MU = 0, 12, 18, 24, 30, 36, 42, 48, 54
W_WIDTH = 60
