/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Videos, in the image helper only (it holds no key and is locked down before it reads a
 * byte; see sandbox.c): FFmpeg's libavformat reads the container from memory through our own
 * I/O callbacks (never a file, never a URL or protocol), the demuxers and decoders are
 * allow-listed by name, decoding runs on this thread only, and the first picture is turned
 * into RGB24 for the thumbnails. What comes back to nu11vlt is the poster's JPEG bytes, the
 * duration and the container's creation date as text. */
#define _GNU_SOURCE /* strcasestr */
#include "nu11image.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/log.h>
#include <libswscale/swscale.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Phone and camera videos: MP4/QuickTime (iPhone, Android, GoPro), Matroska/WebM. */
static const char *const allowed_demuxers = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm";
static const char *const allowed_decoders[] = { "h264", "hevc", "vp8", "vp9", "libdav1d", "av1", "mpeg4", NULL };

static void say(char *err, size_t errlen, const char *text) {
    if (err != NULL && errlen > 0) {
        strncpy(err, text, errlen - 1);
        err[errlen - 1] = '\0';
    }
}

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;
static void quiet(void) { av_log_set_level(AV_LOG_QUIET); }

int nu11_video_signature(const void *buf, size_t len) {
    const unsigned char *b = buf;
    if (len >= 4 && b[0] == 0x1A && b[1] == 0x45 && b[2] == 0xDF && b[3] == 0xA3) return 1;   /* EBML */
    if (len >= 12 && memcmp(b + 4, "ftyp", 4) == 0) {
        static const char *const brands[] = { "isom", "iso2", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "qt  ",
                                              "M4V ", "3gp4", "3gp5", "3gp6", "3g2a", "MSNV", "dash", "XAVC", "f4v ", "kddi", NULL };
        for (int i = 0; brands[i] != NULL; i++) if (memcmp(b + 8, brands[i], 4) == 0) return 1;
    }
    return 0;
}

typedef struct {
    const unsigned char *data;
    size_t len;
    size_t pos;
} source;

static int source_read(void *opaque, uint8_t *to, int size) {
    source *s = opaque;
    if (s->pos >= s->len) return AVERROR_EOF;
    size_t n = s->len - s->pos;
    if (n > (size_t)size) n = (size_t)size;
    memcpy(to, s->data + s->pos, n);
    s->pos += n;
    return (int)n;
}

static int64_t source_seek(void *opaque, int64_t offset, int whence) {
    source *s = opaque;
    whence &= ~AVSEEK_FORCE;
    if (whence == AVSEEK_SIZE) return (int64_t)s->len;
    int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)s->pos : whence == SEEK_END ? (int64_t)s->len : -1;
    if (base < 0 || offset > INT64_MAX - base) return -1;
    int64_t to = base + offset;
    if (to < 0 || to > (int64_t)s->len) return -1;
    s->pos = (size_t)to;
    return to;
}

static int decoder_allowed(const AVCodec *codec) {
    if (codec == NULL) return 0;
    for (int i = 0; allowed_decoders[i] != NULL; i++) if (strcmp(codec->name, allowed_decoders[i]) == 0) return 1;
    return 0;
}

/* Clockwise degrees that show the picture upright, from the stream's display matrix. */
static int rotation_of(const AVStream *stream) {
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (matrix == NULL) return 0;
    double theta = -av_display_rotation_get((const int32_t *)matrix);
    if (theta != theta) return 0;   /* NaN: a degenerate matrix */
    int degrees = (int)(theta >= 0 ? theta + 0.5 : theta - 0.5) % 360;
    if (degrees < 0) degrees += 360;
    return degrees >= 45 && degrees < 135 ? 90 : degrees >= 135 && degrees < 225 ? 180 : degrees >= 225 && degrees < 315 ? 270 : 0;
}

/* The first decoded picture of stream `index`, or NULL. Reads at most max_packets packets. */
static AVFrame *first_picture(AVFormatContext *format, AVCodecContext *codec, int index, char *err, size_t errlen) {
    AVPacket *packet = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    if (packet == NULL || frame == NULL) { say(err, errlen, "out of memory"); goto fail; }
    int flushing = 0;
    for (int packets = 0; packets < 2000;) {
        if (!flushing) {
            int rc = av_read_frame(format, packet);
            if (rc < 0) { flushing = 1; avcodec_send_packet(codec, NULL); }
            else {
                packets++;
                if (packet->stream_index == index) {
                    int sent = avcodec_send_packet(codec, packet);
                    av_packet_unref(packet);
                    if (sent < 0 && sent != AVERROR(EAGAIN)) continue;   /* a damaged packet: try the next */
                } else {
                    av_packet_unref(packet);
                    continue;
                }
            }
        }
        int got = avcodec_receive_frame(codec, frame);
        if (got == 0) {
            av_packet_free(&packet);
            return frame;
        }
        if (got == AVERROR_EOF || (flushing && got != AVERROR(EAGAIN))) break;
        if (flushing && got == AVERROR(EAGAIN)) break;
    }
    say(err, errlen, "the video has no picture that decodes");
fail:
    av_packet_free(&packet);
    av_frame_free(&frame);
    return NULL;
}

static int names_location(const AVDictionary *metadata) {
    const AVDictionaryEntry *e = NULL;
    while ((e = av_dict_get(metadata, "", e, AV_DICT_IGNORE_SUFFIX)) != NULL) {
        static const char *const words[] = { "location", "gps", "iso6709", "latitude", "longitude", "coordinates", NULL };
        for (int i = 0; words[i] != NULL; i++) if (strcasestr(e->key, words[i]) != NULL) return 1;
        if (strstr(e->key, "xyz") != NULL) return 1;   /* an untranslated QuickTime \251xyz */
    }
    return 0;
}

int nu11_video_has_location(const void *buf, size_t len, char *err, size_t errlen) {
    pthread_once(&quiet_once, quiet);
    if (buf == NULL || !nu11_video_signature(buf, len)) { say(err, errlen, "not a video format nu11vlt reads"); return -1; }
    source src = { buf, len, 0 };
    AVDictionary *options = NULL;
    unsigned char *io_buffer = av_malloc(65536);
    AVIOContext *io = io_buffer != NULL ? avio_alloc_context(io_buffer, 65536, 0, &src, source_read, NULL, source_seek) : NULL;
    if (io == NULL) { av_free(io_buffer); say(err, errlen, "out of memory"); return -1; }
    AVFormatContext *format = avformat_alloc_context();
    int found = -1;
    if (format == NULL) { say(err, errlen, "out of memory"); goto done; }
    format->pb = io;
    format->flags |= AVFMT_FLAG_CUSTOM_IO;
    av_dict_set(&options, "format_whitelist", allowed_demuxers, 0);
    av_dict_set(&options, "protocol_whitelist", "", 0);
    if (avformat_open_input(&format, NULL, NULL, &options) < 0) {
        format = NULL;
        say(err, errlen, "not a video container nu11vlt reads (MP4, QuickTime, Matroska, WebM)");
        goto done;
    }
    found = names_location(format->metadata);
    for (unsigned i = 0; found == 0 && i < format->nb_streams; i++) found = names_location(format->streams[i]->metadata);
    for (unsigned i = 0; found == 0 && i < format->nb_chapters; i++) found = names_location(format->chapters[i]->metadata);
done:
    av_dict_free(&options);
    avformat_close_input(&format);
    av_freep(&io->buffer);
    avio_context_free(&io);
    return found;
}

int nu11_video_poster(const void *buf, size_t len, int64_t max_pixels, nu11_video_info *info,
                      void **rgb, size_t *rgb_len, char *err, size_t errlen) {
    memset(info, 0, sizeof *info);
    info->duration_ms = -1;
    *rgb = NULL;
    *rgb_len = 0;
    pthread_once(&quiet_once, quiet);
    if (buf == NULL || !nu11_video_signature(buf, len)) { say(err, errlen, "not a video format nu11vlt reads"); return -1; }

    int status = -1;
    source src = { buf, len, 0 };
    AVFormatContext *format = NULL;
    AVCodecContext *codec = NULL;
    AVFrame *frame = NULL;
    struct SwsContext *scale = NULL;
    AVDictionary *options = NULL;
    unsigned char *io_buffer = av_malloc(65536);
    AVIOContext *io = io_buffer != NULL ? avio_alloc_context(io_buffer, 65536, 0, &src, source_read, NULL, source_seek) : NULL;
    if (io == NULL) { av_free(io_buffer); say(err, errlen, "out of memory"); return -1; }
    format = avformat_alloc_context();
    if (format == NULL) { say(err, errlen, "out of memory"); goto done; }
    format->pb = io;
    format->flags |= AVFMT_FLAG_CUSTOM_IO;
    av_dict_set(&options, "format_whitelist", allowed_demuxers, 0);
    av_dict_set(&options, "protocol_whitelist", "", 0);
    av_dict_set(&options, "codec_whitelist", "h264,hevc,vp8,vp9,libdav1d,av1,mpeg4", 0);
    /* avformat_open_input frees the context on failure. */
    if (avformat_open_input(&format, NULL, NULL, &options) < 0) {
        format = NULL;
        say(err, errlen, "not a video container nu11vlt reads (MP4, QuickTime, Matroska, WebM)");
        goto done;
    }
    const char *name = format->iformat != NULL ? format->iformat->name : "";
    if (strstr(name, "mov") != NULL) {
        AVDictionaryEntry *major = av_dict_get(format->metadata, "major_brand", NULL, 0);
        const char *brand = major != NULL ? major->value : "";
        strncpy(info->container, strncmp(brand, "qt", 2) == 0 ? "quicktime" : "mp4", sizeof info->container - 1);
    } else {
        strncpy(info->container, "matroska", sizeof info->container - 1);
    }
    const AVCodec *decoder = NULL;
    int index = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (index < 0) { say(err, errlen, "the file has no video stream"); goto done; }
    if (!decoder_allowed(decoder)) { say(err, errlen, "the video's codec is not one nu11vlt decodes (H.264, HEVC, VP8, VP9, AV1, MPEG-4)"); goto done; }
    AVStream *stream = format->streams[index];
    strncpy(info->codec, decoder->name, sizeof info->codec - 1);
    info->width = stream->codecpar->width;
    info->height = stream->codecpar->height;
    if (info->width <= 0 || info->height <= 0 || (int64_t)info->width * info->height > max_pixels ||
        info->width > 16384 || info->height > 16384) {
        say(err, errlen, "the video's picture size is impossible or over the limit");
        goto done;
    }
    info->rotate = rotation_of(stream);
    if (format->duration != AV_NOPTS_VALUE && format->duration >= 0) info->duration_ms = format->duration / (AV_TIME_BASE / 1000);
    else if (stream->duration != AV_NOPTS_VALUE && stream->duration >= 0)
        info->duration_ms = av_rescale_q(stream->duration, stream->time_base, (AVRational){ 1, 1000 });
    /* Apple's own tag carries the time zone; the container's creation_time is UTC. */
    AVDictionaryEntry *created = av_dict_get(format->metadata, "com.apple.quicktime.creationdate", NULL, 0);
    if (created == NULL) created = av_dict_get(format->metadata, "creation_time", NULL, 0);
    if (created == NULL) created = av_dict_get(stream->metadata, "creation_time", NULL, 0);
    if (created != NULL) strncpy(info->created, created->value, sizeof info->created - 1);
    info->has_location = av_dict_get(format->metadata, "location", NULL, 0) != NULL ||
                         av_dict_get(format->metadata, "com.apple.quicktime.location.ISO6709", NULL, 0) != NULL;

    codec = avcodec_alloc_context3(decoder);
    if (codec == NULL || avcodec_parameters_to_context(codec, stream->codecpar) < 0) { say(err, errlen, "out of memory"); goto done; }
    codec->thread_count = 1;
    if (avcodec_open2(codec, decoder, NULL) < 0) { say(err, errlen, "the video decoder does not start on this stream"); goto done; }
    frame = first_picture(format, codec, index, err, errlen);
    if (frame == NULL) goto done;
    if (frame->width != info->width || frame->height != info->height) {
        if (frame->width <= 0 || frame->height <= 0 || (int64_t)frame->width * frame->height > max_pixels ||
            frame->width > 16384 || frame->height > 16384) {
            say(err, errlen, "the video's picture size is impossible or over the limit");
            goto done;
        }
        info->width = frame->width;
        info->height = frame->height;
    }
    scale = sws_getContext(frame->width, frame->height, frame->format, frame->width, frame->height, AV_PIX_FMT_RGB24,
                           SWS_BILINEAR, NULL, NULL, NULL);
    if (scale == NULL) { say(err, errlen, "the video's pixel format cannot be converted"); goto done; }
    size_t stride = (size_t)frame->width * 3;
    size_t size = stride * (size_t)frame->height;
    /* Freed by nu11_image_free (g_free, which is free since GLib 2.46). Swscale may write a
     * little past the last row. */
    unsigned char *out = malloc(size + 64);
    if (out == NULL) { say(err, errlen, "out of memory"); goto done; }
    uint8_t *planes[4] = { out, NULL, NULL, NULL };
    int strides[4] = { (int)stride, 0, 0, 0 };
    if (sws_scale(scale, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, planes, strides) != frame->height) {
        memset(out, 0, size + 64);
        free(out);
        say(err, errlen, "the video's picture cannot be converted");
        goto done;
    }
    memset(out + size, 0, 64);
    *rgb = out;
    *rgb_len = size;
    status = 0;
done:
    av_dict_free(&options);
    sws_freeContext(scale);
    av_frame_free(&frame);
    avcodec_free_context(&codec);
    avformat_close_input(&format);
    if (io != NULL) {
        av_freep(&io->buffer);
        avio_context_free(&io);
    }
    return status;
}
