// SPDX-License-Identifier: GPL-3.0-or-later
/* The C face of libvips for Nu11VLT (see include/nu11image.h). libvips's API is variadic
 * (NULL-terminated option lists), which Swift cannot call; everything here is a fixed
 * signature. Images come from memory and results go to memory: nothing touches the disk. */
#include "nu11image.h"

#include <pthread.h>
#include <string.h>
#include <vips/vips.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_status = -1;
static char init_error[256];

static void copy_error(char *err, size_t errlen, const char *fallback) {
    const char *msg = vips_error_buffer();
    if (msg == NULL || msg[0] == '\0') msg = fallback;
    if (err != NULL && errlen > 0) {
        size_t n = 0;
        /* The first line only: a one-line reason. */
        while (msg[n] != '\0' && msg[n] != '\n' && n + 1 < errlen) {
            err[n] = msg[n];
            n++;
        }
        err[n] = '\0';
    }
    vips_error_clear();
}

static void silent_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

static void start(void) {
    /* Never spill a decoded image to a temp file: operations that need the whole image
     * keep it in memory (bounded by the pixel limit the caller passes) instead. This
     * overrides any VIPS_DISC_THRESHOLD the environment sets; it is read once, below. */
    g_setenv("VIPS_DISC_THRESHOLD", "16g", TRUE);
    if (VIPS_INIT("nu11vlt") != 0) {
        copy_error(init_error, sizeof init_error, "libvips did not start");
        return;
    }
    (void)vips_get_disc_threshold();
    /* Only the vetted loaders (JPEG, PNG, WebP, GIF, TIFF, HEIF): never ImageMagick,
     * Matlab, FITS or the other loaders libvips marks untrusted. */
    vips_block_untrusted_set(TRUE);
    /* No operation cache: decoded pixels are not kept after a call returns. */
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    /* libvips and its loaders warn on stderr; a damaged image is reported by our caller. */
    g_log_set_handler("VIPS", G_LOG_LEVEL_MASK, silent_log, NULL);
    g_log_set_handler("GLib-GObject", G_LOG_LEVEL_WARNING, silent_log, NULL);
    init_status = 0;
}

int nu11_image_init(char *err, size_t errlen) {
    pthread_once(&once, start);
    if (init_status != 0 && err != NULL && errlen > 0) {
        strncpy(err, init_error, errlen - 1);
        err[errlen - 1] = '\0';
    }
    return init_status;
}

/* The loaders nu11vlt lets run, whatever libvips would pick: besides blocking the ones
 * libvips marks untrusted, anything not on this list is refused by name. */
static const char *const allowed_loaders[] = {
    "VipsForeignLoadJpegBuffer", "VipsForeignLoadPngBuffer", "VipsForeignLoadNsgifBuffer",
    "VipsForeignLoadWebpBuffer", "VipsForeignLoadTiffBuffer", "VipsForeignLoadHeifBuffer", NULL,
};

/* The file's own signature, checked before libvips looks: libvips asks every loader it has
 * whether it knows the bytes, and for bytes no trusted loader claims, that reaches
 * ImageMagick's format sniffers (whose loader is blocked, but not its sniffing). */
static int signature_known(const unsigned char *b, size_t len) {
    if (len >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return 1;                      /* JPEG */
    if (len >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0) return 1;                             /* PNG */
    if (len >= 6 && (memcmp(b, "GIF87a", 6) == 0 || memcmp(b, "GIF89a", 6) == 0)) return 1;      /* GIF */
    if (len >= 12 && memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WEBP", 4) == 0) return 1;       /* WebP */
    if (len >= 4 && (memcmp(b, "II*\0", 4) == 0 || memcmp(b, "MM\0*", 4) == 0)) return 1;        /* TIFF */
    if (len >= 12 && memcmp(b + 4, "ftyp", 4) == 0) {                                            /* HEIF/AVIF */
        static const char *const brands[] = { "heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1", "avif", "avis", NULL };
        for (int i = 0; brands[i] != NULL; i++) if (memcmp(b + 8, brands[i], 4) == 0) return 1;
    }
    return 0;
}

static int loader_allowed(const void *buf, size_t len) {
    if (!signature_known(buf, len)) return 0;
    const char *loader = vips_foreign_find_load_buffer(buf, len);
    if (loader == NULL) return 0;
    for (int i = 0; allowed_loaders[i] != NULL; i++) {
        if (strcmp(loader, allowed_loaders[i]) == 0) return 1;
    }
    return 0;
}

static VipsImage *open_header(const void *buf, size_t len, char *err, size_t errlen) {
    if (nu11_image_init(err, errlen) != 0) return NULL;
    if (!loader_allowed(buf, len)) {
        vips_error_clear();
        if (err != NULL && errlen > 0) g_strlcpy(err, "not an image format nu11vlt reads", errlen);
        return NULL;
    }
    VipsImage *image = vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (image == NULL) copy_error(err, errlen, "the image header cannot be read");
    return image;
}

int nu11_image_header_read(const void *buf, size_t len, int64_t max_pixels,
                           nu11_image_header *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    VipsImage *image = open_header(buf, len, err, errlen);
    if (image == NULL) return -1;
    int64_t w = vips_image_get_width(image), h = vips_image_get_height(image);
    if (w <= 0 || h <= 0 || w * h > max_pixels) {
        if (err != NULL && errlen > 0) {
            g_snprintf(err, errlen, "%lld x %lld pixels is over the limit of %lld megapixels",
                       (long long)w, (long long)h, (long long)(max_pixels / 1000000));
        }
        g_object_unref(image);
        return -1;
    }
    out->orientation = vips_image_get_orientation(image);
    gboolean swap = vips_image_get_orientation_swap(image);
    out->width = (int)(swap ? h : w);
    out->height = (int)(swap ? w : h);
    out->has_alpha = vips_image_hasalpha(image) ? 1 : 0;
    const char *loader = vips_foreign_find_load_buffer(buf, len);
    g_strlcpy(out->loader, loader != NULL ? loader : "", sizeof out->loader);
    g_object_unref(image);
    return 0;
}

int nu11_image_exif(const void *buf, size_t len, void **exif, size_t *exif_len, char *err, size_t errlen) {
    *exif = NULL;
    *exif_len = 0;
    VipsImage *image = open_header(buf, len, err, errlen);
    if (image == NULL) return -1;
    const void *data = NULL;
    size_t n = 0;
    if (vips_image_get_typeof(image, VIPS_META_EXIF_NAME) != 0 &&
        vips_image_get_blob(image, VIPS_META_EXIF_NAME, &data, &n) == 0 && data != NULL && n > 0) {
        *exif = g_malloc(n);
        memcpy(*exif, data, n);
        *exif_len = n;
    }
    g_object_unref(image);
    return 0;
}

static int save(VipsImage *image, int webp, int quality, void **out, size_t *out_len) {
    if (webp) return vips_webpsave_buffer(image, out, out_len, "Q", quality, "strip", TRUE, NULL);
    return vips_jpegsave_buffer(image, out, out_len, "Q", quality, "strip", TRUE, NULL);
}

/* vips_thumbnail_buffer into a box of box x box pixels, never enlarging, upright by EXIF
 * orientation, a truncated file an error. A JPEG is decoded at the smallest DCT scale (1/2,
 * 1/4, 1/8) whose longer side still reaches the box, as gdk-pixbuf and the browsers decode;
 * libvips alone keeps twice the box (for sharpness), decoding four times the pixels. A 12 MP
 * photo's 1600 px preview: 84 -> 55 ms, 52 dB PSNR against the full decode. */
static int thumbnail_upright(const void *buf, size_t len, int box, VipsImage **out) {
    const char *loader = vips_foreign_find_load_buffer(buf, len);
    if (box > 0 && loader != NULL && strcmp(loader, "VipsForeignLoadJpegBuffer") == 0) {
        VipsImage *head = NULL;
        if (vips_jpegload_buffer((void *)buf, len, &head, "access", VIPS_ACCESS_SEQUENTIAL, NULL) != 0) return -1;
        int64_t longer = MAX(vips_image_get_width(head), vips_image_get_height(head));
        g_object_unref(head);
        int shrink = 1;
        while (shrink < 8 && (int64_t)box * shrink * 2 <= longer) shrink *= 2;
        if (shrink > 1) {
            VipsImage *scaled = NULL;
            if (vips_jpegload_buffer((void *)buf, len, &scaled, "shrink", shrink, "access", VIPS_ACCESS_SEQUENTIAL,
                                     "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL) != 0) return -1;
            int status = vips_thumbnail_image(scaled, out, box, "height", box, "size", VIPS_SIZE_DOWN, NULL);
            g_object_unref(scaled);
            return status;
        }
    }
    return vips_thumbnail_buffer((void *)buf, len, out, box, "height", box, "size", VIPS_SIZE_DOWN,
                                 "option_string", "fail_on=truncated", NULL);
}

/* The same, then turned clockwise by `turns` quarter turns (the user's rotation, kept in the
 * item's sealed metadata: docs/FORMAT.md § 5.1 "rotate"); 0 leaves it as EXIF shows it. */
static int thumbnail_buffer(const void *buf, size_t len, int box, int turns, VipsImage **out) {
    if (thumbnail_upright(buf, len, box, out) != 0) return -1;
    turns = ((turns % 4) + 4) % 4;
    if (turns == 0) return 0;
    VipsImage *turned = NULL;
    VipsAngle angle = turns == 1 ? VIPS_ANGLE_D90 : turns == 2 ? VIPS_ANGLE_D180 : VIPS_ANGLE_D270;
    int status = vips_rot(*out, &turned, angle, NULL);
    g_object_unref(*out);
    *out = status == 0 ? turned : NULL;
    return status;
}

static int thumbnails_of(VipsImage *lazy, int grid_px, int quality,
                         void **preview, size_t *preview_len, int *preview_w, int *preview_h,
                         void **grid, size_t *grid_len, int *grid_w, int *grid_h,
                         int *webp, char *err, size_t errlen);

int nu11_image_thumbnails(const void *buf, size_t len, int turns, int preview_px, int grid_px, int quality,
                          void **preview, size_t *preview_len, int *preview_w, int *preview_h,
                          void **grid, size_t *grid_len, int *grid_w, int *grid_h,
                          int *webp, char *err, size_t errlen) {
    *preview = NULL; *grid = NULL; *preview_len = 0; *grid_len = 0;
    if (nu11_image_init(err, errlen) != 0) return -1;
    if (!loader_allowed(buf, len)) {
        vips_error_clear();
        g_strlcpy(err, "not an image format nu11vlt reads", errlen);
        return -1;
    }
    VipsImage *lazy = NULL;
    /* Shrink-on-load (JPEG by 2/4/8, HEIF thumbnails, WebP), auto-rotate by EXIF
     * orientation, never enlarge; a truncated file is an error, not a grey band. */
    if (thumbnail_buffer(buf, len, preview_px, turns, &lazy) != 0) {
        copy_error(err, errlen, "the image cannot be decoded");
        return -1;
    }
    return thumbnails_of(lazy, grid_px, quality, preview, preview_len, preview_w, preview_h,
                         grid, grid_len, grid_w, grid_h, webp, err, errlen);
}

/* The two thumbnails of an image already sized for the preview (consumed: unreferenced). */
static int thumbnails_of(VipsImage *lazy, int grid_px, int quality,
                         void **preview, size_t *preview_len, int *preview_w, int *preview_h,
                         void **grid, size_t *grid_len, int *grid_w, int *grid_h,
                         int *webp, char *err, size_t errlen) {
    VipsImage *big = NULL, *small = NULL;
    int status = -1;
    /* Decoded once, in memory (the preview is small); the grid tile comes from it. */
    big = vips_image_copy_memory(lazy);
    if (big == NULL) { copy_error(err, errlen, "the image cannot be decoded"); goto done; }
    if (vips_thumbnail_image(big, &small, grid_px, "height", grid_px, "size", VIPS_SIZE_DOWN,
                             "no_rotate", TRUE, NULL) != 0) {
        copy_error(err, errlen, "the grid tile cannot be made");
        goto done;
    }
    *webp = vips_image_hasalpha(big) ? 1 : 0;
    if (save(big, *webp, quality, preview, preview_len) != 0 || save(small, *webp, quality, grid, grid_len) != 0) {
        copy_error(err, errlen, "the thumbnail cannot be encoded");
        goto done;
    }
    *preview_w = vips_image_get_width(big);
    *preview_h = vips_image_get_height(big);
    *grid_w = vips_image_get_width(small);
    *grid_h = vips_image_get_height(small);
    status = 0;
done:
    if (status != 0) {
        nu11_image_free(*preview, *preview_len);
        nu11_image_free(*grid, *grid_len);
        *preview = NULL; *grid = NULL; *preview_len = 0; *grid_len = 0;
    }
    if (small != NULL) g_object_unref(small);
    if (big != NULL) g_object_unref(big);
    if (lazy != NULL) g_object_unref(lazy);
    return status;
}

int nu11_image_thumbnails_rgb(const void *rgb, int width, int height, int rotate, int preview_px, int grid_px,
                              int quality, void **preview, size_t *preview_len, int *preview_w, int *preview_h,
                              void **grid, size_t *grid_len, int *grid_w, int *grid_h,
                              char *err, size_t errlen) {
    *preview = NULL; *grid = NULL; *preview_len = 0; *grid_len = 0;
    if (nu11_image_init(err, errlen) != 0) return -1;
    if (rgb == NULL || width <= 0 || height <= 0 || width > 16384 || height > 16384) {
        g_strlcpy(err, "the frame has impossible dimensions", errlen);
        return -1;
    }
    VipsImage *frame = vips_image_new_from_memory(rgb, (size_t)width * (size_t)height * 3, width, height, 3, VIPS_FORMAT_UCHAR);
    if (frame == NULL) { copy_error(err, errlen, "the frame cannot be read"); return -1; }
    VipsImage *typed = NULL, *turned = NULL, *lazy = NULL;
    int status = -1;
    if (vips_copy(frame, &typed, "interpretation", VIPS_INTERPRETATION_sRGB, NULL) != 0) {
        copy_error(err, errlen, "the frame cannot be read");
        goto done;
    }
    VipsAngle angle = rotate == 90 ? VIPS_ANGLE_D90 : rotate == 180 ? VIPS_ANGLE_D180 : rotate == 270 ? VIPS_ANGLE_D270 : VIPS_ANGLE_D0;
    if (vips_rot(typed, &turned, angle, NULL) != 0) { copy_error(err, errlen, "the frame cannot be turned"); goto done; }
    if (vips_thumbnail_image(turned, &lazy, preview_px, "height", preview_px, "size", VIPS_SIZE_DOWN, NULL) != 0) {
        copy_error(err, errlen, "the frame cannot be scaled");
        goto done;
    }
    int webp = 0;
    status = thumbnails_of(lazy, grid_px, quality, preview, preview_len, preview_w, preview_h,
                           grid, grid_len, grid_w, grid_h, &webp, err, errlen);
done:
    if (turned != NULL) g_object_unref(turned);
    if (typed != NULL) g_object_unref(typed);
    g_object_unref(frame);
    return status;
}

int nu11_image_png(const void *buf, size_t len, int max_side, int turns, void **png, size_t *png_len, char *err, size_t errlen) {
    *png = NULL;
    *png_len = 0;
    if (nu11_image_init(err, errlen) != 0) return -1;
    if (!loader_allowed(buf, len)) {
        vips_error_clear();
        g_strlcpy(err, "not an image format nu11vlt reads", errlen);
        return -1;
    }
    VipsImage *image = NULL;
    int status = -1;
    if (thumbnail_buffer(buf, len, max_side, turns, &image) != 0) {
        copy_error(err, errlen, "the image cannot be decoded");
        return -1;
    }
    if (vips_pngsave_buffer(image, png, png_len, "compression", 1, "strip", TRUE, NULL) != 0) {
        copy_error(err, errlen, "the image cannot be encoded");
    } else {
        status = 0;
    }
    g_object_unref(image);
    return status;
}

int nu11_image_pixels(const void *buf, size_t len, int max_side, int turns, void **pixels, size_t *pixels_len,
                      int *width, int *height, int *bands, char *err, size_t errlen) {
    *pixels = NULL;
    *pixels_len = 0;
    if (nu11_image_init(err, errlen) != 0) return -1;
    if (!loader_allowed(buf, len)) {
        vips_error_clear();
        g_strlcpy(err, "not an image format nu11vlt reads", errlen);
        return -1;
    }
    VipsImage *image = NULL, *srgb = NULL, *bytes = NULL, *four = NULL;
    int status = -1;
    if (thumbnail_buffer(buf, len, max_side, turns, &image) != 0) {
        copy_error(err, errlen, "the image cannot be decoded");
        return -1;
    }
    /* 8-bit sRGB, 3 bands (4 with alpha): what a GdkMemoryTexture takes without parsing. */
    if (vips_colourspace(image, &srgb, VIPS_INTERPRETATION_sRGB, NULL) != 0 || vips_cast_uchar(srgb, &bytes, NULL) != 0) {
        copy_error(err, errlen, "the image cannot be converted to sRGB");
        goto done;
    }
    VipsImage *final = bytes;
    if (vips_image_get_bands(bytes) > 4) {
        if (vips_extract_band(bytes, &four, 0, "n", 4, NULL) != 0) { copy_error(err, errlen, "too many bands"); goto done; }
        final = four;
    }
    int b = vips_image_get_bands(final);
    if (b != 3 && b != 4) { g_strlcpy(err, "the image has an unusual number of channels", errlen); goto done; }
    size_t size = 0;
    void *memory = vips_image_write_to_memory(final, &size);
    if (memory == NULL) { copy_error(err, errlen, "the image cannot be decoded"); goto done; }
    *pixels = memory;
    *pixels_len = size;
    *width = vips_image_get_width(final);
    *height = vips_image_get_height(final);
    *bands = b;
    status = 0;
done:
    if (four != NULL) g_object_unref(four);
    if (bytes != NULL) g_object_unref(bytes);
    if (srgb != NULL) g_object_unref(srgb);
    g_object_unref(image);
    return status;
}

void nu11_image_free(void *p, size_t len) {
    if (p == NULL) return;
    volatile unsigned char *v = p;
    for (size_t i = 0; i < len; i++) v[i] = 0;
    g_free(p);
}
