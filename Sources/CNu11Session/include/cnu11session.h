// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef CNU11SESSION_H
#define CNU11SESSION_H
/// The unlock agent's watch on logind (GIO's GDBus, on the system bus: an AF_UNIX socket):
/// `PrepareForSleep(true)` from the manager, and `Lock` or `LockedHint` true from this login
/// session ($XDG_SESSION_ID; any session when it is not set). Returns 0 when subscribed, -1
/// when there is no system bus (the agent then ends only on lock.idle, `nu11vlt lock`,
/// a signal, or waking from a suspend).
int nu11_session_watch_start(void);
/// Dispatches what arrived (never waits); 1 once the machine is going to sleep or the
/// session was locked, else 0.
int nu11_session_watch_fired(void);
#endif
