/* The image helper's lock-down, entered after libvips has loaded its modules and before
 * any image byte is read: no core dumps, not ptrace-able, a memory limit, and a seccomp
 * filter that refuses (EPERM) sockets, exec, and every way of creating, writing, renaming
 * or removing a file. Reading stays allowed (libvips reads ICC profiles lazily). */
#define _GNU_SOURCE
#include "nu11image.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NU11_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NU11_ARCH AUDIT_ARCH_AARCH64
#endif

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
                 BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
/* open-style calls: refused when the flags (argument `arg`) ask to write or create. */
#define DENY_WRITING_OPEN(nr, arg) \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 3), \
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[arg])), \
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0, 1), \
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define RELOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

int nu11_sandbox_enter(unsigned long long max_memory_bytes) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return -1;
    struct rlimit memory = {max_memory_bytes, max_memory_bytes};
    if (setrlimit(RLIMIT_AS, &memory) != 0) return -1;
#ifdef NU11_ARCH
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NU11_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        RELOAD_NR,
        DENY(SYS_socket), DENY(SYS_socketpair), DENY(SYS_connect), DENY(SYS_bind), DENY(SYS_listen),
        DENY(SYS_accept), DENY(SYS_accept4), DENY(SYS_sendto), DENY(SYS_sendmsg),
        DENY(SYS_execve), DENY(SYS_execveat), DENY(SYS_ptrace), DENY(SYS_process_vm_writev),
        DENY(SYS_mkdirat), DENY(SYS_renameat), DENY(SYS_renameat2), DENY(SYS_unlinkat), DENY(SYS_linkat),
        DENY(SYS_symlinkat), DENY(SYS_truncate), DENY(SYS_mknodat), DENY(SYS_memfd_create),
#if defined(__x86_64__)
        DENY(SYS_creat), DENY(SYS_mkdir), DENY(SYS_rename), DENY(SYS_unlink), DENY(SYS_rmdir), DENY(SYS_link),
        DENY(SYS_symlink), DENY(SYS_mknod),
        DENY_WRITING_OPEN(SYS_open, 1),
        RELOAD_NR,
#endif
        DENY_WRITING_OPEN(SYS_openat, 2),
        RELOAD_NR,
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = { (unsigned short)(sizeof filter / sizeof filter[0]), filter };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) return -1;
    return 0;
#else
    errno = ENOSYS;
    return -1;
#endif
}

int nu11_sandbox_probe(void) {
    /* What the tests ask the helper to try once locked down: each must be refused. */
    int refused = 0;
    if (syscall(SYS_socket, 2 /* AF_INET */, 1 /* SOCK_STREAM */, 0) < 0 && errno == EPERM) refused |= 1;
    if (syscall(SYS_socket, 1 /* AF_UNIX */, 1, 0) < 0 && errno == EPERM) refused |= 2;
    if (syscall(SYS_openat, AT_FDCWD, "/tmp/nu11vlt-helper-probe", O_WRONLY | O_CREAT, 0600) < 0 && errno == EPERM) refused |= 4;
    char *const argv[] = {(char *)"/bin/true", NULL};
    char *const envp[] = {NULL};
    if (syscall(SYS_execve, "/bin/true", argv, envp) < 0 && errno == EPERM) refused |= 8;
    if (syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY) >= 0) refused |= 16;  /* reading still works */
    return refused;
}
