// SPDX-License-Identifier: GPL-3.0-or-later
#include "nu11gtk.h"
#include <string.h>

void n11g_set_label(GtkWidget *widget, const char *label) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}

void n11g_set_description(GtkWidget *widget, const char *description) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description, -1);
}

void n11g_harden_settings(void) {
    GtkSettings *settings = gtk_settings_get_default();
    if (settings == NULL) return;
    g_object_set(settings, "gtk-recent-files-enabled", FALSE, "gtk-recent-files-max-age", 0, NULL);
}

GType n11g_file_list_type(void) { return GDK_TYPE_FILE_LIST; }

char *n11g_dropped_paths(const GValue *value) {
    if (value == NULL || !G_VALUE_HOLDS(value, GDK_TYPE_FILE_LIST)) return NULL;
    GSList *files = gdk_file_list_get_files(g_value_get_boxed(value));
    GString *out = g_string_new(NULL);
    for (GSList *l = files; l != NULL; l = l->next) {
        char *path = g_file_get_path(G_FILE(l->data));
        if (path == NULL) continue;  // not a local file: nothing to import
        if (out->len) g_string_append_c(out, '\n');
        g_string_append(out, path);
        g_free(path);
    }
    g_slist_free(files);
    if (out->len == 0) {
        g_string_free(out, TRUE);
        return NULL;
    }
    return g_string_free(out, FALSE);
}

void n11g_set_bool(gpointer object, const char *property, gboolean value) {
    g_object_set(object, property, value, NULL);
}

#include <epoxy/gl.h>

int n11g_prefer_cairo_over_software_gl(void) {
    // What GTK itself does from 4.14 on (its renderer choice skips OpenGL on llvmpipe).
    if (gtk_get_major_version() > 4 || (gtk_get_major_version() == 4 && gtk_get_minor_version() >= 14)) return 0;
    const char *chosen = g_getenv("GSK_RENDERER");
    if (chosen != NULL && chosen[0] != '\0') return 0;  // the user's choice stands
    GdkDisplay *display = gdk_display_get_default();
    if (display == NULL) return 0;
    GError *error = NULL;
    GdkGLContext *context = gdk_display_create_gl_context(display, &error);
    if (context == NULL || !gdk_gl_context_realize(context, &error)) {
        // No OpenGL at all: GTK falls back to cairo by itself.
        if (error != NULL) g_error_free(error);
        if (context != NULL) g_object_unref(context);
        return 0;
    }
    gdk_gl_context_make_current(context);
    const char *renderer = (const char *)glGetString(GL_RENDERER);
    int software = renderer != NULL && (strstr(renderer, "llvmpipe") != NULL || strstr(renderer, "softpipe") != NULL);
    gdk_gl_context_clear_current();
    g_object_unref(context);
    if (software) g_setenv("GSK_RENDERER", "cairo", TRUE);
    return software;
}
