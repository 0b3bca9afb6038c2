#ifndef NU11VLT_CVIPS_SHIM_H
#define NU11VLT_CVIPS_SHIM_H
#include <vips/vips.h>
#endif
