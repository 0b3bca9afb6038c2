/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Playback, in the image helper only, under the same lock-down as the poster (sandbox.c): the
 * whole video is in memory (sent over the pipe by nu11vlt-app, never a file), FFmpeg reads it
 * through the same I/O callbacks and allow-listed demuxers, the video decoders of the poster
 * and a few audio decoders decode on this thread only, and what leaves is raw: RGBA frames
 * scaled here to at most max_side on the long side and turned upright, and interleaved S16
 * PCM of at most two channels. The sink (the helper's writer) frames them on stdout.
 *
 * Bounds kept here (and checked again by the app, which trusts nothing from this process):
 * a frame's presentation time never goes back, and a frame comes no sooner after the last one
 * than its pixels allow under NU11_PLAY_PIXEL_RATE (frames over it are dropped); audio
 * comes as 8000…192000 Hz, 1 or 2 channels. */
#define _GNU_SOURCE
#include "nu11image.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/log.h>
#include <libswscale/swscale.h>
#include <stdlib.h>
#include <string.h>

static const char *const video_decoders[] = { "h264", "hevc", "vp8", "vp9", "libdav1d", "av1", "mpeg4", NULL };
static const char *const audio_decoders[] = { "aac", "mp3float", "mp3", "opus", "libopus", "vorbis", "flac", "alac", NULL };

static void say(char *err, size_t errlen, const char *text) {
    if (err != NULL && errlen > 0) {
        strncpy(err, text, errlen - 1);
        err[errlen - 1] = '\0';
    }
}

static int named(const AVCodec *codec, const char *const *names) {
    if (codec == NULL) return 0;
    for (int i = 0; names[i] != NULL; i++) if (strcmp(codec->name, names[i]) == 0) return 1;
    return 0;
}

typedef struct { const unsigned char *data; size_t len, pos; } source;

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

static int rotation_of(const AVStream *stream) {
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (matrix == NULL) return 0;
    double theta = -av_display_rotation_get((const int32_t *)matrix);
    if (theta != theta) return 0;
    int degrees = (int)(theta >= 0 ? theta + 0.5 : theta - 0.5) % 360;
    if (degrees < 0) degrees += 360;
    return degrees >= 45 && degrees < 135 ? 90 : degrees >= 135 && degrees < 225 ? 180 : degrees >= 225 && degrees < 315 ? 270 : 0;
}

typedef struct {
    nu11_play_sink sink;
    void *ctx;
    int max_side, rotate;
    int64_t origin_us;              /* the container's start time: playback starts at 0 */
    int64_t last_frame_us;          /* -1 before the first frame */
    struct SwsContext *scale;
    unsigned char *scaled, *turned;  /* RGBA buffers of the current size */
    size_t buffer_size;
    int16_t *pcm;
    size_t pcm_cap;
} player;

static int64_t micros(int64_t ts, AVRational base, int64_t origin) {
    if (ts == AV_NOPTS_VALUE) return -1;
    int64_t us = av_rescale_q(ts, base, (AVRational){ 1, 1000000 }) - origin;
    return us < 0 ? 0 : us;
}

/* Scales to fit max_side, converts to RGBA, turns upright, and hands it on. 0, 1 (stop), -1. */
static int emit_frame(player *p, const AVFrame *f, AVRational base) {
    if (f->width <= 0 || f->height <= 0 || f->width > 16384 || f->height > 16384) return -1;
    int64_t pts = micros(f->best_effort_timestamp, base, p->origin_us);
    if (pts < 0) pts = p->last_frame_us < 0 ? 0 : p->last_frame_us + 40000;
    int long_side = f->width > f->height ? f->width : f->height;
    int w = f->width, h = f->height;
    if (long_side > p->max_side) {
        w = (int)((int64_t)f->width * p->max_side / long_side);
        h = (int)((int64_t)f->height * p->max_side / long_side);
        if (w < 1) w = 1;
        if (h < 1) h = 1;
    }
    /* The pixel budget: a frame too soon after the last one (or going back) is dropped. */
    if (p->last_frame_us >= 0 && pts < p->last_frame_us + (int64_t)w * h * 1000000 / NU11_PLAY_PIXEL_RATE) return 0;
    size_t size = (size_t)w * h * 4;
    if (size != p->buffer_size) {
        free(p->scaled);
        free(p->turned);
        p->scaled = malloc(size + 64);
        p->turned = malloc(size);
        p->buffer_size = size;
        if (p->scaled == NULL || p->turned == NULL) { p->buffer_size = 0; return -1; }
    }
    p->scale = sws_getCachedContext(p->scale, f->width, f->height, f->format, w, h, AV_PIX_FMT_RGBA, SWS_BILINEAR, NULL, NULL, NULL);
    if (p->scale == NULL) return -1;
    uint8_t *planes[4] = { p->scaled, NULL, NULL, NULL };
    int strides[4] = { w * 4, 0, 0, 0 };
    if (sws_scale(p->scale, (const uint8_t *const *)f->data, f->linesize, 0, f->height, planes, strides) != h) return -1;
    const uint32_t *in = (const uint32_t *)p->scaled;
    uint32_t *out = (uint32_t *)p->turned;
    int ow = p->rotate == 90 || p->rotate == 270 ? h : w, oh = ow == w ? h : w;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            int tx = x, ty = y;
            if (p->rotate == 90) { tx = h - 1 - y; ty = x; }
            else if (p->rotate == 180) { tx = w - 1 - x; ty = h - 1 - y; }
            else if (p->rotate == 270) { tx = y; ty = w - 1 - x; }
            out[(size_t)ty * ow + tx] = in[(size_t)y * w + x];
        }
    }
    p->last_frame_us = pts;
    return p->sink(p->ctx, NU11_PLAY_FRAME, pts, ow, oh, p->turned, size) == 0 ? 0 : 1;
}

static float sample_at(const AVFrame *f, int format, int planar, int channels, int c, int i) {
    const uint8_t *plane = planar ? f->extended_data[c] : f->extended_data[0];
    size_t at = planar ? (size_t)i : (size_t)i * channels + c;
    switch (format) {
    case AV_SAMPLE_FMT_U8: return (plane[at] - 128) / 128.0f;
    case AV_SAMPLE_FMT_S16: return ((const int16_t *)plane)[at] / 32768.0f;
    case AV_SAMPLE_FMT_S32: return ((const int32_t *)plane)[at] / 2147483648.0f;
    case AV_SAMPLE_FMT_FLT: return ((const float *)plane)[at];
    case AV_SAMPLE_FMT_DBL: return (float)((const double *)plane)[at];
    default: return 0;
    }
}

/* The first two channels as interleaved S16. 0, 1 (stop), -1. */
static int emit_audio(player *p, const AVFrame *f, AVRational base) {
    int channels = f->ch_layout.nb_channels, rate = f->sample_rate, n = f->nb_samples;
    if (channels < 1 || channels > 64 || rate < 8000 || rate > 192000 || n <= 0 || n > rate) return 0;
    int planar = av_sample_fmt_is_planar(f->format);
    int format = av_get_packed_sample_fmt(f->format);
    if (format != AV_SAMPLE_FMT_U8 && format != AV_SAMPLE_FMT_S16 && format != AV_SAMPLE_FMT_S32 &&
        format != AV_SAMPLE_FMT_FLT && format != AV_SAMPLE_FMT_DBL) return 0;
    int out = channels > 2 ? 2 : channels;
    size_t need = (size_t)n * out;
    if (need > p->pcm_cap) {
        int16_t *grown = realloc(p->pcm, need * sizeof *grown);
        if (grown == NULL) return -1;
        p->pcm = grown;
        p->pcm_cap = need;
    }
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < out; c++) {
            float v = sample_at(f, format, planar, channels, c, i) * 32767.0f;
            p->pcm[(size_t)i * out + c] = (int16_t)(v > 32767.0f ? 32767 : v < -32768.0f ? -32768 : v);
        }
    }
    int64_t pts = micros(f->best_effort_timestamp, base, p->origin_us);
    return p->sink(p->ctx, NU11_PLAY_AUDIO, pts < 0 ? 0 : pts, rate, out, p->pcm, need * sizeof(int16_t)) == 0 ? 0 : 1;
}

/* Sends a packet (NULL: flush) and emits every frame that comes out. 0, 1 (stop), -1. */
static int drain(player *p, AVCodecContext *codec, const AVPacket *packet, AVFrame *frame, AVRational base, int audio) {
    if (avcodec_send_packet(codec, packet) < 0 && packet != NULL) return 0;   /* a damaged packet: the next */
    for (;;) {
        int got = avcodec_receive_frame(codec, frame);
        if (got != 0) return 0;
        int rc = audio ? emit_audio(p, frame, base) : emit_frame(p, frame, base);
        av_frame_unref(frame);
        if (rc != 0) return rc;
    }
}

static AVCodecContext *open_decoder(AVStream *stream, const AVCodec *decoder) {
    AVCodecContext *codec = avcodec_alloc_context3(decoder);
    if (codec == NULL) return NULL;
    codec->thread_count = 1;
    if (avcodec_parameters_to_context(codec, stream->codecpar) < 0 || avcodec_open2(codec, decoder, NULL) < 0) {
        avcodec_free_context(&codec);
        return NULL;
    }
    return codec;
}

int nu11_video_play(const void *buf, size_t len, int max_side, int with_audio, nu11_play_sink sink, void *ctx,
                    char *err, size_t errlen) {
    av_log_set_level(AV_LOG_QUIET);
    if (buf == NULL || !nu11_video_signature(buf, len)) { say(err, errlen, "not a video format nu11vlt reads"); return -1; }
    if (max_side < 16 || max_side > NU11_PLAY_MAX_SIDE) { say(err, errlen, "the requested picture size is out of range"); return -1; }
    int status = -1;
    source src = { buf, len, 0 };
    player p = { .sink = sink, .ctx = ctx, .max_side = max_side, .last_frame_us = -1 };
    AVFormatContext *format = NULL;
    AVCodecContext *video = NULL, *audio = NULL;
    AVPacket *packet = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    AVDictionary *options = NULL;
    unsigned char *io_buffer = av_malloc(65536);
    AVIOContext *io = io_buffer != NULL ? avio_alloc_context(io_buffer, 65536, 0, &src, source_read, NULL, source_seek) : NULL;
    if (io == NULL) av_free(io_buffer);
    if (io == NULL || packet == NULL || frame == NULL || (format = avformat_alloc_context()) == NULL) {
        say(err, errlen, "out of memory");
        goto done;
    }
    format->pb = io;
    format->flags |= AVFMT_FLAG_CUSTOM_IO;
    av_dict_set(&options, "format_whitelist", "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm", 0);
    av_dict_set(&options, "protocol_whitelist", "", 0);
    av_dict_set(&options, "codec_whitelist", "h264,hevc,vp8,vp9,libdav1d,av1,mpeg4,aac,mp3float,mp3,opus,libopus,vorbis,flac,alac", 0);
    if (avformat_open_input(&format, NULL, NULL, &options) < 0) {
        format = NULL;
        say(err, errlen, "not a video container nu11vlt reads (MP4, QuickTime, Matroska, WebM)");
        goto done;
    }
    const AVCodec *vdec = NULL, *adec = NULL;
    int vi = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &vdec, 0);
    if (vi < 0) { say(err, errlen, "the file has no video stream"); goto done; }
    if (!named(vdec, video_decoders)) { say(err, errlen, "the video's codec is not one nu11vlt decodes (H.264, HEVC, VP8, VP9, AV1, MPEG-4)"); goto done; }
    AVStream *vs = format->streams[vi];
    if (vs->codecpar->width <= 0 || vs->codecpar->height <= 0 || (int64_t)vs->codecpar->width * vs->codecpar->height > NU11_PLAY_MAX_SOURCE_PIXELS) {
        say(err, errlen, "the video's picture size is impossible or over the limit");
        goto done;
    }
    video = open_decoder(vs, vdec);
    if (video == NULL) { say(err, errlen, "the video decoder does not start on this stream"); goto done; }
    p.rotate = rotation_of(vs);
    p.origin_us = format->start_time != AV_NOPTS_VALUE && format->start_time > 0 ? format->start_time : 0;
    int ai = with_audio ? av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, vi, &adec, 0) : -1;
    if (ai >= 0 && named(adec, audio_decoders)) audio = open_decoder(format->streams[ai], adec);
    if (audio == NULL) ai = -1;   /* no sound, or sound nu11vlt does not decode: the picture alone */
    int rc = 0;
    while (rc == 0 && av_read_frame(format, packet) >= 0) {
        if (packet->stream_index == vi) rc = drain(&p, video, packet, frame, vs->time_base, 0);
        else if (packet->stream_index == ai) rc = drain(&p, audio, packet, frame, format->streams[ai]->time_base, 1);
        av_packet_unref(packet);
    }
    if (rc == 0) rc = drain(&p, video, NULL, frame, vs->time_base, 0);
    if (rc == 0 && audio != NULL) rc = drain(&p, audio, NULL, frame, format->streams[ai]->time_base, 1);
    if (rc < 0) { say(err, errlen, "the video's pictures cannot be converted"); goto done; }
    if (p.last_frame_us < 0 && rc == 0) { say(err, errlen, "the video has no picture that decodes"); goto done; }
    status = 0;
done:
    av_dict_free(&options);
    sws_freeContext(p.scale);
    free(p.scaled);
    free(p.turned);
    free(p.pcm);
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&video);
    avcodec_free_context(&audio);
    avformat_close_input(&format);
    if (io != NULL) {
        av_freep(&io->buffer);
        avio_context_free(&io);
    }
    return status;
}
