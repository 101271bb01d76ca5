#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef int (*lagsim_rhs_fn)(double t, const double *y, double *out, const double *p);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    lagsim_rhs_fn f;
    const double *p;
    PyObject *size, *empty, *convert, *error, *params;
    Py_ssize_t n;
} RhsObject;

static int get_input(RhsObject *r, PyObject *y, Py_buffer *view, PyObject **held)
{
    *held = NULL;
    if (PyObject_GetBuffer(y, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
        if (view->len == r->n * (Py_ssize_t)sizeof(double) && view->format
            && (strcmp(view->format, "d") == 0 || strcmp(view->format, "<d") == 0))
            return 0;
        PyBuffer_Release(view);
    } else {
        PyErr_Clear();
    }
    *held = PyObject_CallOneArg(r->convert, y);
    if (*held == NULL) return -1;
    if (PyObject_GetBuffer(*held, view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (view->len != r->n * (Py_ssize_t)sizeof(double)) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_ValueError, "rhs: y must have %zd values", r->n);
        return -1;
    }
    return 0;
}

static PyObject *rhs_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames)
{
    RhsObject *r = (RhsObject *)self;
    Py_buffer in, out;
    PyObject *held, *result;
    double t;
    int code;
    if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "rhs(t, y) takes two positional arguments");
        return NULL;
    }
    t = PyFloat_AsDouble(args[0]);
    if (t == -1.0 && PyErr_Occurred()) return NULL;
    if (get_input(r, args[1], &in, &held) < 0) { Py_XDECREF(held); return NULL; }
    result = PyObject_CallOneArg(r->empty, r->size);
    if (result == NULL
        || PyObject_GetBuffer(result, &out, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&in); Py_XDECREF(held); Py_XDECREF(result);
        return NULL;
    }
    code = r->f(t, (const double *)in.buf, (double *)out.buf, r->p);
    PyBuffer_Release(&out);
    PyBuffer_Release(&in);
    Py_XDECREF(held);
    if (code) {
        Py_DECREF(result);
        PyErr_SetString(r->error, "Singular matrix");
        return NULL;
    }
    return result;
}

static void rhs_dealloc(PyObject *self)
{
    RhsObject *r = (RhsObject *)self;
    Py_XDECREF(r->size); Py_XDECREF(r->empty); Py_XDECREF(r->convert); Py_XDECREF(r->error);
    Py_XDECREF(r->params);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject RhsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lagsim_native.Rhs",
    .tp_basicsize = sizeof(RhsObject),
    .tp_dealloc = rhs_dealloc,
    .tp_vectorcall_offset = offsetof(RhsObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "rhs(t, y) -> fresh y' from a compiled lagsim model",
};

static PyObject *make(PyObject *module, PyObject *args)
{
    unsigned long long address, paddress;
    Py_ssize_t n;
    PyObject *empty, *convert, *error, *params;
    RhsObject *r;
    if (!PyArg_ParseTuple(args, "KnOOOKO", &address, &n, &empty, &convert, &error, &paddress,
                          &params))
        return NULL;
    r = PyObject_New(RhsObject, &RhsType);
    if (r == NULL) return NULL;
    r->vectorcall = rhs_vectorcall;
    r->f = (lagsim_rhs_fn)(uintptr_t)address;
    r->p = (const double *)(uintptr_t)paddress;
    r->n = n;
    r->size = PyLong_FromSsize_t(n);
    Py_INCREF(empty); r->empty = empty;
    Py_INCREF(convert); r->convert = convert;
    Py_INCREF(error); r->error = error;
    Py_INCREF(params); r->params = params;
    return (PyObject *)r;
}

static PyMethodDef methods[] = {
    {"make", make, METH_VARARGS,
     "make(address, size, empty, convert, error, params_address, params) -> Rhs"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_lagsim_native", NULL, -1, methods,
};

PyMODINIT_FUNC PyInit__lagsim_native(void)
{
    if (PyType_Ready(&RhsType) < 0) return NULL;
    return PyModule_Create(&moduledef);
}
