/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The image helper's seccomp filter as a table, seen from the outside (SandboxTableTests).
 * Built by the test with the system C compiler TOGETHER WITH Sources/CNu11Image/sandbox.c:
 * the filter installed here is the helper's own, compiled from the same table by the same
 * nu11_sandbox_seccomp(), not a copy of its list.
 *
 * For every system call number (and the argument edges of every conditional rule) a forked
 * child installs two filters and makes the call:
 *   1. a MARKER filter first, which answers every call with errno MARK (3999), except the
 *      few the child itself needs (getpid, prctl(NO_NEW_PRIVS), seccomp(SET_MODE_FILTER),
 *      its 16-byte report on fd 1, exit_group(77));
 *   2. then the helper's filter (nu11_sandbox_seccomp).
 * The kernel runs both and takes the strictest action; between two ERRNO answers the
 * newest filter's (the helper's) wins. So MARK comes back exactly when the helper's filter
 * ALLOWED the call, and the call itself never runs (no side effect, whatever the call);
 * EPERM or ENOSYS is the helper's refusal; SIGSYS is its kill.
 *
 * One line per probe on stdout: "<label> <verdict>", verdict one of
 *   allow            the helper's filter allows it (the marker stopped it)
 *   ran              both filters allowed it and it ran (only the child's own calls)
 *   E<number>        refused with that errno (1 = EPERM, 38 = ENOSYS)
 *   signal <N>       the child died of signal N (31 = SIGSYS: killed by the filter)
 *   exit <N>         the child exited without a report
 *   trapped (…)      the number never reaches seccomp on this machine (see main)
 * Labels: "nr <N>" for the sweep (all arguments 0), "<call>(<edge>)" for the argument edges. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int nu11_sandbox_seccomp(void); /* Sources/CNu11Image/sandbox.c, linked in */

#define MARK 3999
#define REPORT_EXIT 77
#define SWEEP_LAST 520  /* past the highest x86_64 number (~470) and into the x32 numbers' range */

struct report { int64_t rc; int32_t err; int32_t magic; };

#define STMT(code, k) ((struct sock_filter)BPF_STMT((code), (k)))
#define JUMP(code, k, t, f) ((struct sock_filter)BPF_JUMP((code), (k), (t), (f)))
#define ARG(i) STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[(i)]))

static int marker(void) {
    struct sock_filter f[] = {
        STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),                 /* nu11_sandbox_seccomp needs it */
        STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3),
        ARG(0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_NO_NEW_PRIVS, 13, 14),
        STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                          /* (unreached) */
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 2),
        ARG(0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_SET_MODE_FILTER, 9, 10),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 0, 2),
        ARG(0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, REPORT_EXIT, 6, 7),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 0, 6),
        ARG(0),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 4),
        ARG(2),
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, sizeof(struct report), 1, 2),
        STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                          /* (unreached) */
        STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | MARK),
    };
    struct sock_fprog program = { (unsigned short)(sizeof f / sizeof f[0]), f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program);
}

/* The child's self, for tgkill's edges: its pid, known before the filters. */
static long self_pid;

enum { PLAIN, I386, MARKER_ONLY };

/* The last verdict, for the sweep's check that a number reaches seccomp at all. */
static char last_verdict[32];

static void probe(const char *label, int how, long nr, unsigned long a0, unsigned long a1, unsigned long a2,
                  unsigned long a3, unsigned long a4, unsigned long a5, int self_args) {
    int fds[2];
    if (pipe(fds) != 0) { perror("pipe"); exit(2); }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(2); }
    if (pid == 0) {
        if (dup2(fds[1], 1) != 1) _exit(3);
        close(fds[0]);
        close(fds[1]);
        alarm(5);
        struct rlimit none = { 0, 0 };
        setrlimit(RLIMIT_CORE, &none);   /* a killed child leaves no core file */
        self_pid = getpid();
        if (self_args) { a0 = (unsigned long)self_pid + (unsigned long)(long)(int)a0; a1 = (unsigned long)self_pid; }
        if (marker() != 0) _exit(4);
        if (how != MARKER_ONLY && nu11_sandbox_seccomp() != 0) _exit(5);
        struct report r = { 0, 0, 0x6e753131 };
        long rc;
        if (how == I386) {
#if defined(__x86_64__)
            long eax = nr;
            __asm__ volatile ("int $0x80" : "+a"(eax) : "b"(a0), "c"(a1), "d"(a2) : "memory");
            rc = eax;
            if (rc < 0 && rc > -4096) { r.err = (int32_t)-rc; rc = -1; }
#else
            rc = -1; r.err = ENOSYS;
#endif
        } else {
            errno = 0;
            rc = syscall(nr, a0, a1, a2, a3, a4, a5);
            if (rc < 0) r.err = errno;
        }
        r.rc = rc;
        syscall(SYS_write, 1, &r, sizeof r);
        syscall(SYS_exit_group, REPORT_EXIT);
        for (;;) pause();
    }
    close(fds[1]);
    struct report r;
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = read(fds[0], (char *)&r + got, sizeof r - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (got == sizeof r && r.magic == 0x6e753131) {
        if (r.rc < 0 && r.err == MARK) snprintf(last_verdict, sizeof last_verdict, "allow");
        else if (r.rc < 0) snprintf(last_verdict, sizeof last_verdict, "E%d", r.err);
        else snprintf(last_verdict, sizeof last_verdict, "ran");
    } else if (WIFSIGNALED(status)) {
        snprintf(last_verdict, sizeof last_verdict, "signal %d", WTERMSIG(status));
    } else {
        snprintf(last_verdict, sizeof last_verdict, "exit %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    if (how != MARKER_ONLY) printf("%s %s\n", label, last_verdict);
}

#define EDGE(label, nr, a0, a1, a2) probe(label, PLAIN, nr, (unsigned long)(a0), (unsigned long)(a1), (unsigned long)(a2), 0, 0, 0, 0)

int main(void) {
    char label[64];
    /* 1. Every number, all arguments 0. A number that the marker alone does not see (the
     * host traps it before seccomp, e.g. a hypervisor's private call) is reported as
     * "trapped", with what happened, instead of a verdict of the helper's filter. */
    for (long nr = 0; nr <= SWEEP_LAST; nr++) {
        snprintf(label, sizeof label, "nr %ld", nr);
        if (nr != SYS_getpid && nr != SYS_prctl && nr != SYS_seccomp && nr != SYS_exit_group && nr != SYS_write) {
            probe(label, MARKER_ONLY, nr, 0, 0, 0, 0, 0, 0, 0);
            if (strcmp(last_verdict, "allow") != 0) { printf("%s trapped (%s)\n", label, last_verdict); continue; }
        }
        probe(label, PLAIN, nr, 0, 0, 0, 0, 0, 0, 0);
    }
    /* 2. The argument edges of every conditional rule: descriptors around the allowed ones,
     * the high 32 bits (the filter reads the low 32), neighbours of the allowed value. */
    const unsigned long fds[] = { 0, 1, 2, 3, 4, 0xffffffffUL, 0x100000000UL, 0x100000001UL };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) {
        snprintf(label, sizeof label, "read(fd=%#lx)", fds[i]);
        EDGE(label, SYS_read, fds[i], 0, 0);
        snprintf(label, sizeof label, "write(fd=%#lx)", fds[i]);
        EDGE(label, SYS_write, fds[i], 0, 0);
    }
    /* write's count and buffer do not matter; read's neither. */
    EDGE("write(fd=1,count=1)", SYS_write, 1, 0, 1);
    EDGE("read(fd=0,count=1)", SYS_read, 0, 0, 1);
    const unsigned long options[] = { 0, 4 /* SET_DUMPABLE */, 14, PR_SET_NAME, 16 /* GET_NAME */, 22 /* SET_SECCOMP */,
                                      38 /* SET_NO_NEW_PRIVS */, 59 /* SET_VMA */, 0x10000000fUL, 0xffffffffUL };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        snprintf(label, sizeof label, "prctl(option=%#lx)", options[i]);
        EDGE(label, SYS_prctl, options[i], 0, 0);
    }
    /* clone: every single flag bit, CLONE_THREAD with others, and CLONE_THREAD only in the high word. */
    for (int bit = 0; bit < 32; bit++) {
        snprintf(label, sizeof label, "clone(flags=1<<%d)", bit);
        EDGE(label, SYS_clone, 1UL << bit, 0, 0);
    }
    EDGE("clone(flags=0)", SYS_clone, 0, 0, 0);
    EDGE("clone(flags=THREAD|VM|SIGHAND)", SYS_clone, CLONE_THREAD | CLONE_VM | CLONE_SIGHAND, 0, 0);
    EDGE("clone(flags=~THREAD)", SYS_clone, 0xffffffffUL & ~(unsigned long)CLONE_THREAD, 0, 0);
    EDGE("clone(flags=THREAD<<32)", SYS_clone, (unsigned long)CLONE_THREAD << 32, 0, 0);
    /* tgkill: its own pid only (a0 = self + offset, a1 = self). */
    const int offsets[] = { 0, 1, -1, 2 };
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        snprintf(label, sizeof label, "tgkill(tgid=self%+d)", offsets[i]);
        probe(label, PLAIN, SYS_tgkill, (unsigned long)(long)offsets[i], 0, 0, 0, 0, 0, 1);
    }
    EDGE("tgkill(tgid=0)", SYS_tgkill, 0, 0, 0);
    EDGE("tgkill(tgid=1)", SYS_tgkill, 1, 1, 0);
    EDGE("tgkill(tgid=-1)", SYS_tgkill, -1L, 0, 0);
    EDGE("kill(pid=0)", SYS_kill, 0, 0, 0);
    EDGE("tkill(tid=0)", SYS_tkill, 0, 0, 0);
    /* 3. Other ABIs: an x32 number (each of a few allowed ones), the i386 entry. */
    const long x32[] = { SYS_read, SYS_write, SYS_getpid, SYS_close, SYS_exit_group, 0x3fffffff };
    for (size_t i = 0; i < sizeof x32 / sizeof x32[0]; i++) {
        snprintf(label, sizeof label, "x32 nr %ld", x32[i]);
        probe(label, PLAIN, x32[i] | 0x40000000L, 0, 0, 0, 0, 0, 0, 0);
    }
    probe("i386 getpid", I386, 20, 0, 0, 0, 0, 0, 0, 0);
    probe("i386 write(fd=1)", I386, 4, 1, 0, 0, 0, 0, 0, 0);
    /* 4. Numbers far out of the table. */
    const long far[] = { 1000, 4095, 0x7fffffffL, 0x80000000L };
    for (size_t i = 0; i < sizeof far / sizeof far[0]; i++) {
        snprintf(label, sizeof label, "nr %#lx", far[i]);
        probe(label, PLAIN, far[i], 0, 0, 0, 0, 0, 0, 0);
    }
    return 0;
}
