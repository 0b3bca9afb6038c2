// SPDX-License-Identifier: GPL-3.0-or-later
// Debug builds only (N11FIDO_TEST_TRANSPORT): libfido2's custom-transport hooks carry CTAP
// messages to the project's software authenticator over an AF_UNIX socket. Each message,
// both ways: command (1 byte) || length (4 bytes, big-endian) || payload. AF_UNIX only; the
// path is the caller's "unix:" device path.
#ifdef N11FIDO_TEST_TRANSPORT
#define _GNU_SOURCE
#include "transport.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

typedef struct { int fd; } handle;

static void *t_open(const char *path) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path) return NULL;
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return NULL;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        close(fd);
        return NULL;
    }
    handle *h = malloc(sizeof *h);
    if (h == NULL) {
        close(fd);
        return NULL;
    }
    h->fd = fd;
    return h;
}

static void t_close(void *h) {
    if (h == NULL) return;
    close(((handle *)h)->fd);
    free(h);
}

// Not used with transport functions, but libfido2 requires them to be set.
static int t_read(void *h, unsigned char *buf, size_t len, int ms) { (void)h; (void)buf; (void)len; (void)ms; return -1; }
static int t_write(void *h, const unsigned char *buf, size_t len) { (void)h; (void)buf; (void)len; return -1; }

static int write_all(int fd, const unsigned char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, unsigned char *p, size_t n, int ms) {
    while (n > 0) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int r = poll(&pfd, 1, ms < 0 ? -1 : ms);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

static int t_tx(fido_dev_t *dev, uint8_t cmd, const unsigned char *buf, size_t count) {
    handle *h = fido_dev_io_handle(dev);
    unsigned char head[5] = {cmd, (unsigned char)(count >> 24), (unsigned char)(count >> 16),
                             (unsigned char)(count >> 8), (unsigned char)count};
    if (h == NULL || write_all(h->fd, head, 5) != 0 || (count > 0 && write_all(h->fd, buf, count) != 0)) return -1;
    return (int)count;
}

static int t_rx(fido_dev_t *dev, uint8_t cmd, unsigned char *buf, size_t count, int ms) {
    handle *h = fido_dev_io_handle(dev);
    unsigned char head[5];
    if (h == NULL || read_all(h->fd, head, 5, ms) != 0 || head[0] != cmd) return -1;
    size_t n = ((size_t)head[1] << 24) | ((size_t)head[2] << 16) | ((size_t)head[3] << 8) | head[4];
    if (n > count || read_all(h->fd, buf, n, ms) != 0) return -1;
    return (int)n;
}

int n11fido_use_unix_transport(fido_dev_t *dev) {
    static const fido_dev_io_t io = {t_open, t_close, t_read, t_write};
    static const fido_dev_transport_t transport = {t_rx, t_tx};
    int rc = fido_dev_set_io_functions(dev, &io);
    if (rc == FIDO_OK) rc = fido_dev_set_transport_functions(dev, &transport);
    return rc;
}
#endif
