# SPDX-License-Identifier: Apache-2.0
"""DLPack with ctypes, no compiled code: export (make_capsule) and import (import_capsule).

Export: a "dltensor" capsule (DLManagedTensor), or "dltensor_versioned" (DLPack 1.0) for a
consumer that passes max_version >= (1, 0), keeps the exporting view (and so the xfer buffer)
alive until the consumer calls the deleter; a capsule never consumed is released by its own
destructor.
Import: xfer.copy takes any object with __dlpack__; the capsule it returns ("dltensor" or, for
max_version >= (1, 0), "dltensor_versioned") is renamed "used_..." as the protocol asks, and the
producer's deleter runs when the Imported object is closed or collected: after the copy is done.
https://dmlc.github.io/dlpack/latest/c_api.html, https://dmlc.github.io/dlpack/latest/python_spec.html
"""
import ctypes
from ctypes import POINTER, Structure, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p

kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLCUDAManaged = 13

# DLManagedTensorVersioned.flags
DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0
DLPACK_FLAG_BITMASK_IS_COPIED = 1 << 1

DEVICE_NAMES = {kDLCPU: "kDLCPU", kDLCUDA: "kDLCUDA", kDLCUDAHost: "kDLCUDAHost", kDLCUDAManaged: "kDLCUDAManaged",
                4: "kDLOpenCL", 7: "kDLVulkan", 8: "kDLMetal", 9: "kDLVPI", 10: "kDLROCM", 11: "kDLROCMHost",
                12: "kDLExtDev", 14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon", 17: "kDLMAIA"}

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


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class _DLManagedTensorRaw(Structure):  # the same layout, the deleter as a plain address
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", c_void_p), ("flags", c_uint64),
                ("dl_tensor", DLTensor)]


_NAME = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"
_live = {}  # address -> (managed tensor, shape, strides, owner): alive until the deleter runs


def _release(address):
    _live.pop(address, None)


# One deleter for both layouts: it only needs the address.
@ctypes.CFUNCTYPE(None, c_void_p)
def _delete(managed):
    _release(managed)


# The capsule destructor receives the capsule while it is being destroyed (reference count 0):
# it is taken as a plain address, never as a Python object, so ctypes does not touch its count.
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_get = ctypes.PYFUNCTYPE(c_void_p, c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [c_void_p, ctypes.c_char_p, c_void_p]
# The import side holds the capsule as a Python object (a live reference).
_obj_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_IsValid", ctypes.pythonapi))
_obj_get = ctypes.PYFUNCTYPE(c_void_p, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))
_obj_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_SetName", ctypes.pythonapi))
# A producer's deleter is called with the GIL held (PYFUNCTYPE): some take Python references.
_CallDeleter = ctypes.PYFUNCTYPE(None, c_void_p)


@ctypes.CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule):
    # A consumer renames the capsule "used_dltensor[_versioned]" and calls the deleter itself; a
    # capsule still named "dltensor[_versioned]" was never consumed, so the deleter runs here.
    for name in (_NAME, _NAME_VERSIONED):
        if _capsule_is_valid(capsule, name):
            _release(_capsule_get(capsule, name))


def dtype_code(dtype):
    """DLDataType of a NumPy dtype."""
    if dtype.kind not in _TYPE_CODES:
        raise TypeError(f"DLPack has no type for NumPy dtype {dtype}")
    return DLDataType(_TYPE_CODES[dtype.kind], dtype.itemsize * 8, 1)


def make_capsule(ptr, device_type, device_id, dtype, shape, owner, versioned=False, read_only=False):
    """A PyCapsule for a C-contiguous array of `shape` (elements) and NumPy `dtype` at address
    `ptr` on (device_type, device_id), keeping `owner` alive until the consumer's deleter call:
    "dltensor" (DLManagedTensor), or with versioned=True "dltensor_versioned"
    (DLManagedTensorVersioned, DLPack 1.0, with the READ_ONLY flag when read_only).
    Raises TypeError for a dtype DLPack has no code for."""
    ndim = len(shape)
    shape_arr = (c_int64 * max(ndim, 1))(*shape)
    strides = []
    step = 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    strides_arr = (c_int64 * max(ndim, 1))(*strides)
    tensor = DLTensor(ptr, DLDevice(device_type, device_id), ndim, dtype_code(dtype),
                      ctypes.cast(shape_arr, POINTER(c_int64)), ctypes.cast(strides_arr, POINTER(c_int64)), 0)
    deleter = ctypes.cast(_delete, c_void_p).value
    if versioned:
        managed = DLManagedTensorVersioned(DLPackVersion(1, 0), None, deleter,
                                           DLPACK_FLAG_BITMASK_READ_ONLY if read_only else 0, tensor)
        name = _NAME_VERSIONED
    else:
        managed = _DLManagedTensorRaw(tensor, None, deleter)
        name = _NAME
    address = ctypes.addressof(managed)
    _live[address] = (managed, shape_arr, strides_arr, owner)
    return _capsule_new(address, name, ctypes.cast(_capsule_destructor, c_void_p))


def live_count():
    """Exported tensors not yet released (for tests)."""
    return len(_live)


def device_name(device_type):
    """"kDLCUDA" for 2, and so on; "device type N" for types DLPack does not name."""
    return DEVICE_NAMES.get(device_type, f"device type {device_type}")


def _itemsize(dt):
    return max(1, (dt.bits * max(dt.lanes, 1) + 7) // 8)


_NUMPY_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}


class Imported:
    """A tensor taken from a producer's capsule: ptr (int, byte_offset included), device_type,
    device_id, shape (tuple), strides (tuple of elements, or None: compact row-major), itemsize,
    nbytes, typestr (a NumPy dtype string, or "" when NumPy has no such type), read_only (the
    versioned READ_ONLY flag), copied (IS_COPIED). close() (or collection) calls the producer's
    deleter once; until then the producer keeps the memory alive. Not thread-safe: one owner."""

    def __init__(self, capsule):
        if _obj_is_valid(capsule, b"dltensor_versioned"):
            self._used = b"used_dltensor_versioned"
            address = _obj_get(capsule, b"dltensor_versioned")
            managed = DLManagedTensorVersioned.from_address(address)
            flags = managed.flags
            deleter = managed.deleter
        elif _obj_is_valid(capsule, b"dltensor"):
            self._used = b"used_dltensor"
            address = _obj_get(capsule, b"dltensor")
            managed = _DLManagedTensorRaw.from_address(address)
            flags = 0
            deleter = managed.deleter
        else:
            raise TypeError("__dlpack__ returned something that is not an unconsumed DLPack capsule")
        t = managed.dl_tensor
        # The protocol: a consumer renames the capsule, and then owns the deleter call.
        _obj_set_name(capsule, self._used)
        self._address, self._deleter = address, deleter
        self.device_type, self.device_id = t.device.device_type, t.device.device_id
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        self.strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
        self.itemsize = _itemsize(t.dtype)
        self.ptr = (t.data or 0) + t.byte_offset
        n = 1
        for extent in self.shape:
            n *= extent
        self.nbytes = n * self.itemsize
        kind = _NUMPY_KINDS.get(t.dtype.code)
        self.typestr = f"{kind}{self.itemsize}" if kind and t.dtype.lanes == 1 and t.dtype.bits % 8 == 0 else ""
        self.read_only = bool(flags & DLPACK_FLAG_BITMASK_READ_ONLY)
        self.copied = bool(flags & DLPACK_FLAG_BITMASK_IS_COPIED)

    def close(self):
        address, self._address = self._address, None
        if address and self._deleter:
            _CallDeleter(self._deleter)(address)

    def __del__(self):
        try:
            self.close()
        except Exception:  # nothing can report from a finalizer
            pass


def import_capsule(capsule):
    """An Imported for a capsule returned by some __dlpack__ (consumes it)."""
    return Imported(capsule)
