// SPDX-License-Identifier: GPL-3.0-or-later
// GIO's GDBus (Debian libglib2.0-dev), for the unlock agent's watch on logind.
#include <gio/gio.h>
