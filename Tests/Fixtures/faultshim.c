// SPDX-License-Identifier: GPL-3.0-or-later
// A small LD_PRELOAD shim for fault injection and deterministic crash points.
//
// It counts the file-system calls that change something (opens for writing, write, fsync,
// rename, unlink, mkdir, rmdir, truncate, chmod, link …) on paths under $NU11_FAULT_PREFIX
// (for calls on a descriptor: the path the descriptor refers to), and makes the Nth one
// ($NU11_FAULT_AT, from 1) fail with $NU11_FAULT_ERRNO (default EIO) — or, with
// NU11_FAULT_MODE=kill, kills the process with SIGKILL just before it. At exit, the number
// of counted calls is written to $NU11_FAULT_COUNT (when set), so a test can try every N;
// $NU11_FAULT_LOG (when set) gets one line per counted call, "N op path".
//
// A failing disk, then a crash: with NU11_FAULT_WAL_SYNC=K, the K-th fsync/fdatasync of a
// file whose name ends in -wal (an SQLite commit) fails instead, and its call number is written
// to $NU11_FAULT_FAILED_AT (when set); $NU11_FAULT_KILL_AT (M) kills the process at call M.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long counter = 0;
static long fail_at = -1;
static int fail_errno = EIO;
static int kill_mode = 0;
static const char *prefix = NULL;
static size_t prefix_len = 0;
static const char *count_file = NULL;
static long fail_wal_sync = 0;
static long wal_syncs = 0;
static long kill_at = -1;
static const char *failed_at_file = NULL;
static int ready = 0;

static void setup(void) {
    if (ready) return;
    ready = 1;
    const char *at = getenv("NU11_FAULT_AT");
    if (at) fail_at = atol(at);
    const char *e = getenv("NU11_FAULT_ERRNO");
    if (e) fail_errno = atoi(e);
    const char *m = getenv("NU11_FAULT_MODE");
    kill_mode = m && strcmp(m, "kill") == 0;
    prefix = getenv("NU11_FAULT_PREFIX");
    prefix_len = prefix ? strlen(prefix) : 0;
    count_file = getenv("NU11_FAULT_COUNT");
    const char *w = getenv("NU11_FAULT_WAL_SYNC");
    if (w) fail_wal_sync = atol(w);
    const char *k = getenv("NU11_FAULT_KILL_AT");
    if (k) kill_at = atol(k);
    failed_at_file = getenv("NU11_FAULT_FAILED_AT");
}

static void write_number(const char *file, long n) {
    static int (*real_open)(const char *, int, ...) = NULL;
    if (!real_open) real_open = dlsym(RTLD_NEXT, "open");
    int fd = real_open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return;
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%ld\n", n);
    ssize_t (*real_write)(int, const void *, size_t) = dlsym(RTLD_NEXT, "write");
    (void)real_write(fd, buf, (size_t)len);
    close(fd);
}

__attribute__((destructor)) static void report(void) {
    if (!count_file) return;
    static int (*real_open)(const char *, int, ...) = NULL;
    if (!real_open) real_open = dlsym(RTLD_NEXT, "open");
    int fd = real_open(count_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%ld\n", __atomic_load_n(&counter, __ATOMIC_SEQ_CST));
    ssize_t (*real_write)(int, const void *, size_t) = dlsym(RTLD_NEXT, "write");
    (void)real_write(fd, buf, (size_t)n);
    close(fd);
}

static int path_in_scope(const char *path) {
    setup();
    if (!prefix || !path) return prefix == NULL;
    if (path[0] != '/') {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd)) return 0;
        return strncmp(cwd, prefix, prefix_len) == 0;
    }
    return strncmp(path, prefix, prefix_len) == 0;
}

static int fd_in_scope(int fd) {
    setup();
    if (!prefix) return 1;
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = 0;
    return strncmp(target, prefix, prefix_len) == 0;
}

// With $NU11_FAULT_LOG set, every counted call is appended to that file as "N op path" (for a
// call on a descriptor, the path it refers to): a test reads the dry run's log to pick the
// calls worth failing (the folder fsync after a rename into the key store, say) instead of
// failing all of them.
static const char *log_file = NULL;
static int log_ready = 0;

static void log_call(long n, const char *op, const char *path, int fd) {
    if (!log_ready) { log_ready = 1; log_file = getenv("NU11_FAULT_LOG"); }
    if (!log_file) return;
    char target[4096];
    if (!path) {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(link, target, sizeof target - 1);
        target[len > 0 ? len : 0] = 0;
        path = target;
    }
    static int (*real_open)(const char *, int, ...) = NULL;
    if (!real_open) real_open = dlsym(RTLD_NEXT, "open");
    static ssize_t (*real_write)(int, const void *, size_t) = NULL;
    if (!real_write) real_write = dlsym(RTLD_NEXT, "write");
    int out = real_open(log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (out < 0) return;
    char line[4200];
    int len = snprintf(line, sizeof line, "%ld %s %s\n", n, op, path);
    if (len > (int)sizeof line - 1) len = (int)sizeof line - 1;
    (void)real_write(out, line, (size_t)len);
    close(out);
}

// 1 when this call must fail (errno set).
// Atomic: a folder import commits one group on another thread while it writes the next.
static int fault_call(int in_scope, const char *op, const char *path, int fd) {
    if (!in_scope) return 0;
    long n = __atomic_add_fetch(&counter, 1, __ATOMIC_SEQ_CST);
    log_call(n, op, path, fd);
    if (n == kill_at) raise(SIGKILL);
    if (n == fail_at) {
        if (kill_mode) raise(SIGKILL);
        errno = fail_errno;
        return 1;
    }
    return 0;
}

static int fault_path(const char *op, const char *path) { return fault_call(path_in_scope(path), op, path, -1); }
static int fault_fd(const char *op, int fd) { return fault_call(fd_in_scope(fd), op, NULL, fd); }

// fsync and fdatasync: also the -wal sync that NU11_FAULT_WAL_SYNC fails once.
static int fault_sync(const char *op, int fd) {
    if (!fd_in_scope(fd)) return 0;
    if (fail_wal_sync > 0) {
        char link[64], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len > 4 && memcmp(target + len - 4, "-wal", 4) == 0
            && __atomic_add_fetch(&wal_syncs, 1, __ATOMIC_SEQ_CST) == fail_wal_sync) {
            long n = __atomic_add_fetch(&counter, 1, __ATOMIC_SEQ_CST);
            if (failed_at_file) write_number(failed_at_file, n);
            errno = EIO;
            return 1;
        }
    }
    return fault_call(1, op, NULL, fd);
}

#define REAL(name) static __typeof__(name) *real_##name = NULL; if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name)

static int writes(int flags) { return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0; }

int open(const char *path, int flags, ...) {
    REAL(open);
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
    if (writes(flags) && fault_path("open", path)) return -1;
    return real_open(path, flags, mode);
}
int open64(const char *path, int flags, ...) {
    REAL(open64);
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
    if (writes(flags) && fault_path("open", path)) return -1;
    return real_open64(path, flags, mode);
}
int openat(int dirfd, const char *path, int flags, ...) {
    REAL(openat);
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
    if (writes(flags) && fault_path("open", path)) return -1;
    return real_openat(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char *path, int flags, ...) {
    REAL(openat64);
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
    if (writes(flags) && fault_path("open", path)) return -1;
    return real_openat64(dirfd, path, flags, mode);
}
ssize_t write(int fd, const void *buf, size_t n) {
    REAL(write);
    if (fault_fd("write", fd)) return -1;
    return real_write(fd, buf, n);
}
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    REAL(pwrite);
    if (fault_fd("pwrite", fd)) return -1;
    return real_pwrite(fd, buf, n, off);
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
    REAL(pwrite64);
    if (fault_fd("pwrite64", fd)) return -1;
    return real_pwrite64(fd, buf, n, off);
}
ssize_t writev(int fd, const struct iovec *iov, int cnt) {
    REAL(writev);
    if (fault_fd("writev", fd)) return -1;
    return real_writev(fd, iov, cnt);
}
int fsync(int fd) { REAL(fsync); if (fault_sync("fsync", fd)) return -1; return real_fsync(fd); }
int fdatasync(int fd) { REAL(fdatasync); if (fault_sync("fdatasync", fd)) return -1; return real_fdatasync(fd); }
int syncfs(int fd) { REAL(syncfs); if (fault_fd("syncfs", fd)) return -1; return real_syncfs(fd); }
int ftruncate(int fd, off_t len) { REAL(ftruncate); if (fault_fd("ftruncate", fd)) return -1; return real_ftruncate(fd, len); }
int ftruncate64(int fd, off64_t len) { REAL(ftruncate64); if (fault_fd("ftruncate64", fd)) return -1; return real_ftruncate64(fd, len); }
int fchmod(int fd, mode_t mode) { REAL(fchmod); if (fault_fd("fchmod", fd)) return -1; return real_fchmod(fd, mode); }
int chmod(const char *p, mode_t mode) { REAL(chmod); if (fault_path("chmod", p)) return -1; return real_chmod(p, mode); }
int rename(const char *a, const char *b) { REAL(rename); if (fault_path("rename", b)) return -1; return real_rename(a, b); }
int renameat(int da, const char *a, int db, const char *b) {
    REAL(renameat); if (fault_path("renameat", b)) return -1; return real_renameat(da, a, db, b);
}
int renameat2(int da, const char *a, int db, const char *b, unsigned int flags) {
    REAL(renameat2); if (fault_path("renameat2", b)) return -1; return real_renameat2(da, a, db, b, flags);
}
int unlink(const char *p) { REAL(unlink); if (fault_path("unlink", p)) return -1; return real_unlink(p); }
int unlinkat(int d, const char *p, int f) { REAL(unlinkat); if (fault_path("unlinkat", p)) return -1; return real_unlinkat(d, p, f); }
int mkdir(const char *p, mode_t m) { REAL(mkdir); if (fault_path("mkdir", p)) return -1; return real_mkdir(p, m); }
int rmdir(const char *p) { REAL(rmdir); if (fault_path("rmdir", p)) return -1; return real_rmdir(p); }
int link(const char *a, const char *b) { REAL(link); if (fault_path("link", b)) return -1; return real_link(a, b); }
int linkat(int da, const char *a, int db, const char *b, int f) {
    REAL(linkat); if (fault_path("linkat", b)) return -1; return real_linkat(da, a, db, b, f);
}
