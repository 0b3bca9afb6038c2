// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef CNU11SYS_H
#define CNU11SYS_H
/// Disables core dumps (RLIMIT_CORE 0) and marks the process non-dumpable
/// (PR_SET_DUMPABLE 0: no core, no ptrace attach by same-user processes, /proc/PID/mem
/// closed to others). Returns 0 on success, -1 if either call failed.
int nu11_process_hygiene(void);
/// 1 if the process is non-dumpable, 0 if dumpable, -1 on error.
int nu11_is_dumpable(void);
/* 1 when `path` is on tmpfs or ramfs (memory-backed: nothing written there reaches a disk,
 * swap aside), else 0. */
int nu11_is_memory_fs(const char *path);
/// Sets (on != 0) or clears the `nodump` attribute (chattr +d) of a file or folder.
/// Returns 0 on success, 1 if the file system does not support it, -1 on other errors.
int nu11_set_nodump(const char *path, int on);
/// 1 if `path` has the nodump attribute, 0 if not, -1 if it cannot be read.
int nu11_has_nodump(const char *path);
/// syncfs(2) on the file system holding `path`: flushes every dirty page of it at once
/// (group commit for many small files). Returns 0 on success, -1 with errno set.
int nu11_syncfs(const char *path);
/// rename(2) that fails with EEXIST instead of replacing an existing `to`.
int nu11_rename_noreplace(const char *from, const char *to);
/// An unnamed file in folder `dir` (open(2) with O_TMPFILE, 0600, write-only): it has no name
/// until nu11_link_unnamed gives it one, so a process killed while writing it leaves nothing
/// (the kernel frees it with the last descriptor). Returns the descriptor, or -1 with errno
/// set (EOPNOTSUPP or EISDIR where the file system or kernel has no O_TMPFILE).
int nu11_open_unnamed(const char *dir);
/// Gives the unnamed file `fd` the name `to` (linkat(2) through /proc/self/fd): fails with
/// EEXIST when `to` exists, never replacing it. 0 on success, -1 with errno set.
int nu11_link_unnamed(int fd, const char *to);
/// Takes an exclusive flock(2) on `fd` without waiting: 0 when taken, -1 when another open
/// file holds it (a writer still at work) or on error.
int nu11_try_lock(int fd);
/// The same lock, waiting for it: 0 on success, -1 with errno set.
int nu11_lock(int fd);
/// Starts writeback of a file's dirty pages without waiting for it (Linux's
/// sync_file_range with SYNC_FILE_RANGE_WRITE): a hint that makes no data durable; 0 where
/// there is no such call.
int nu11_start_writeback(int fd);

#include <sys/types.h>
/// Cleanup on SIGINT, SIGTERM and SIGHUP: paths registered here (temp files being written,
/// plaintext handed to an editor or viewer) are truncated and unlinked by the signal
/// handler, which then prints `message` on stderr and dies of the signal (exit 128+n).
/// While a child started by nu11_spawn_wait runs, SIGINT is left to the child (an editor
/// decides what Ctrl-C means); SIGTERM and SIGHUP are passed on to it before cleaning up.
void nu11_cleanup_install(const char *message);
/// Registers a path; returns a slot (>= 0) or -1 when the table is full.
int nu11_cleanup_register(const char *path);
void nu11_cleanup_unregister(int slot);
/// Starts `argv[0]` (searched in PATH) in a new session without a controlling terminal (it
/// keeps the terminal as 0, 1, 2 but cannot inject input into it), with descriptors 0, 1, 2
/// only — and `keep_fd` as its descriptor 3 when it is >= 0 — and this process's environment
/// without the NU11VLT_* variables; waits for it. Our SIGINT, SIGTERM and SIGHUP are passed on
/// to its process group. Returns 0 and its wait status in *status, or an errno value.
int nu11_spawn_wait(char *const argv[], int keep_fd, int *status);
/// Starts `path` (no PATH search, an empty environment, a new session without a controlling
/// terminal, descriptors 0, 1, 2 only) with a pipe to its stdin and one from its stdout (both
/// close-on-exec on our side), stderr to /dev/null. Returns 0, or an errno value.
int nu11_spawn_piped(const char *path, int *to_child, int *from_child, int *pid_out);
/// The running kernel's Landlock ABI version; 0 when it has no Landlock (the image helper
/// then has its seccomp allow-list only).
int nu11_landlock_abi(void);
/// memfd_create without close-on-exec (so a child can open /proc/self/fd/N); -1 on error.
int nu11_memfd(const char *name);

/* The unlock agent (agent.c): AF_UNIX stream sockets only. */
#define NU11_MAX_PASSED_FDS 4
/// The longest socket path an AF_UNIX address holds.
int nu11_unix_path_max(void);
/// A listening socket at `path`, mode 0600 from its creation; -1 with errno set.
int nu11_unix_listen(const char *path);
/// A connection to `path`; -1 with errno set.
int nu11_unix_dial(const char *path);
/// The next connection (close-on-exec); -1 with errno set.
int nu11_unix_accept(int listener);
/// The connected peer's user and process (SO_PEERCRED, as the kernel recorded them): 0 or -1.
int nu11_peer_credentials(int fd, uid_t *uid, pid_t *pid);
/// Sends `len` bytes with up to NU11_MAX_PASSED_FDS descriptors (SCM_RIGHTS): 0 or -1.
int nu11_send_with_fds(int sock, const void *buf, size_t len, const int *fds, int nfds);
/// Receives up to `len` bytes and the descriptors passed with them (close-on-exec) in `fds`
/// (*nfds of them); the byte count, 0 at the end, -1 with errno set.
long nu11_recv_with_fds(int sock, void *buf, size_t len, int *fds, int *nfds);
/// Starts `path` (our own binary) with this environment, default signal handling, `fds[i]`
/// as its descriptor i and no other; in a new session when `new_session`. 0 or an errno value.
int nu11_spawn_self(const char *path, char *const argv[], const int *fds, int nfds, int new_session, int *pid_out);
/// Blocks SIGTERM, SIGINT and SIGHUP in this thread (and the threads it starts later) and
/// returns a signalfd that becomes readable when one arrives; -1 on error.
int nu11_block_termination_signals(void);
/// How long this machine has been suspended since it booted (CLOCK_BOOTTIME minus
/// CLOCK_MONOTONIC), in seconds: it grows across a suspend.
double nu11_seconds_suspended(void);
/// The client while the agent runs its command: the first SIGINT, SIGTERM or SIGHUP shuts
/// down our sending half of `sock` (the agent sees the end and stops the command at its next
/// safe point) and is remembered; a second one ends us at once.
void nu11_agent_client_interruptible(int sock);
/// The signal that interrupted the client (0 if none).
int nu11_agent_client_interrupted(void);
/// The agent while a command runs: a thread watches the client's connection and marks the
/// command cancelled when the client ends it (its Ctrl-C, or the client gone), and watches
/// `signals` (the agent's signalfd): a termination signal cancels the command too, and ends the
/// process (socket_path removed) when the command has not returned a second later. 0 or -1.
int nu11_agent_watch_start(int conn, int signals, const char *socket_path);
/// The termination signal the watcher took while the command ran (0 if none): the agent ends.
int nu11_agent_terminated(void);
/// SIGTERM to `pid` only when it is this program running as `agent-serve` (through a pidfd taken
/// before the check, so a reused PID is never signalled). 0, or -1 with errno (EPERM: not one).
int nu11_signal_agent(pid_t pid);
/// Stops that thread (the command has returned).
void nu11_agent_watch_stop(void);
/// Whether the client cancelled the running command.
int nu11_agent_cancelled(void);
/// Forgets what stdio buffered from descriptor 0, and its end (the agent's next client).
void nu11_stdin_reset(void);

#endif
