// SPDX-License-Identifier: GPL-3.0-or-later
/* See include/cnu11session.h. GDBus delivers signals on the main context of the thread that
 * subscribed; the agent's loop dispatches it (nu11_session_watch_fired) each time it wakes. */
#include "cnu11session.h"
#include <ctype.h>
#include <gio/gio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fired;
static GDBusConnection *bus;

static void on_signal(GDBusConnection *connection, const gchar *sender, const gchar *path, const gchar *interface,
                      const gchar *member, GVariant *parameters, gpointer data) {
    (void)connection; (void)sender; (void)path; (void)interface; (void)data;
    if (strcmp(member, "PrepareForSleep") == 0) {
        if (g_variant_is_of_type(parameters, G_VARIANT_TYPE("(b)"))) {
            gboolean starting = FALSE;
            g_variant_get(parameters, "(b)", &starting);
            if (starting) fired = 1;
        }
    } else if (strcmp(member, "Lock") == 0) {
        fired = 1;
    } else if (strcmp(member, "PropertiesChanged") == 0 && g_variant_is_of_type(parameters, G_VARIANT_TYPE("(sa{sv}as)"))) {
        GVariant *changed = g_variant_get_child_value(parameters, 1);
        gboolean locked = FALSE;
        if (g_variant_lookup(changed, "LockedHint", "b", &locked) && locked) fired = 1;
        g_variant_unref(changed);
    }
}

/* logind's object path of session `id` (systemd's bus_label_escape). */
static void session_path(const char *id, char *out, size_t size) {
    size_t n = (size_t)snprintf(out, size, "/org/freedesktop/login1/session/");
    for (size_t i = 0; id[i] != '\0' && n + 4 < size; i++) {
        unsigned char c = (unsigned char)id[i];
        if (isalnum(c) && !(i == 0 && isdigit(c))) {
            out[n++] = (char)c;
        } else {
            n += (size_t)snprintf(out + n, size - n, "_%02x", c);
        }
    }
    out[n] = '\0';
}

int nu11_session_watch_start(void) {
    GError *error = NULL;
    bus = g_bus_get_sync(G_BUS_TYPE_SYSTEM, NULL, &error);
    if (bus == NULL) {
        g_clear_error(&error);
        return -1;
    }
    g_dbus_connection_signal_subscribe(bus, NULL, "org.freedesktop.login1.Manager", "PrepareForSleep", "/org/freedesktop/login1",
                                       NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_signal, NULL, NULL);
    char path[512];
    const char *id = getenv("XDG_SESSION_ID");
    const char *session = NULL;
    if (id != NULL && id[0] != '\0') {
        session_path(id, path, sizeof path);
        session = path;
    }
    g_dbus_connection_signal_subscribe(bus, NULL, "org.freedesktop.login1.Session", "Lock", session, NULL,
                                       G_DBUS_SIGNAL_FLAGS_NONE, on_signal, NULL, NULL);
    g_dbus_connection_signal_subscribe(bus, NULL, "org.freedesktop.DBus.Properties", "PropertiesChanged", session,
                                       "org.freedesktop.login1.Session", G_DBUS_SIGNAL_FLAGS_NONE, on_signal, NULL, NULL);
    return 0;
}

int nu11_session_watch_fired(void) {
    while (g_main_context_iteration(NULL, FALSE)) {}
    return fired;
}
