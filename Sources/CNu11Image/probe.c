/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * `nu11vlt-image-helper --probe`: what a compromised decoder would try, run inside the real
 * lock-down (the same code path as decoding, after libvips has started). One line per
 * attempt: "<name> refused" when the call failed with EPERM (seccomp) or EACCES (Landlock),
 * "<name> ALLOWED …" otherwise; "<name> works" for what decoding needs. The tests give it a
 * parent and a sibling process with a readable address, files it can see, and a terminal
 * that is its controlling one, so that an attempt the lock-down lets through succeeds (or
 * fails with another errno) instead of failing for an unrelated reason. */
#define _GNU_SOURCE
#include "nu11image.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <termios.h>
#include <unistd.h>

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif

static int out_fd = 1;
static int failures = 0;

static void line(const char *text) {
    size_t n = strlen(text);
    ssize_t w = write(out_fd, text, n);
    (void)w;
}

/* An escape attempt: must fail with EPERM or EACCES. `rc` and `err` are the call's result. */
static void refused(const char *name, long rc, int err) {
    char buf[200];
    if (rc < 0 && (err == EPERM || err == EACCES)) {
        snprintf(buf, sizeof buf, "%s refused\n", name);
    } else {
        failures++;
        snprintf(buf, sizeof buf, "%s ALLOWED (returned %ld, %s)\n", name, rc, rc < 0 ? strerror(err) : "no error");
    }
    line(buf);
}

#define TRY(name, call) do { errno = 0; long rc_ = (long)(call); refused((name), rc_, errno); } while (0)

static void works(const char *name, int ok) {
    char buf[200];
    if (!ok) failures++;
    snprintf(buf, sizeof buf, "%s %s\n", name, ok ? "works" : "FAILED");
    line(buf);
}

static void *thread_body(void *arg) { return arg; }

static long vm_read(int pid, uint64_t addr) {
    char local[16];
    struct iovec here = { local, sizeof local }, there = { (void *)(uintptr_t)addr, sizeof local };
    return syscall(SYS_process_vm_readv, pid, &here, 1, &there, 1, 0);
}

static void files(const nu11_probe_targets *t) {
    if (t->home_file) TRY("read-home-file", syscall(SYS_openat, AT_FDCWD, t->home_file, O_RDONLY | O_CLOEXEC));
    if (t->keystore_file) TRY("read-keystore-file", syscall(SYS_openat, AT_FDCWD, t->keystore_file, O_RDONLY | O_CLOEXEC));
    if (t->visible_file) TRY("write-open-file", syscall(SYS_openat, AT_FDCWD, t->visible_file, O_WRONLY | O_CLOEXEC));
    if (t->new_file) TRY("create-file", syscall(SYS_openat, AT_FDCWD, t->new_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (t->new_file) TRY("mkdir", syscall(SYS_mkdirat, AT_FDCWD, t->new_file, 0700));
    if (t->visible_file) TRY("unlink-file", syscall(SYS_unlinkat, AT_FDCWD, t->visible_file, 0));
    if (t->visible_file && t->new_file) TRY("rename-file", syscall(SYS_renameat, AT_FDCWD, t->visible_file, AT_FDCWD, t->new_file));
}

int nu11_sandbox_probe(const nu11_probe_targets *t, int out) {
    out_fd = out;
    failures = 0;
    struct io_uring_params_like { uint32_t words[30]; } params;
    memset(&params, 0, sizeof params);
    TRY("io_uring_setup", syscall(__NR_io_uring_setup, 4, &params));
    for (int fd = 0; fd <= 2; fd++) {
        char c = '#';
        char name[32];
        snprintf(name, sizeof name, "TIOCSTI-fd%d", fd);
        TRY(name, ioctl(fd, TIOCSTI, &c));
    }
    TRY("ioctl-TCGETS", ({ struct termios tio; ioctl(0, TCGETS, &tio); }));
    int targets[2] = { t->parent, t->sibling };
    uint64_t addrs[2] = { t->parent_addr, t->sibling_addr };
    const char *who[2] = { "parent", "sibling" };
    for (int i = 0; i < 2; i++) {
        if (targets[i] <= 0) continue;
        char name[64];
        snprintf(name, sizeof name, "pidfd_open-%s", who[i]);
        TRY(name, syscall(__NR_pidfd_open, targets[i], 0));
        snprintf(name, sizeof name, "pidfd_getfd-%s", who[i]);
        TRY(name, syscall(__NR_pidfd_getfd, 0, 0, 0));  /* fd 0 is no pidfd: EBADF if the call were allowed */
        snprintf(name, sizeof name, "process_vm_readv-%s", who[i]);
        TRY(name, vm_read(targets[i], addrs[i]));
        snprintf(name, sizeof name, "process_vm_writev-%s", who[i]);
        TRY(name, ({ char b[1] = {0}; struct iovec h = { b, 1 }, r = { (void *)(uintptr_t)addrs[i], 1 };
                     syscall(SYS_process_vm_writev, targets[i], &h, 1, &r, 1, 0); }));
        snprintf(name, sizeof name, "ptrace-seize-%s", who[i]);
        TRY(name, syscall(SYS_ptrace, 0x4206 /* PTRACE_SEIZE: attaches without stopping it */, targets[i], 0, 0));
        snprintf(name, sizeof name, "open-proc-mem-%s", who[i]);
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mem", targets[i]);
        TRY(name, syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
        snprintf(name, sizeof name, "kill-%s", who[i]);
        TRY(name, syscall(SYS_kill, targets[i], 0));
        snprintf(name, sizeof name, "tgkill-%s", who[i]);
        TRY(name, syscall(SYS_tgkill, targets[i], targets[i], 0));
    }
    TRY("kill(-1)", syscall(SYS_kill, -1, 0));
    if (t->visible_file) {
        TRY("chmod", syscall(SYS_fchmodat, AT_FDCWD, t->visible_file, 0666));
        TRY("chown", syscall(SYS_fchownat, AT_FDCWD, t->visible_file, getuid(), getgid(), 0));
        TRY("setxattr", syscall(SYS_setxattr, t->visible_file, "user.nu11vlt", "x", 1, 0));
        TRY("removexattr", syscall(SYS_removexattr, t->visible_file, "user.nu11vlt"));
        TRY("utimensat", syscall(SYS_utimensat, AT_FDCWD, t->visible_file, NULL, 0));
    }
    TRY("fchmod-pipe", syscall(SYS_fchmod, 1, 0666));
    files(t);
    TRY("memfd_create", syscall(SYS_memfd_create, "x", 0));
    TRY("socket-tcp", syscall(SYS_socket, 2 /* AF_INET */, 1 /* SOCK_STREAM */, 0));
    TRY("socket-unix", syscall(SYS_socket, 1 /* AF_UNIX */, 1, 0));
    TRY("socketpair", ({ int sv[2]; syscall(SYS_socketpair, 1, 1, 0, sv); }));
    char *const argv[] = { (char *)"/bin/true", NULL };
    char *const envp[] = { NULL };
    TRY("execve", syscall(SYS_execve, "/bin/true", argv, envp));
    TRY("fork", ({ long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); if (pid == 0) syscall(SYS_exit_group, 0); pid; }));
    TRY("read-other-fd", ({ char b; syscall(SYS_read, 1, &b, 1); }));
    TRY("write-other-fd", syscall(SYS_write, 0, "x", 1));
    TRY("prctl-dumpable", syscall(SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0));
    {   /* clone3 hides its flags behind a pointer seccomp cannot read: the filter answers ENOSYS
         * (glibc then falls back to clone, whose flags it checks). A fork through it: */
        uint64_t args[8];  /* struct clone_args, version 0 (64 bytes) */
        memset(args, 0, sizeof args);
        args[4] = SIGCHLD;  /* exit_signal: a plain child process */
        errno = 0;
        long pid = syscall(__NR_clone3, args, sizeof args);
        if (pid == 0) syscall(SYS_exit_group, 0);
        int err = errno;
        char buf[200];
        if (pid < 0 && (err == ENOSYS || err == EPERM)) {
            snprintf(buf, sizeof buf, "clone3-fork refused\n");
        } else {
            failures++;
            snprintf(buf, sizeof buf, "clone3-fork ALLOWED (returned %ld, %s)\n", pid, pid < 0 ? strerror(err) : "no error");
        }
        line(buf);
    }
    /* What decoding needs still works. */
    pthread_t thread;
    works("thread", pthread_create(&thread, NULL, thread_body, NULL) == 0 && pthread_join(thread, NULL) == 0);
    works("tgkill-self", syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), 0) == 0);
    works("read-stdin", ({ char b; syscall(SYS_read, 0, &b, 1) >= 0; }));
    return failures;
}

/* The memory limit (RLIMIT_AS), as a decoder that allocates would meet it: address space past
 * the limit is refused, a decoder's working set under it is not. */
int nu11_sandbox_probe_memory(unsigned long long limit, int out) {
    out_fd = out;
    failures = 0;
    size_t over = (size_t)limit + ((size_t)256 << 20);
    errno = 0;
    void *big = mmap(NULL, over, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    works("memory-limit", big == MAP_FAILED && errno == ENOMEM);
    if (big != MAP_FAILED) munmap(big, over);
    size_t under = (size_t)64 << 20;
    void *small = mmap(NULL, under, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    works("memory-under-limit", small != MAP_FAILED);
    if (small != MAP_FAILED) munmap(small, under);
    return failures;
}

int nu11_sandbox_probe_files(const nu11_probe_targets *t, int out) {
    out_fd = out;
    failures = 0;
    files(t);
    return failures;
}

void nu11_sandbox_probe_x32(void) {
#if defined(__x86_64__)
    /* x32's socket(): the filter must kill the process before the kernel sees it. */
    syscall(0x40000000L | 41, 2, 1, 0);
    line("x32-socket survived\n");
#else
    line("x32-socket not applicable\n");
#endif
}
