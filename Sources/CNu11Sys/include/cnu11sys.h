#ifndef CNU11SYS_H
#define CNU11SYS_H
/// Disables core dumps (RLIMIT_CORE 0) and marks the process non-dumpable
/// (PR_SET_DUMPABLE 0: no core, no ptrace attach by same-user processes, /proc/PID/mem
/// closed to others). Returns 0 on success, -1 if either call failed.
int nu11_process_hygiene(void);
/// 1 if the process is non-dumpable, 0 if dumpable, -1 on error.
int nu11_is_dumpable(void);
#endif
/// Sets (on != 0) or clears the `nodump` attribute (chattr +d) of a file or folder.
/// Returns 0 on success, 1 if the file system does not support it, -1 on other errors.
int nu11_set_nodump(const char *path, int on);
/// 1 if `path` has the nodump attribute, 0 if not, -1 if it cannot be read.
int nu11_has_nodump(const char *path);
/// syncfs(2) on the file system holding `path`: flushes every dirty page of it at once
/// (group commit for many small files). Returns 0 on success, -1 with errno set.
int nu11_syncfs(const char *path);
