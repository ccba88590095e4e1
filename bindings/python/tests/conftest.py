# SPDX-License-Identifier: Apache-2.0
# Run against a build tree without installing: XFER_LIBRARY names libxfer.so (CTest sets it),
# and the package is imported from bindings/python.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
