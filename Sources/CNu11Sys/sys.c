#define _GNU_SOURCE
#include "cnu11sys.h"
#include <sys/resource.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

int nu11_process_hygiene(void) {
    int rc = 0;
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) rc = -1;
#if defined(__linux__)
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) rc = -1;
#endif
    return rc;
}

int nu11_is_dumpable(void) {
#if defined(__linux__)
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
#else
    return -1;
#endif
}

#if defined(__linux__)
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>
#endif

int nu11_set_nodump(const char *path, int on) {
#if defined(__linux__)
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    int flags = 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) {
        int unsupported = (errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL);
        close(fd);
        return unsupported ? 1 : -1;
    }
    int wanted = on ? (flags | FS_NODUMP_FL) : (flags & ~FS_NODUMP_FL);
    int rc = 0;
    if (wanted != flags && ioctl(fd, FS_IOC_SETFLAGS, &wanted) != 0) {
        rc = (errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL) ? 1 : -1;
    }
    close(fd);
    return rc;
#else
    (void)path; (void)on;
    return 1;
#endif
}

int nu11_has_nodump(const char *path) {
#if defined(__linux__)
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    int flags = 0;
    int rc = ioctl(fd, FS_IOC_GETFLAGS, &flags);
    close(fd);
    if (rc != 0) return -1;
    return (flags & FS_NODUMP_FL) ? 1 : 0;
#else
    (void)path;
    return -1;
#endif
}

int nu11_syncfs(const char *path) {
#if defined(__linux__)
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = syncfs(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
#else
    (void)path;
    sync();
    return 0;
#endif
}
