// SPDX-License-Identifier: GPL-3.0-or-later
// The few GTK calls Swift cannot make (variadic functions, GValue boxes), for nu11vlt-app.
#ifndef NU11GTK_H
#define NU11GTK_H
#include <gtk/gtk.h>

// The accessible name (and description) screen readers announce for a widget.
void n11g_set_label(GtkWidget *widget, const char *label);
void n11g_set_description(GtkWidget *widget, const char *description);
// GTK's recent-files list off (no ~/.local/share/recently-used.xbel entry for what the
// user imports or exports).
void n11g_harden_settings(void);
// A drop of files: their local paths, joined by '\n' (g_free the result); NULL when none.
char *n11g_dropped_paths(const GValue *value);
// The type a drop target accepts for files.
GType n11g_file_list_type(void);
// A property of type int or boolean (g_object_set).
void n11g_set_bool(gpointer object, const char *property, gboolean value);
#endif
