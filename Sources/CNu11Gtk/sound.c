// SPDX-License-Identifier: GPL-3.0-or-later
// Sound for the app's video playback: raw PCM (decoded by the sandboxed helper) to the
// desktop's sound server, through PulseAudio's simple API (PipeWire serves it too). The
// library is loaded at run time (dlopen of libpulse-simple.so.0, which every desktop with
// sound has), so nu11vlt-app needs no new build or package dependency and plays silently
// where it is missing. The server is always named explicitly as a Unix socket
// (unix:$XDG_RUNTIME_DIR/pulse/native): libpulse is never left to pick a TCP server from
// PULSE_SERVER or client.conf, and nothing is autospawned.
#include "nu11gtk.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

typedef struct { int format; uint32_t rate; uint8_t channels; } n11_pa_sample_spec;
typedef struct { uint32_t maxlength, tlength, prebuf, minreq, fragsize; } n11_pa_buffer_attr;
typedef void *(*pa_new_fn)(const char *server, const char *name, int dir, const char *dev, const char *stream,
                           const n11_pa_sample_spec *ss, const void *map, const n11_pa_buffer_attr *attr, int *error);
typedef int (*pa_write_fn)(void *s, const void *data, size_t bytes, int *error);
typedef void (*pa_free_fn)(void *s);
typedef int (*pa_flush_fn)(void *s, int *error);

static pa_new_fn pa_new;
static pa_write_fn pa_write;
static pa_free_fn pa_free;
static pa_flush_fn pa_flush;
static GOnce loaded = G_ONCE_INIT;

static gpointer load(gpointer unused) {
    (void)unused;
    void *lib = dlopen("libpulse-simple.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) return GINT_TO_POINTER(0);
    pa_new = (pa_new_fn)dlsym(lib, "pa_simple_new");
    pa_write = (pa_write_fn)dlsym(lib, "pa_simple_write");
    pa_free = (pa_free_fn)dlsym(lib, "pa_simple_free");
    pa_flush = (pa_flush_fn)dlsym(lib, "pa_simple_flush");
    return GINT_TO_POINTER(pa_new != NULL && pa_write != NULL && pa_free != NULL && pa_flush != NULL);
}

void *n11g_sound_open(unsigned rate, unsigned channels) {
    const char *runtime = g_getenv("XDG_RUNTIME_DIR");
    if (runtime == NULL || runtime[0] != '/' || rate < 8000 || rate > 192000 || channels < 1 || channels > 2) return NULL;
    char socket_path[512], server[520];
    if (snprintf(socket_path, sizeof socket_path, "%s/pulse/native", runtime) >= (int)sizeof socket_path) return NULL;
    struct stat info;
    if (stat(socket_path, &info) != 0 || !S_ISSOCK(info.st_mode)) return NULL;   // no sound server: silence
    if (!GPOINTER_TO_INT(g_once(&loaded, load, NULL))) return NULL;
    snprintf(server, sizeof server, "unix:%s", socket_path);
    n11_pa_sample_spec spec = { 3 /* PA_SAMPLE_S16LE */, rate, (uint8_t)channels };
    uint32_t quarter = rate * channels * 2 / 4;   // a quarter of a second buffered: Pause is heard soon
    n11_pa_buffer_attr attr = { (uint32_t)-1, quarter, (uint32_t)-1, (uint32_t)-1, (uint32_t)-1 };
    int error = 0;
    return pa_new(server, "Nu11VLT", 1 /* PA_STREAM_PLAYBACK */, NULL, "Video", &spec, NULL, &attr, &error);
}

int n11g_sound_write(void *sound, const void *data, size_t bytes) {
    int error = 0;
    return sound != NULL && pa_write(sound, data, bytes, &error) == 0 ? 0 : -1;
}

void n11g_sound_close(void *sound) {
    if (sound == NULL) return;
    int error = 0;
    pa_flush(sound, &error);
    pa_free(sound);
}
