#ifndef NU11VLT_CZLIB_SHIM_H
#define NU11VLT_CZLIB_SHIM_H
#include <zlib.h>
#endif
