// SPDX-License-Identifier: GPL-3.0-or-later
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

#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

extern char **environ;

#define NU11_SLOTS 64
static char nu11_paths[NU11_SLOTS][4096];
static volatile sig_atomic_t nu11_used[NU11_SLOTS];
static char nu11_message[256];
static volatile sig_atomic_t nu11_child = 0;

static void nu11_on_signal(int sig) {
    pid_t child = (pid_t)nu11_child;
    if (child > 0) {
        /* The child runs in a session of its own (no controlling terminal), so the terminal's
         * Ctrl-C reaches only us: pass it on to the child's group, which decides what it means. */
        kill(-child, sig);
        if (sig == SIGINT) return;
    }
    for (int i = 0; i < NU11_SLOTS; i++) {
        if (nu11_used[i]) {
            int fd = open(nu11_paths[i], O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0) { (void)ftruncate(fd, 0); close(fd); }
            unlink(nu11_paths[i]);
        }
    }
    size_t n = strlen(nu11_message);
    if (n > 0) { ssize_t w = write(2, nu11_message, n); (void)w; }
    signal(sig, SIG_DFL);
    raise(sig);
}

void nu11_cleanup_install(const char *message) {
    strncpy(nu11_message, message, sizeof nu11_message - 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = nu11_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* A parent may have started us with these blocked (the mask is inherited). */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/* Slots are claimed with a compare-and-swap, so two threads that each start a temp file at
 * once (the app imports on a worker thread while its main thread goes on) never share one;
 * the signal handler reads only `nu11_used`, set once the path is in place. */
static int nu11_claimed[NU11_SLOTS];

int nu11_cleanup_register(const char *path) {
    if (strlen(path) >= sizeof nu11_paths[0]) return -1;
    for (int i = 0; i < NU11_SLOTS; i++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&nu11_claimed[i], &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            strcpy(nu11_paths[i], path);
            __atomic_thread_fence(__ATOMIC_RELEASE);
            nu11_used[i] = 1;
            return i;
        }
    }
    return -1;
}

void nu11_cleanup_unregister(int slot) {
    if (slot < 0 || slot >= NU11_SLOTS) return;
    nu11_used[slot] = 0;
    __atomic_store_n(&nu11_claimed[slot], 0, __ATOMIC_RELEASE);
}

/* Every child (image helper, editor, viewer): default signal handling (ours would clean up in
 * the wrong process), a new session with no controlling terminal (so it cannot TIOCSTI a
 * command into the user's shell, nor be stopped by the terminal), and no descriptor but
 * 0, 1 and 2 (not the --pin-fd descriptor, the vault's lock, or an open key-store file). */
static void child_attributes(posix_spawnattr_t *attr, posix_spawn_file_actions_t *actions, int with_pipe, int first_closed) {
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGHUP);
    if (with_pipe) sigaddset(&def, SIGPIPE);
    posix_spawnattr_setsigdefault(attr, &def);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(attr, &none);
    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSID);
    posix_spawn_file_actions_addclosefrom_np(actions, first_closed);
}

/* The user's environment for their editor or viewer, without nu11vlt's own variables (the
 * vault's and key store's paths): the editor and viewer are the user's programs and need
 * DISPLAY, HOME, PATH, TERM and whatever else the user set for them. nu11vlt never puts a
 * secret in its environment. */
static char **child_environment(void) {
    size_t n = 0;
    for (char **e = environ; *e != NULL; e++) n++;
    char **out = calloc(n + 1, sizeof *out);
    if (out == NULL) return NULL;
    size_t k = 0;
    for (char **e = environ; *e != NULL; e++) {
        if (strncmp(*e, "NU11VLT_", 8) != 0) out[k++] = *e;
    }
    out[k] = NULL;
    return out;
}

int nu11_spawn_wait(char *const argv[], int keep_fd, int *status) {
    pid_t pid;
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    /* The one descriptor the child needs besides 0, 1 and 2 (a viewer's memfd) becomes its 3. */
    if (keep_fd >= 0) posix_spawn_file_actions_adddup2(&actions, keep_fd, 3);
    child_attributes(&attr, &actions, 0, keep_fd >= 0 ? 4 : 3);
    char **env = child_environment();
    int rc = env == NULL ? ENOMEM : posix_spawnp(&pid, argv[0], &actions, &attr, argv, env);
    free(env);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) return rc;
    nu11_child = pid;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) { nu11_child = 0; return errno; }
    }
    nu11_child = 0;
    *status = st;
    return 0;
}

int nu11_spawn_piped(const char *path, int *to_child, int *from_child, int *pid_out) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) return errno;
    if (pipe2(out, O_CLOEXEC) != 0) { int e = errno; close(in[0]); close(in[1]); return e; }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    child_attributes(&attr, &actions, 1, 3);
    char *const argv[] = { (char *)path, NULL };
    char *const envp[] = { NULL };  /* nothing of ours: no TMPDIR, no VIPS_* knobs */
    pid_t pid;
    int rc = posix_spawn(&pid, path, &actions, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(in[0]);
    close(out[1]);
    if (rc != 0) { close(in[1]); close(out[0]); return rc; }
    *to_child = in[1];
    *from_child = out[0];
    *pid_out = (int)pid;
    return 0;
}

int nu11_memfd(const char *name) {
#if defined(__linux__)
    return memfd_create(name, 0);
#else
    (void)name;
    errno = ENOSYS;
    return -1;
#endif
}

#if defined(__linux__)
#include <sys/syscall.h>
#endif
int nu11_landlock_abi(void) {
#if defined(__linux__) && defined(SYS_landlock_create_ruleset)
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1u /* LANDLOCK_CREATE_RULESET_VERSION */);
    return abi > 0 ? (int)abi : 0;
#else
    return 0;
#endif
}

#include <stdio.h>

/// rename(2) that never replaces: fails with EEXIST when `to` exists (renameat2's
/// RENAME_NOREPLACE; where the file system cannot do that, link(2) then unlink(2), which is
/// just as exclusive).
int nu11_rename_noreplace(const char *from, const char *to) {
#if defined(__linux__) && defined(RENAME_NOREPLACE)
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
#endif
    if (link(from, to) != 0) return -1;
    return unlink(from);
}

#include <sys/file.h>

int nu11_open_unnamed(const char *dir) {
#if defined(__linux__) && defined(O_TMPFILE)
    return open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#else
    (void)dir;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int nu11_link_unnamed(int fd, const char *to) {
    char source[64];
    snprintf(source, sizeof source, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, source, AT_FDCWD, to, AT_SYMLINK_FOLLOW);
}

int nu11_try_lock(int fd) { return flock(fd, LOCK_EX | LOCK_NB); }

int nu11_lock(int fd) { return flock(fd, LOCK_EX); }

#include <sys/vfs.h>

int nu11_is_memory_fs(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return 0;
    /* TMPFS_MAGIC, RAMFS_MAGIC (linux/magic.h) */
    return info.f_type == 0x01021994 || info.f_type == (__typeof__(info.f_type))0x858458f6;
}

int nu11_start_writeback(int fd) {
#if defined(__linux__)
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd;
    return 0;
#endif
}
