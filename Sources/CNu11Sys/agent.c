// SPDX-License-Identifier: GPL-3.0-or-later
/* The unlock agent's plumbing (`nu11vlt unlock`): an AF_UNIX stream socket (never another
 * family), the peer's credentials (SO_PEERCRED), descriptors passed with SCM_RIGHTS, and
 * starting our own binary as a child. */
#define _GNU_SOURCE
#include "cnu11sys.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

static int fill_address(struct sockaddr_un *addr, const char *path) {
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr->sun_path) { errno = ENAMETOOLONG; return -1; }
    strcpy(addr->sun_path, path);
    return 0;
}

int nu11_unix_path_max(void) { return (int)sizeof(((struct sockaddr_un *)0)->sun_path) - 1; }

int nu11_unix_listen(const char *path) {
    struct sockaddr_un addr;
    if (fill_address(&addr, path) != 0) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    /* Created 0600 from the start (no window in which another user could connect). */
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&addr, sizeof addr);
    umask(old);
    if (rc != 0 || chmod(path, 0600) != 0 || listen(fd, 16) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int nu11_unix_dial(const char *path) {
    struct sockaddr_un addr;
    if (fill_address(&addr, path) != 0) return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int rc;
    do { rc = connect(fd, (struct sockaddr *)&addr, sizeof addr); } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int nu11_unix_accept(int listener) {
    int fd;
    do { fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC); } while (fd < 0 && errno == EINTR);
    return fd;
}

int nu11_peer_credentials(int fd, uid_t *uid, pid_t *pid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return -1;
    *uid = cred.uid;
    *pid = cred.pid;
    return 0;
}

int nu11_send_with_fds(int sock, const void *buf, size_t len, const int *fds, int nfds) {
    if (nfds < 0 || nfds > NU11_MAX_PASSED_FDS) { errno = EINVAL; return -1; }
    struct iovec iov = { (void *)buf, len };
    union { char space[CMSG_SPACE(sizeof(int) * NU11_MAX_PASSED_FDS)]; struct cmsghdr align; } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (nfds > 0) {
        msg.msg_control = control.space;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t n;
    do { n = sendmsg(sock, &msg, MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 0 : -1;
}

long nu11_recv_with_fds(int sock, void *buf, size_t len, int *fds, int *nfds) {
    struct iovec iov = { buf, len };
    union { char space[CMSG_SPACE(sizeof(int) * NU11_MAX_PASSED_FDS)]; struct cmsghdr align; } control;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.space;
    msg.msg_controllen = sizeof control.space;
    ssize_t n;
    do { n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC); } while (n < 0 && errno == EINTR);
    int got = 0;
    if (n >= 0) {
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
            int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            int *data = (int *)CMSG_DATA(c);
            for (int i = 0; i < count; i++) {
                if (got < NU11_MAX_PASSED_FDS) fds[got++] = data[i]; else close(data[i]);
            }
        }
        if (msg.msg_flags & MSG_CTRUNC) {
            for (int i = 0; i < got; i++) close(fds[i]);
            got = 0;
            errno = EMSGSIZE;
            n = -1;
        }
    }
    *nfds = got;
    return (long)n;
}

int nu11_spawn_self(const char *path, char *const argv[], const int *fds, int nfds, int new_session, int *pid_out) {
    if (nfds < 0 || nfds > 16) return EINVAL;
    /* fds[i] becomes descriptor i of the child. Each is first copied above every target (so
     * no dup2 overwrites a source a later one needs, and none is a dup2 onto itself, which
     * would keep close-on-exec set). */
    int high[16];
    for (int i = 0; i < nfds; i++) {
        high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 64);
        if (high[i] < 0) {
            int e = errno;
            for (int j = 0; j < i; j++) close(high[j]);
            return e;
        }
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    for (int i = 0; i < nfds; i++) posix_spawn_file_actions_adddup2(&actions, high[i], i);
    posix_spawn_file_actions_addclosefrom_np(&actions, nfds);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGHUP);
    sigaddset(&def, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &def);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    if (new_session) flags |= POSIX_SPAWN_SETSID;
    posix_spawnattr_setflags(&attr, flags);
    pid_t pid;
    int rc = posix_spawn(&pid, path, &actions, &attr, argv, environ);
    for (int i = 0; i < nfds; i++) close(high[i]);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc == 0) *pid_out = pid;
    return rc;
}

#include <signal.h>
#include <sys/signalfd.h>
#include <pthread.h>

int nu11_block_termination_signals(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) return -1;
    return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

#include <time.h>

double nu11_seconds_suspended(void) {
    struct timespec boot, mono;
    if (clock_gettime(CLOCK_BOOTTIME, &boot) != 0 || clock_gettime(CLOCK_MONOTONIC, &mono) != 0) return 0;
    return (double)(boot.tv_sec - mono.tv_sec) + (double)(boot.tv_nsec - mono.tv_nsec) / 1e9;
}

/* Ctrl-C through the agent. The agent runs in a session of its own, so the terminal's SIGINT
 * reaches only the client: the client passes it on by shutting down its sending half of the
 * connection (shutdown() is async-signal-safe), and the agent, which watches the connection
 * while a command runs, stops the command at its next safe point (between items: what was
 * committed stays, what was not is removed) and answers with the command's end. A client
 * killed outright closes the connection, which the agent takes the same way. */
static volatile sig_atomic_t client_sock = -1;
static volatile sig_atomic_t client_signal = 0;

static void on_client_signal(int sig) {
    if (client_signal != 0) {  /* the second: at once */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    client_signal = sig;
    if (client_sock >= 0) shutdown(client_sock, SHUT_WR);
}

void nu11_agent_client_interruptible(int sock) {
    client_sock = sock;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_client_signal;  /* no SA_RESTART: the wait for the answer sees EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int nu11_agent_client_interrupted(void) { return (int)client_signal; }

#include <poll.h>
#include <stdatomic.h>

static atomic_int watch_cancelled;
static atomic_int watch_terminated;
static int watch_conn = -1;
static int watch_signals = -1;
static char watch_socket[4096];
static int watch_wake[2] = { -1, -1 };
static pthread_t watch_thread;
static int watch_running = 0;

/* A termination signal (SIGTERM, SIGINT, SIGHUP: `nu11vlt lock` sends SIGTERM when the agent does
 * not answer) while a command runs: the command is asked to stop at its next safe point; if it
 * has not ended a second later — blocked reading a client's stdin, or writing to a pipe nobody
 * reads — the agent removes its socket and ends at once. Every command is crash-safe (what was
 * committed stays, the next command finishes or removes the rest), and the process's memory,
 * keys included, goes with it (the agent is not dumpable). */
static void *watch_main(void *unused) {
    (void)unused;
    struct pollfd p[3] = { { watch_conn, POLLIN | POLLRDHUP, 0 }, { watch_wake[0], POLLIN, 0 }, { watch_signals, POLLIN, 0 } };
    int watching_conn = 1;
    for (;;) {
        p[0].fd = watching_conn ? watch_conn : -1;
        int r = poll(p, 3, -1);
        if (r < 0) {
            if (errno == EINTR) continue;
            return NULL;
        }
        if (p[1].revents != 0) return NULL;
        if (p[2].revents != 0) {
            struct signalfd_siginfo info;
            ssize_t n;
            do { n = read(watch_signals, &info, sizeof info); } while (n < 0 && errno == EINTR);
            int sig = n == (ssize_t)sizeof info ? (int)info.ssi_signo : SIGTERM;
            atomic_store(&watch_terminated, sig);
            atomic_store(&watch_cancelled, 1);
            struct pollfd w = { watch_wake[0], POLLIN, 0 };
            int waited;
            do { waited = poll(&w, 1, 1000); } while (waited < 0 && errno == EINTR);
            if (waited > 0) return NULL;
            if (watch_socket[0] != 0) unlink(watch_socket);
            _exit(128 + sig);
        }
        if (p[0].revents != 0) {
            /* The client sends nothing after its request: any end, error or byte is its cancel. */
            atomic_store(&watch_cancelled, 1);
            watching_conn = 0;  /* and still watch for a termination signal */
        }
    }
}

int nu11_agent_terminated(void) { return atomic_load(&watch_terminated); }

int nu11_agent_watch_start(int conn, int signals, const char *socket_path) {
    atomic_store(&watch_cancelled, 0);
    if (pipe2(watch_wake, O_CLOEXEC) != 0) return -1;
    watch_conn = conn;
    watch_signals = signals;
    watch_socket[0] = 0;
    if (socket_path != NULL && strlen(socket_path) < sizeof watch_socket) strcpy(watch_socket, socket_path);
    if (pthread_create(&watch_thread, NULL, watch_main, NULL) != 0) {
        close(watch_wake[0]);
        close(watch_wake[1]);
        return -1;
    }
    watch_running = 1;
    return 0;
}

void nu11_agent_watch_stop(void) {
    if (!watch_running) return;
    char c = 1;
    ssize_t w;
    do { w = write(watch_wake[1], &c, 1); } while (w < 0 && errno == EINTR);
    pthread_join(watch_thread, NULL);
    close(watch_wake[0]);
    close(watch_wake[1]);
    watch_running = 0;
}

int nu11_agent_cancelled(void) { return atomic_load(&watch_cancelled); }

#include <stdio.h>
#include <stdio_ext.h>

/* The agent serves one client after another on descriptor 0: what stdio read ahead from the
 * last client's stdin, or its end, must not reach the next command. */
void nu11_stdin_reset(void) {
    __fpurge(stdin);
    clearerr(stdin);
}

#include <sys/syscall.h>
#include <stdio.h>

/* `nu11vlt lock`'s SIGTERM to an agent that does not answer, only when the socket's peer is one:
 * a pidfd taken first (so a PID reused after this check is never signalled), then the process
 * must run this same program (its /proc/PID/exe is /proc/self/exe's file) as `agent-serve`. */
int nu11_signal_agent(pid_t pid) {
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0) return -1;
    char path[64];
    struct stat theirs, ours;
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    if (stat(path, &theirs) != 0 || stat("/proc/self/exe", &ours) != 0
        || theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino) {
        close(pfd);
        errno = EPERM;
        return -1;
    }
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    char cmdline[4096];
    int found = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, cmdline, sizeof cmdline - 1);
        close(fd);
        for (ssize_t i = 0; n > 0 && i < n; ) {
            cmdline[n] = 0;
            if (strcmp(cmdline + i, "agent-serve") == 0) { found = 1; break; }
            i += (ssize_t)strlen(cmdline + i) + 1;
        }
    }
    if (!found) {
        close(pfd);
        errno = EPERM;
        return -1;
    }
    int r = (int)syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 0);
    close(pfd);
    return r;
}

