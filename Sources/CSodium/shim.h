#ifndef NU11VLT_CSODIUM_SHIM_H
#define NU11VLT_CSODIUM_SHIM_H
#include <sodium.h>
#endif
