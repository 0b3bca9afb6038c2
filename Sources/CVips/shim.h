// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef NU11VLT_CVIPS_SHIM_H
#define NU11VLT_CVIPS_SHIM_H
#include <vips/vips.h>
#endif
