/* The per-call entry point of rnea, aba and crba (rbd_ros.dynamics.multibody.entry).
 *
 * Calling a numba kernel from Python costs ~45 ns an array argument (numba boxes each one) and
 * its dispatch: on a 6-joint arm more than the algorithm itself. Here a Handle holds, once per
 * Data, the pointers to the model's and the data's arrays; each algorithm's module registers
 * its kernel compiled as a C function (a numba cfunc, on entry.py's signature) when it is
 * imported. A call checks its vectors with numpy's C API, allocates the result and calls the
 * kernel.
 *
 * A call returns None when it did not compute: a vector that is not a C-contiguous float64
 * array of the model's size in native byte order (the Python side converts it, or raises the
 * error that says what is wrong, and calls again), or the kernel's status in Handle.status
 * (ABA: the body whose joint is singular).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

/* entry.py's KERNEL signature: the model (mi, mf, maps, lin), the state (q, v, x), the external
 * wrenches (fext, its rows: 0 or nb) and friction, the data (W, M6, wv), the result, and the
 * sizes nb, len(maps), len(lin), len(wv). Returns entry.py's OK or a status. */
typedef long long (*kernel_fn)(const long long *, const double *, const long long *,
                               const double *, const double *, const double *, const double *,
                               const double *, long long, long long, double *, double *,
                               double *, double *, long long, long long, long long, long long);

enum { KERNEL_RNEA, KERNEL_ABA, KERNEL_CRBA, KERNELS };
static const char *const kernel_names[KERNELS] = {"rnea", "aba", "crba"};
static kernel_fn kernels[KERNELS]; /* as registered by rnea.py, aba.py and crba.py */
#define OK -1 /* entry.py's OK */

typedef struct {
    PyObject_HEAD
    PyObject *model; /* the Model the arrays are of */
    PyObject *keep;  /* the arrays pointed to, kept alive */
    const long long *mi, *maps;
    const double *mf, *lin;
    double *W, *M6, *wv;
    long long nb, nmaps, nlin, nwv, nq, nv;
    long long status; /* the last call's: OK, or what the kernel returned */
} Handle;

static void handle_dealloc(Handle *h) {
    Py_XDECREF(h->model);
    Py_XDECREF(h->keep);
    Py_TYPE(h)->tp_free((PyObject *)h);
}

static PyObject *handle_status(Handle *h, void *closure) { return PyLong_FromLongLong(h->status); }

static PyGetSetDef handle_getset[] = {
    {"status", (getter)handle_status, NULL, "the last call's status: -1 (OK) or the kernel's", NULL},
    {NULL}};

static PyTypeObject HandleType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rbd_ros.dynamics.multibody._entry.Handle",
    .tp_basicsize = sizeof(Handle),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)handle_dealloc,
    .tp_getset = handle_getset,
    .tp_doc = "A model's and a Data's arrays, for rnea, aba and crba."};

/* register(name, address): the kernel of "rnea", "aba" or "crba", a cfunc on entry.py's
 * signature. */
static PyObject *register_kernel(PyObject *self, PyObject *args) {
    const char *name;
    unsigned long long address;
    if (!PyArg_ParseTuple(args, "sK", &name, &address))
        return NULL;
    for (int k = 0; k < KERNELS; k++) {
        if (strcmp(name, kernel_names[k]) == 0) {
            kernels[k] = (kernel_fn)(uintptr_t)address;
            Py_RETURN_NONE;
        }
    }
    PyErr_Format(PyExc_ValueError, "register: no kernel '%s' (rnea, aba or crba)", name);
    return NULL;
}

/* handle(model, mi, mf, maps, lin, W, M6, wv, nq, nv): Data checked the arrays' shapes against
 * the layout; here their types and contiguity, which the pointers rely on, and that the three
 * kernels are registered (the calls then need not look). */
static PyObject *make_handle(PyObject *self, PyObject *args) {
    PyObject *model;
    PyArrayObject *a[7];
    static const int types[7] = {NPY_INT64, NPY_FLOAT64, NPY_INT64, NPY_FLOAT64,
                                 NPY_FLOAT64, NPY_FLOAT64, NPY_FLOAT64};
    long long nq, nv;
    if (!PyArg_ParseTuple(args, "OO!O!O!O!O!O!O!LL", &model, &PyArray_Type, &a[0], &PyArray_Type,
                          &a[1], &PyArray_Type, &a[2], &PyArray_Type, &a[3], &PyArray_Type, &a[4],
                          &PyArray_Type, &a[5], &PyArray_Type, &a[6], &nq, &nv))
        return NULL;
    for (int k = 0; k < KERNELS; k++) {
        if (!kernels[k]) { /* a handle exists only once every call it serves can be made */
            PyErr_Format(PyExc_RuntimeError, "handle: no %s kernel registered (import "
                         "rbd_ros.dynamics)", kernel_names[k]);
            return NULL;
        }
    }
    for (int i = 0; i < 7; i++) {
        if (PyArray_TYPE(a[i]) != types[i] || !PyArray_ISNOTSWAPPED(a[i]) ||
            !(i >= 4 ? PyArray_ISCARRAY(a[i]) : PyArray_ISCARRAY_RO(a[i]))) {
            PyErr_Format(PyExc_ValueError, "handle: array %d is not a C-contiguous native %s "
                         "array%s", i, types[i] == NPY_INT64 ? "int64" : "float64",
                         i >= 4 ? " that can be written" : "");
            return NULL;
        }
    }
    Handle *h = PyObject_New(Handle, &HandleType);
    if (!h)
        return NULL;
    Py_INCREF(model);
    h->model = model;
    h->keep = PyTuple_Pack(7, a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
    if (!h->keep) {
        Py_DECREF(h);
        return NULL;
    }
    h->mi = PyArray_DATA(a[0]);
    h->mf = PyArray_DATA(a[1]);
    h->maps = PyArray_DATA(a[2]);
    h->lin = PyArray_DATA(a[3]);
    h->W = PyArray_DATA(a[4]);
    h->M6 = PyArray_DATA(a[5]);
    h->wv = PyArray_DATA(a[6]);
    h->nb = PyArray_DIM(a[0], 0);
    h->nmaps = PyArray_SIZE(a[2]);
    h->nlin = PyArray_SIZE(a[3]);
    h->nwv = PyArray_SIZE(a[6]);
    h->nq = nq;
    h->nv = nv;
    h->status = OK;
    return (PyObject *)h;
}

/* A C-contiguous float64 vector of n entries in native byte order. */
static inline const double *vector(PyObject *o, long long n) {
    if (!PyArray_Check(o))
        return NULL;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != NPY_FLOAT64 || PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != n ||
        !PyArray_ISCARRAY_RO(a) || !PyArray_ISNOTSWAPPED(a))
        return NULL;
    return PyArray_DATA(a);
}

/* rnea/aba(handle, model, q, v, x, fext, friction): fext as Model.check_fext returns it,
 * (nb, 6) or (0, 6); crba(handle, model, q). None also for a model not the handle's. */
static PyObject *call(int k, PyObject *const *args, Py_ssize_t nargs) {
    int state = k != KERNEL_CRBA;
    if (nargs != (state ? 7 : 3) || Py_TYPE(args[0]) != &HandleType) {
        PyErr_SetString(PyExc_TypeError, state ? "expected (handle, model, q, v, x, fext, "
                                                 "friction)" : "expected (handle, model, q)");
        return NULL;
    }
    Handle *h = (Handle *)args[0];
    const double *q = vector(args[2], h->nq), *v = NULL, *x = NULL, *fext = NULL;
    long long nfext = 0;
    int friction = 0;
    h->status = OK;
    if (args[1] != h->model || !q)
        Py_RETURN_NONE;
    if (state) {
        v = vector(args[3], h->nv);
        x = vector(args[4], h->nv);
        if (!v || !x || !PyArray_Check(args[5]))
            Py_RETURN_NONE;
        PyArrayObject *f = (PyArrayObject *)args[5];
        nfext = PyArray_NDIM(f) == 2 ? PyArray_DIM(f, 0) : -1;
        if (PyArray_TYPE(f) != NPY_FLOAT64 || (nfext != 0 && nfext != h->nb) ||
            PyArray_DIM(f, 1) != 6 || !PyArray_ISCARRAY_RO(f) || !PyArray_ISNOTSWAPPED(f))
            Py_RETURN_NONE;
        fext = PyArray_DATA(f);
        friction = PyObject_IsTrue(args[6]);
        if (friction < 0)
            return NULL;
    }
    npy_intp dims[2] = {h->nv, h->nv};
    PyObject *out = PyArray_SimpleNew(state ? 1 : 2, dims, NPY_FLOAT64);
    if (!out)
        return NULL;
    h->status = kernels[k](h->mi, h->mf, h->maps, h->lin, q, v, x, fext, nfext, friction, h->W,
                           h->M6, h->wv, PyArray_DATA((PyArrayObject *)out), h->nb, h->nmaps,
                           h->nlin, h->nwv);
    if (h->status != OK) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    return out;
}

static PyObject *rnea(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return call(KERNEL_RNEA, args, nargs);
}
static PyObject *aba(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return call(KERNEL_ABA, args, nargs);
}
static PyObject *crba(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return call(KERNEL_CRBA, args, nargs);
}

static PyMethodDef methods[] = {
    {"register", register_kernel, METH_VARARGS, "register(name, address): a kernel's cfunc."},
    {"handle", make_handle, METH_VARARGS, "A Handle (see entry.py)."},
    {"rnea", (PyCFunction)(void (*)(void))rnea, METH_FASTCALL,
     "rnea(handle, model, q, v, a, fext, friction)"},
    {"aba", (PyCFunction)(void (*)(void))aba, METH_FASTCALL,
     "aba(handle, model, q, v, tau, fext, friction)"},
    {"crba", (PyCFunction)(void (*)(void))crba, METH_FASTCALL, "crba(handle, model, q)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_entry", NULL, -1, methods};

PyMODINIT_FUNC PyInit__entry(void) {
    import_array();
    if (PyType_Ready(&HandleType) < 0)
        return NULL;
    return PyModule_Create(&module);
}
