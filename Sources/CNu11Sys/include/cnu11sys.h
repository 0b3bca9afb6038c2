#ifndef CNU11SYS_H
#define CNU11SYS_H
/// Disables core dumps (RLIMIT_CORE 0) and marks the process non-dumpable
/// (PR_SET_DUMPABLE 0: no core, no ptrace attach by same-user processes, /proc/PID/mem
/// closed to others). Returns 0 on success, -1 if either call failed.
int nu11_process_hygiene(void);
/// 1 if the process is non-dumpable, 0 if dumpable, -1 on error.
int nu11_is_dumpable(void);
#endif
