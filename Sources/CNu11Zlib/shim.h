// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef NU11VLT_CNU11ZLIB_SHIM_H
#define NU11VLT_CNU11ZLIB_SHIM_H
#include <zlib.h>
#endif
