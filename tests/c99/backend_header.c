/* SPDX-License-Identifier: Apache-2.0 */
/* The plugin ABI header must be C99 too: a backend may be written in C. */
#include <xfer/xfer_backend.h>

int main(void) { return XFER_BACKEND_TABLE_V1_SIZE > sizeof(xfer_backend_table) ? 1 : 0; }
