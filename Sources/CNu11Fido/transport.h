// SPDX-License-Identifier: GPL-3.0-or-later
// Debug builds only: libfido2's custom-transport hooks over an AF_UNIX socket, for the
// project's software authenticator (Tests/Tools/soft_fido2.py). Never in release builds.
#ifndef NU11FIDO_TRANSPORT_H
#define NU11FIDO_TRANSPORT_H
#include <fido.h>
int n11fido_use_unix_transport(fido_dev_t *dev);
#endif
