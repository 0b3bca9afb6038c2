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
// Sound for video playback (sound.c): a stream of interleaved S16LE PCM to the desktop's
// sound server over its Unix socket, or NULL when there is none (then play silently).
// Write blocks while the server's buffer is full; close drops what is still buffered.
void *n11g_sound_open(unsigned rate, unsigned channels);
int n11g_sound_write(void *sound, const void *data, size_t bytes);
void n11g_sound_close(void *sound);
// On GTK before 4.14, when GSK_RENDERER is unset and OpenGL is software (llvmpipe, softpipe:
// no GPU), sets GSK_RENDERER=cairo, as GTK 4.14+ decides by itself. Before the first window
// is realized. 1 when it did.
int n11g_prefer_cairo_over_software_gl(void);
// The gallery's model (cellmodel.c): GtkStringObjects made only for the rows GTK asks for,
// each from the text `text(data, position, buf, len)` writes then (NUL-terminated, fewer than
// len bytes). `destroy(data)` runs when the model is finalized.
typedef void (*n11g_cell_text_fn)(gpointer data, guint position, char *buf, gsize len);
GListModel *n11g_cell_model_new(n11g_cell_text_fn text, gpointer data, GDestroyNotify destroy);
// The model now has `count` rows, every one asked of the provider afresh. 0, or -1 when out
// of memory (the model is unchanged).
int n11g_cell_model_reset(GListModel *model, guint count);
#endif
