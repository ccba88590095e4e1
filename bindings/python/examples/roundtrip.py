# SPDX-License-Identifier: Apache-2.0
import numpy as np
import xfer

with xfer.Context() as ctx, ctx.alloc(1 << 24) as buf, ctx.stream() as s:   # backend from XFER_BACKEND
    a = buf.host_array(np.float32, (1024, 4096))      # NumPy view of the host memory, no copy
    expect = np.random.default_rng(1).random(a.shape, dtype=np.float32)
    a[:] = expect
    buf.to_device(s)                                  # queued on s, returns at once
    s.synchronize()                                   # a must stay untouched until the copy is done
    a[:] = 0
    buf.to_host(s)
    s.synchronize()
    assert np.array_equal(a, expect)
    try:
        buf.copy_async(xfer.Direction.TO_DEVICE, s, offset=buf.nbytes, nbytes=1)
    except xfer.Error as e:                           # status and the library's message
        assert e.status == xfer.Status.OUT_OF_BOUNDS
    print(f"python: {a.size} float32 round-tripped intact on {ctx.backend}")

x = np.arange(1 << 20, dtype=np.float32)              # arrays of any library, one call each:
d = xfer.to_device(x)                                 # NumPy -> a DeviceView of new device memory
y = xfer.to_host(d)                                   # and back; CuPy / PyTorch / JAX arrays alike
xfer.copy_async(y, d).wait()                          # queued; d and y stay alive until it is done
assert np.array_equal(y, x)
print(f"python: xfer.copy round-tripped {x.size} float32 on {xfer.default_context().backend}")
