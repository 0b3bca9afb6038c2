/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The image helper's lock-down, entered after libvips has loaded its modules and before any
 * image byte is read. The helper is treated as already compromised: a hostile photo may run
 * code in it. What it can then still do is what this file allows, and nothing else:
 *
 *   - no core dumps, not dumpable (no ptrace, no /proc/PID/mem of it), a memory limit;
 *   - Landlock with an empty ruleset: no file can be opened, created, written or removed, no
 *     TCP port bound or connected, no signal sent and no abstract socket reached outside
 *     the helper (each as far as the running kernel's Landlock ABI goes);
 *   - a seccomp ALLOW-LIST (the table below): every other system call fails with EPERM
 *     (clone3 with ENOSYS, so glibc falls back to clone, whose flags can be checked); a
 *     number with the x32 bit, or another architecture, kills the process.
 *
 * The helper's parent (nu11_spawn_piped) starts it with descriptors 0, 1, 2 only, in a new
 * session without a controlling terminal, with an empty environment. */
#define _GNU_SOURCE
#include "nu11image.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NU11_ARCH AUDIT_ARCH_X86_64
#define NU11_X32_BIT 0x40000000u
#elif defined(__aarch64__)
#define NU11_ARCH AUDIT_ARCH_AARCH64
#endif

enum { ANY, ARG_EQ, ARG_EQ2, ARG_HAS, ARG_LACKS, ARG_SELF };

typedef struct {
    long nr;
    const char *name;
    int kind;          /* ANY, or a condition on one argument's low 32 bits */
    int arg;
    uint32_t a, b;
} rule;

#define R(call, kind, arg, a, b) { SYS_##call, #call, kind, arg, a, b }

/* The allow-list. Measured with `strace -f` over the photo corpus of every supported format
 * (JPEG, PNG, GIF, WebP, TIFF, HEIF; truncated and hostile files too) and every request
 * (analyze, exif, png, pixels) on Debian 12's libvips 8.14; the test "the helper's system
 * calls are all on its allow-list" repeats that measurement and fails on a new call.
 *
 *   call                 condition                          who needs it */
static const rule allowed[] = {
    R(read,            ARG_EQ,    0, 0, 0),                  /* requests, on fd 0 only */
    R(write,           ARG_EQ2,   0, 1, 2),                  /* answers on fd 1; stderr is /dev/null */
    R(close,           ANY,       0, 0, 0),                  /* libvips closes its buffers' sources */
    R(brk,             ANY,       0, 0, 0),                  /* malloc */
    R(mmap,            ANY,       0, 0, 0),                  /* malloc, thread stacks, liborc's code (see below) */
    R(mprotect,        ANY,       0, 0, 0),                  /* malloc arenas, stack guards */
    R(munmap,          ANY,       0, 0, 0),                  /* malloc */
    R(mremap,          ANY,       0, 0, 0),                  /* realloc of large buffers */
    R(madvise,         ANY,       0, 0, 0),                  /* malloc returns memory */
    R(futex,           ANY,       0, 0, 0),                  /* libvips's thread pool */
    R(clone,           ARG_HAS,   0, CLONE_THREAD, 0),       /* threads only: no fork */
    R(set_robust_list, ANY,       0, 0, 0),                  /* a new thread */
    R(rseq,            ANY,       0, 0, 0),                  /* a new thread */
    R(gettid,          ANY,       0, 0, 0),                  /* GLib */
    R(getpid,          ANY,       0, 0, 0),                  /* GLib, abort() */
    R(sysinfo,         ANY,       0, 0, 0),                  /* libvips sizes its caches by RAM */
    R(prctl,           ARG_EQ,    0, PR_SET_NAME, 0),        /* names libvips's worker threads */
    R(rt_sigaction,    ANY,       0, 0, 0),                  /* glibc's thread setup */
    R(rt_sigprocmask,  ANY,       0, 0, 0),                  /* thread creation */
    R(rt_sigreturn,    ANY,       0, 0, 0),
    R(sigaltstack,     ANY,       0, 0, 0),                  /* the Swift runtime's threads */
    R(sched_yield,     ANY,       0, 0, 0),                  /* spin locks */
    R(sched_getaffinity, ANY,     0, 0, 0),                  /* GLib counts processors */
    R(clock_gettime,   ANY,       0, 0, 0),                  /* when the vDSO cannot */
    R(clock_nanosleep, ANY,       0, 0, 0),
    R(nanosleep,       ANY,       0, 0, 0),
    R(getrandom,       ANY,       0, 0, 0),                  /* GLib's hash tables */
    R(tgkill,          ARG_SELF,  0, 0, 0),                  /* abort() and raise(): this process only */
    R(exit,            ANY,       0, 0, 0),                  /* a thread ends */
    R(exit_group,      ANY,       0, 0, 0),
    R(restart_syscall, ANY,       0, 0, 0),
};

#define ALLOWED_COUNT (sizeof allowed / sizeof allowed[0])

/* Calls decoding makes that are refused on purpose, and why that is harmless (the test accepts
 * these in the helper's trace, refused, and no other call off the allow-list):
 *   clone3  - ENOSYS: glibc then creates the thread with clone, whose flags the filter checks;
 *   openat  - glibc's malloc reads /proc/sys/vm/overcommit_memory when it trims a heap, and liborc
 *             tries a file for its double-mapped code; refused: malloc keeps the memory mapped,
 *             liborc maps its code anonymously;
 *   umask   - liborc, before that file; refused, nothing is created anyway.
 *
 * Executable memory stays allowed (mmap, mprotect without conditions): liborc compiles
 * libvips's SIMD kernels at run time, per operation, and without it thumbnails take 2.3 times
 * as long. A compromised decoder can therefore run code of its own, not only reuse the
 * helper's; it still has only the calls above (docs/THREAT-MODEL.md, "Images"). */
static const char *const refused_known[] = { "clone3", "openat", "umask", NULL };

const char *nu11_sandbox_allowed_name(int index) {
    return (index >= 0 && (size_t)index < ALLOWED_COUNT) ? allowed[index].name : NULL;
}

const char *nu11_sandbox_refused_name(int index) {
    return (index >= 0 && (size_t)index < sizeof refused_known / sizeof refused_known[0]) ? refused_known[index] : NULL;
}

static int landlock_abi = -1;  /* -1: not tried; 0: the kernel has none; N: ABI version */

int nu11_sandbox_landlock_abi(void) { return landlock_abi; }

#define STMT(code, k) ((struct sock_filter)BPF_STMT((code), (k)))
#define JUMP(code, k, t, f) ((struct sock_filter)BPF_JUMP((code), (k), (t), (f)))
#define ALLOW STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define DENY STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define KILL STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
#define LOAD_ARG(i) STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[(i)]))

/* Compiles the table into a classic BPF program; returns its length, or -1. */
static int compile(struct sock_filter *f, int cap, uint32_t self) {
    int n = 0;
#define EMIT(x) do { if (n >= cap) return -1; f[n++] = (x); } while (0)
#ifdef NU11_ARCH
    EMIT(STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    EMIT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, NU11_ARCH, 1, 0));
    EMIT(KILL);
#endif
    EMIT(STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
#ifdef NU11_X32_BIT
    EMIT(JUMP(BPF_JMP | BPF_JSET | BPF_K, NU11_X32_BIT, 0, 1));
    EMIT(KILL);
#endif
#ifdef SYS_clone3
    EMIT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
    EMIT(STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
#endif
    for (size_t i = 0; i < ALLOWED_COUNT; i++) {
        const rule *r = &allowed[i];
        switch (r->kind) {
        case ANY:
            EMIT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 1));
            EMIT(ALLOW);
            break;
        case ARG_EQ:
        case ARG_SELF:
            EMIT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 4));
            EMIT(LOAD_ARG(r->arg));
            EMIT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->kind == ARG_SELF ? self : r->a, 0, 1));
            EMIT(ALLOW);
            EMIT(DENY);
            break;
        case ARG_EQ2:
            EMIT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 5));
            EMIT(LOAD_ARG(r->arg));
            EMIT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->a, 1, 0));
            EMIT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->b, 0, 1));
            EMIT(ALLOW);
            EMIT(DENY);
            break;
        case ARG_HAS:
            EMIT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 4));
            EMIT(LOAD_ARG(r->arg));
            EMIT(JUMP(BPF_JMP | BPF_JSET | BPF_K, r->a, 0, 1));
            EMIT(ALLOW);
            EMIT(DENY);
            break;
        case ARG_LACKS:
            EMIT(JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 4));
            EMIT(LOAD_ARG(r->arg));
            EMIT(JUMP(BPF_JMP | BPF_JSET | BPF_K, r->a, 1, 0));
            EMIT(ALLOW);
            EMIT(DENY);
            break;
        default:
            return -1;
        }
    }
    EMIT(DENY);
#undef EMIT
    return n;
}

/* Landlock, as far as the kernel's ABI goes: nothing of the file system (ABI 1–3, 5), no TCP
 * (ABI 4), no signals or abstract Unix sockets outside this process (ABI 6). The struct is
 * declared here because Debian 12's kernel headers stop at ABI 2. */
struct nu11_landlock_attr { uint64_t fs, net, scoped; };

static int landlock_empty(void) {
#ifdef SYS_landlock_create_ruleset
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1u /* LANDLOCK_CREATE_RULESET_VERSION */);
    if (abi <= 0) { landlock_abi = 0; return 0; }
    struct nu11_landlock_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.fs = (1ull << 13) - 1;                 /* ABI 1: execute … make_sym */
    if (abi >= 2) attr.fs |= 1ull << 13;        /* refer */
    if (abi >= 3) attr.fs |= 1ull << 14;        /* truncate */
    if (abi >= 5) attr.fs |= 1ull << 15;        /* ioctl_dev */
    size_t size = 8;
    if (abi >= 4) { attr.net = 1 | 2; size = 16; }       /* bind_tcp, connect_tcp */
    if (abi >= 6) { attr.scoped = 1 | 2; size = 24; }    /* abstract unix socket, signal */
    int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (fd < 0) return -1;
    long rc = syscall(SYS_landlock_restrict_self, fd, 0);
    close(fd);
    if (rc != 0) return -1;
    landlock_abi = (int)abi;
    return 0;
#else
    landlock_abi = 0;
    return 0;
#endif
}

int nu11_sandbox_enter(unsigned long long max_memory_bytes) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return -1;
    struct rlimit memory = {max_memory_bytes, max_memory_bytes};
    if (setrlimit(RLIMIT_AS, &memory) != 0) return -1;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    if (landlock_empty() != 0) return -1;
    return nu11_sandbox_seccomp();
}

int nu11_sandbox_landlock_only(void) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return landlock_empty();
}

int nu11_sandbox_seccomp(void) {
#ifdef NU11_ARCH
    static struct sock_filter filter[512];
    int n = compile(filter, (int)(sizeof filter / sizeof filter[0]), (uint32_t)getpid());
    if (n < 0) { errno = E2BIG; return -1; }
    struct sock_fprog program = { (unsigned short)n, filter };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) return -1;
    return 0;
#else
    errno = ENOSYS;
    return -1;
#endif
}
