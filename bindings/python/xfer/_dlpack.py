# SPDX-License-Identifier: Apache-2.0
"""DLPack export (the unversioned "dltensor" capsule) built with ctypes, no compiled code.

The capsule owns a DLManagedTensor whose manager_ctx keeps the exporting view (and so the xfer
buffer) alive until the consumer calls the deleter; a capsule never consumed is released by
its own destructor. https://dmlc.github.io/dlpack/latest/c_api.html
"""
import ctypes
from ctypes import POINTER, Structure, c_int32, c_int64, c_uint8, c_uint16, c_uint64, c_void_p

kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLCUDAManaged = 13

_TYPE_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}  # kDLInt, kDLUInt, kDLFloat, kDLComplex, kDLBool


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensor(Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", _Deleter)]

_NAME = b"dltensor"
_live = {}  # id -> (DLManagedTensor, shape, strides, owner): alive until the deleter runs


def _release(address):
    _live.pop(address, None)


@_Deleter
def _delete(managed):
    _release(ctypes.cast(managed, c_void_p).value)


# The capsule destructor receives the capsule while it is being destroyed (reference count 0):
# it is taken as a plain address, never as a Python object, so ctypes does not touch its count.
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_get = ctypes.PYFUNCTYPE(c_void_p, c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [c_void_p, ctypes.c_char_p, c_void_p]


@ctypes.CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule):
    # A consumer renames the capsule "used_dltensor" and calls the deleter itself; a capsule
    # still named "dltensor" was never consumed, so the producer's deleter runs here.
    if _capsule_is_valid(capsule, _NAME):
        _release(_capsule_get(capsule, _NAME))


def dtype_code(dtype):
    """DLDataType of a NumPy dtype."""
    if dtype.kind not in _TYPE_CODES:
        raise TypeError(f"DLPack has no type for NumPy dtype {dtype}")
    return DLDataType(_TYPE_CODES[dtype.kind], dtype.itemsize * 8, 1)


def make_capsule(ptr, device_type, device_id, dtype, shape, owner):
    """A "dltensor" PyCapsule for a C-contiguous array of `shape` at address `ptr`."""
    ndim = len(shape)
    shape_arr = (c_int64 * max(ndim, 1))(*shape)
    strides = []
    step = 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    strides_arr = (c_int64 * max(ndim, 1))(*strides)
    managed = DLManagedTensor()
    managed.dl_tensor = DLTensor(ptr, DLDevice(device_type, device_id), ndim, dtype_code(dtype),
                                 ctypes.cast(shape_arr, POINTER(c_int64)), ctypes.cast(strides_arr, POINTER(c_int64)), 0)
    managed.manager_ctx = None
    managed.deleter = _delete
    address = ctypes.addressof(managed)
    _live[address] = (managed, shape_arr, strides_arr, owner)
    return _capsule_new(address, _NAME, ctypes.cast(_capsule_destructor, c_void_p))


def live_count():
    """Exported tensors not yet released (for tests)."""
    return len(_live)
