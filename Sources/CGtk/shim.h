// SPDX-License-Identifier: GPL-3.0-or-later
// GTK 4 and libadwaita, as Debian ships them (libgtk-4-dev 4.8, libadwaita-1-dev 1.2).
#include <adwaita.h>
