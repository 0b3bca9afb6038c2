// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef NU11VLT_IMAGE_H
#define NU11VLT_IMAGE_H
#include <stddef.h>
#include <stdint.h>

/* A small C face for libvips, whose API is variadic: decoding from memory only, the
 * trusted loaders only, no operation cache, never a temp file. Plain C types only. */

/* Starts libvips once (thread-safe). Returns 0, or -1 with a message in err. */
int nu11_image_init(char *err, size_t errlen);

typedef struct {
    int width;          /* as displayed (after EXIF orientation) */
    int height;
    int orientation;    /* EXIF orientation 1..8 (1 when absent) */
    int has_alpha;
    char loader[32];    /* e.g. "jpegload_buffer" */
} nu11_image_header;

/* Reads only the header of an image in memory. Refuses images of more than max_pixels
 * pixels (decompression bombs) and formats outside the trusted loaders. */
int nu11_image_header_read(const void *buf, size_t len, int64_t max_pixels,
                           nu11_image_header *out, char *err, size_t errlen);

/* The image's EXIF block (TIFF bytes), if any: *exif is NULL when there is none.
 * Free with nu11_image_free. */
int nu11_image_exif(const void *buf, size_t len, void **exif, size_t *exif_len, char *err, size_t errlen);

/* Decodes with shrink-on-load, rotates upright (then `turns` quarter turns clockwise: the
 * user's rotation; png and pixels take it too), and encodes two thumbnails whose long
 * side is at most preview_px and grid_px (never enlarged): JPEG, or WebP when the image
 * has alpha (*webp = 1). Truncated or damaged images fail. Free outputs with
 * nu11_image_free (which zeroes them). */
int nu11_image_thumbnails(const void *buf, size_t len, int turns, int preview_px, int grid_px, int quality,
                          void **preview, size_t *preview_len, int *preview_w, int *preview_h,
                          void **grid, size_t *grid_len, int *grid_w, int *grid_h,
                          int *webp, char *err, size_t errlen);

/* Re-encodes an image as PNG (for terminals whose image protocol takes only PNG), its
 * long side at most max_side (never enlarged), upright. */
int nu11_image_png(const void *buf, size_t len, int max_side, int turns, void **png, size_t *png_len, char *err, size_t errlen);

/* Decodes to raw 8-bit sRGB pixels, upright, the long side at most max_side: rows of
 * width * bands bytes, no padding, bands 3 (RGB) or 4 (RGBA, straight alpha). For display in a
 * process that holds keys and must parse nothing a decoder made. */
int nu11_image_pixels(const void *buf, size_t len, int max_side, int turns, void **pixels, size_t *pixels_len,
                      int *width, int *height, int *bands, char *err, size_t errlen);

/* The helper's lock-down (see sandbox.c): Landlock with an empty ruleset, then a seccomp
 * allow-list. 0, or -1 with errno set. */
int nu11_sandbox_enter(unsigned long long max_memory_bytes);
/* The Landlock ABI the lock-down applied: 0 when the kernel has none, -1 before it ran. */
int nu11_sandbox_landlock_abi(void);
/* The seccomp part alone, and the Landlock part alone (for the probe of each wall). */
int nu11_sandbox_seccomp(void);
int nu11_sandbox_landlock_only(void);
/* The names of the allow-listed system calls, by index (NULL past the end). */
const char *nu11_sandbox_allowed_name(int index);
/* The calls decoding makes that are refused on purpose (harmlessly), by index. */
const char *nu11_sandbox_refused_name(int index);

/* What the probe attacks (see probe.c); zero or NULL to skip one. */
typedef struct {
    int parent;
    unsigned long long parent_addr;
    int sibling;
    unsigned long long sibling_addr;
    const char *visible_file;
    const char *home_file;
    const char *keystore_file;
    const char *new_file;
} nu11_probe_targets;
/* Tries every escape; writes one line per attempt to `out`; returns how many got through. */
int nu11_sandbox_probe(const nu11_probe_targets *targets, int out);
/* The file attempts alone (for Landlock without seccomp). */
int nu11_sandbox_probe_files(const nu11_probe_targets *targets, int out);
/* Inside the full lock-down: whether the memory limit `limit` (bytes) holds ("memory-limit
 * works") and a decoder's working set fits under it; returns the number of failures. */
int nu11_sandbox_probe_memory(unsigned long long limit, int out);
/* Makes an x32 system call: the lock-down kills the process (SIGSYS). */
void nu11_sandbox_probe_x32(void);

/* The two thumbnails of a decoded video frame: RGB24 rows without padding, turned
 * clockwise by `rotate` (0, 90, 180, 270) first. Always JPEG. */
int nu11_image_thumbnails_rgb(const void *rgb, int width, int height, int rotate, int preview_px, int grid_px,
                              int quality, void **preview, size_t *preview_len, int *preview_w, int *preview_h,
                              void **grid, size_t *grid_len, int *grid_w, int *grid_h,
                              char *err, size_t errlen);

/* What a video's container and first picture say (see video.c). */
typedef struct {
    int width;              /* as stored, before rotation */
    int height;
    int rotate;             /* clockwise degrees to show it upright: 0, 90, 180, 270 */
    int64_t duration_ms;    /* -1 when the container does not say */
    char created[64];       /* the container's creation date as written (ISO 8601), or "" */
    int has_location;       /* the container carries a location (ISO 6709 tag) */
    char container[16];     /* "mp4", "quicktime", "matroska", "webm" */
    char codec[16];         /* the video decoder's name */
} nu11_video_info;

/* Opens a video held in memory with FFmpeg (the vetted demuxers and decoders only, no
 * threads, no file, no network), reads its facts and decodes its first picture to RGB24
 * (*rgb, width x height x 3 bytes, free with nu11_image_free). Refuses a picture of more
 * than max_pixels. 0, or -1 with a one-line reason. */
int nu11_video_poster(const void *buf, size_t len, int64_t max_pixels, nu11_video_info *info,
                      void **rgb, size_t *rgb_len, char *err, size_t errlen);

/* Whether FFmpeg, opening the container as nu11_video_poster does (no decoding), finds a
 * location in it: a metadata entry of the file or of any stream whose key names a location
 * (location, location-eng, com.apple.quicktime.location.ISO6709, LOCATION, …). 1 yes, 0 no,
 * or -1 with a one-line reason when the container does not open. */
int nu11_video_has_location(const void *buf, size_t len, char *err, size_t errlen);

/* Whether bytes start like a container nu11_video_poster opens (MP4/QuickTime, Matroska/WebM). */
int nu11_video_signature(const void *buf, size_t len);

/* Playback (see play.c). The sink gets each decoded piece in presentation order per stream:
 *   NU11_PLAY_FRAME: a = width, b = height, data = width x height RGBA (rows without padding);
 *   NU11_PLAY_AUDIO: a = sample rate, b = channels (1 or 2), data = interleaved S16 (native order).
 * pts_us is microseconds from the start. It returns 0 to go on, anything else to stop. */
enum { NU11_PLAY_FRAME = 1, NU11_PLAY_AUDIO = 2 };
#define NU11_PLAY_MAX_SIDE 1920
#define NU11_PLAY_PIXEL_RATE 62208000LL           /* 1920 x 1080 at 30 frames a second */
#define NU11_PLAY_MAX_SOURCE_PIXELS (8192LL * 8192)
typedef int (*nu11_play_sink)(void *ctx, int kind, int64_t pts_us, int a, int b, const void *data, size_t len);

/* Decodes a whole video held in memory (as nu11_video_poster opens it) and hands every frame,
 * scaled to at most max_side (16...NU11_PLAY_MAX_SIDE) on the long side and upright, and,
 * when with_audio, its first audio stream's sound, to the sink. 0, or -1 with a reason. */
int nu11_video_play(const void *buf, size_t len, int max_side, int with_audio, nu11_play_sink sink, void *ctx,
                    char *err, size_t errlen);

/* Zeroes and frees a buffer this library returned. */
void nu11_image_free(void *p, size_t len);

#endif
