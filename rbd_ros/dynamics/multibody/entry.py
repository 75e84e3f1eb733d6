"""The per-call entry of :func:`~rbd_ros.dynamics.rnea`, :func:`~rbd_ros.dynamics.aba` and
:func:`~rbd_ros.dynamics.crba`: each kernel compiled as a C function (a numba cfunc on
:data:`KERNEL`'s signature) beside the algorithm, registered with a small CPython extension
(``_entry.c``) when its module is imported, and called through a handle each :class:`Data`
makes once of its arrays and its model's.

Through numba's own entry point a call costs ~45 ns an array argument (a dozen: the model's,
the data's, the state's) plus its dispatch, more than the algorithm on a small arm. The
extension checks the vectors with numpy's C API (a C-contiguous float64 vector of the model's
size in native byte order), allocates the result and calls the kernel: ~0.2 us in all.

Each function returns None when it did not compute: an input it cannot take as it is, a model
that is not the handle's, or a kernel status (:attr:`Handle.status`: ABA's singular joint).
The Python functions then check their inputs as :class:`Model` does (converting them, or raising
the error that says what to fix) and call again: :meth:`Data.again`.
"""

from __future__ import annotations

from typing import Any

from numba import njit, types
from numba.core.extending import intrinsic
from numba.core.imputils import impl_ret_borrowed
from numba.np.numpy_support import carray

from . import _entry
from .layout import M6_BODY, MAPS_NQ, MAPS_NV, MF_WIDTH, MI_WIDTH, W_WIDTH

OK = -1  # a kernel's status when it computed (ABA's, else: the body whose joint is singular)

_I64 = types.CPointer(types.int64)  # type: ignore[no-untyped-call]
_F64 = types.CPointer(types.float64)  # type: ignore[no-untyped-call]
_N = types.int64
#: what _entry.c calls: the model (mi, mf, maps, lin), the state (q, v, x), the external wrenches
#: and their rows (0 or nb), friction, the data (W, M6, wv), the result, and the sizes nb,
#: len(maps), len(lin), len(wv); returns OK or the kernel's status
KERNEL = _N(_I64, _F64, _I64, _F64, _F64, _F64, _F64, _F64, _N, _N, _F64, _F64, _F64, _F64, _N, _N,
            _N, _N)


@intrinsic
def _read_only(typingctx, array):
    """``array`` typed read-only, as numba types a :class:`Model`'s arrays (their flags say
    so): the algorithms called with them are then the ones compiled for the batches, not a
    second copy for writable arrays (20 s more when the cache is filled)."""

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, signature.return_type, args[0])  # type: ignore[no-untyped-call]

    return array.copy(readonly=True)(array), codegen


@njit(cache=True, inline="always")
def arrays(mi, mf, maps, lin, W, M6, wv, nb, nmaps, nlin, nwv):
    """The model's and the data's arrays from their pointers, as :class:`Model` and
    :class:`Data` hold them."""
    return (_read_only(carray(mi, (nb, MI_WIDTH))), _read_only(carray(mf, (nb, MF_WIDTH))),
            _read_only(carray(maps, (nmaps,))), _read_only(carray(lin, (nlin,))),
            carray(W, (nb, W_WIDTH)), carray(M6, (nb + 1, *M6_BODY)), carray(wv, (nwv,)))


@njit(cache=True, inline="always")
def state(maps, q, v, x, fext, nfext):
    nq, nv = maps[MAPS_NQ], maps[MAPS_NV]
    return carray(q, (nq,)), carray(v, (nv,)), carray(x, (nv,)), carray(fext, (nfext, 6))


def register(name: str, kernel: Any) -> None:
    """``kernel`` (a cfunc on :data:`KERNEL`) is what ``_entry.<name>`` calls from now on."""
    _entry.register(name, kernel.address)
