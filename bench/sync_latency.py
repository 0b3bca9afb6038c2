#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Bench row 16 (issue 60): from an import on device A until B lists the items.

    bench/sync_latency.py NU11VLT [--photos N] [--runs N] [--work DIR]

Two Syncthing instances (Debian's `syncthing`), A and B, share one vault folder on 127.0.0.1
only (bench/loopback_syncthing.py: set up as Tests/Sync/syncthing_pair.py sets up its trusted
pair; every network feature but the explicit peer off; rescans forced through the API). After
each run `ss` must show them listening on exactly the chosen ports, holding no UDP socket and no
TCP connection off the loopback. They are stopped by PID at the end, on an error or a signal too
(and they get SIGTERM should this script die).

Each run is a fresh pair: A `init` (KDF floor: 19 MiB, 2 passes), Syncthing started, A `device
pair`, the offer synced, B `device add` with the code, synced back, A takes B in (`list`). The
photos (N small JPEGs, ~30 KB each, each different: ImageMagick plasma) are made once, before
any run. Timed, on the monotonic clock:
  import    t0 = the start of `nu11vlt import -r` of the N photos on A, until it returns;
  transfer  a forced rescan on A (POST /rest/db/scan, which returns when the scan is done), then
            polling every 100 ms until A's Syncthing sees B at 100 % with nothing needed and B's
            folder is idle with nothing needed (so Syncthing's own scan interval is excluded);
  take-in   `nu11vlt list --all --json` on B (its unlock takes A's items in), repeated until it
            lists all N; t1 = when that list returns.
The CPU of each part (user + sys): the nu11vlt command's, its image helpers included (it exits
without waiting for them; this script, a subreaper, waits for them and counts them), and for the
transfer both Syncthings' (from /proc).
Prints progress on stderr; on stdout the row of bench/run's table ("| 16 | …"), then a line
"Row 16, every run …" with every run's figures in order.
"""
import argparse
import ctypes
import json
import os
import re
import resource
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error

from loopback_syncthing import POLL_S, TIMEOUT_S, SyncError, Syncthing, check_isolated, free_ports, idle, wait_synced


def say(text):
    print(f"sync bench: {text}", file=sys.stderr, flush=True)


class BenchError(SyncError):
    pass


# ---------------------------------------------------------------- nu11vlt

class Device:
    """One device of the vault: its copy of the vault folder (its Syncthing folder), its own key
    store, home and PIN. The PIN goes on a pipe named by --pin-fd, never argv or environment."""

    def __init__(self, binary, root, name):
        self.binary, self.name = binary, name
        self.vault = os.path.join(root, "vault")
        self.keystore = os.path.join(root, "keystore")
        self.home = os.path.join(root, "home")
        self.pin = f"bench-{name}-{secrets.token_hex(8)}"
        os.makedirs(os.path.join(self.home, "run"), mode=0o700, exist_ok=True)
        self.env = {"PATH": "/usr/bin:/bin", "HOME": self.home, "LANG": "C.UTF-8",
                    "XDG_RUNTIME_DIR": os.path.join(self.home, "run"),
                    "NU11VLT_VAULT": self.vault, "NU11VLT_KEYSTORE": self.keystore}

    def run(self, args, code=None):
        """Runs nu11vlt; returns (stdout, wall seconds, CPU seconds of the process)."""
        fds, extra = [], []
        for flag, line in (("--pin-fd", self.pin), ("--code-fd", code)):
            if line is None:
                continue
            r, w = os.pipe()
            os.write(w, (line + "\n").encode())
            os.close(w)
            fds.append(r)
            extra += [flag, str(r)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        try:
            p = subprocess.run([self.binary] + args + extra, stdin=subprocess.DEVNULL, capture_output=True,
                               env=self.env, pass_fds=fds, timeout=TIMEOUT_S)
        finally:
            for fd in fds:
                os.close(fd)
        wall = time.monotonic() - start
        reap_orphans()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if p.returncode != 0:
            raise BenchError(f"nu11vlt ({self.name}) {' '.join(args)} exited {p.returncode}: "
                             f"{p.stderr.decode(errors='replace').strip()[-1000:]}")
        return p.stdout.decode(), wall, cpu


def reap_orphans(patience=10.0):
    """Waits (up to `patience` seconds) for the processes nu11vlt left behind (its image helpers:
    it exits without waiting for them), which this process, a subreaper, inherits: their CPU then
    counts in RUSAGE_CHILDREN, for the command that started them."""
    left = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            left |= {int(k) for k in f.read().split()}
    for pid in list(left):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().startswith(b"syncthing"):
                    left.discard(pid)
        except OSError:
            left.discard(pid)
    deadline = time.monotonic() + patience
    while left and time.monotonic() < deadline:
        for pid in list(left):
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    left.discard(pid)
            except ChildProcessError:
                left.discard(pid)
        if left:
            time.sleep(0.01)


def make_photos(folder, n):
    """n JPEGs of 480×360 (about 30 KB), each a plasma of its own seed; 100 per convert call."""
    os.makedirs(folder, exist_ok=True)
    for first in range(0, n, 100):
        count = min(100, n - first)
        args = ["convert", "-size", "480x360"]
        for i in range(first, first + count):
            args += ["-seed", str(60000 + i), "plasma:fractal"]
        args += ["-quality", "85", "+adjoin", "-scene", str(first), os.path.join(folder, "photo-%04d.jpg")]
        subprocess.run(args, check=True, capture_output=True, timeout=600)
    names = sorted(os.listdir(folder))
    if len(names) != n:
        raise BenchError(f"made {len(names)} photos, not {n}")
    return set(names)


# ---------------------------------------------------------------- one run

def one_run(binary, work, photos, names, peers_out):
    a = Device(binary, os.path.join(work, "a"), "A")
    b = Device(binary, os.path.join(work, "b"), "B")
    sa = Syncthing("a", os.path.join(work, "a"), a.vault)
    sb = Syncthing("b", os.path.join(work, "b"), b.vault)
    peers_out += [sa, sb]
    a.run(["init", "--kdf-memory", "19", "--kdf-iterations", "2"])
    for p in (sa, sb):
        p.generate()
    ports = free_ports(4)
    sa.listen, sa.gui, sb.listen, sb.gui = ports
    for p in (sa, sb):
        p.configure([sa, sb])
    for p in (sa, sb):
        p.start()
    for p in (sa, sb):
        p.wait_up()
    out, _, _ = a.run(["device", "pair", "--name", "laptop"])
    code = re.search(r"\b[a-z]{4}(?:-[a-z]{4}){7}\b", out)
    if not code:
        raise BenchError(f"device pair printed no code: {out}")
    wait_synced(sa, sb, "the pairing offer")
    out, _, _ = b.run(["device", "add", "--name", "phone", "--kdf-memory", "19", "--kdf-iterations", "2"],
                      code=code.group(0))
    if "joined the vault" not in out:
        raise BenchError(f"device add on B: {out.strip()}")
    wait_synced(sa, sb, "B's join")
    a.run(["list"])   # A takes B's join in now, not in the timed import

    t0 = time.monotonic()
    _, imp, imp_cpu = a.run(["import", "-r", photos, "--quiet"])
    t_scan = time.monotonic()
    st_cpu0 = sa.cpu() + sb.cpu()
    sa.scan()
    scan = time.monotonic() - t_scan
    while True:
        try:
            if sa.sees_complete(sb) and idle(sb):
                break
        except (OSError, urllib.error.URLError, KeyError, ValueError):
            pass
        if time.monotonic() - t_scan > TIMEOUT_S:
            raise BenchError(f"B not complete {TIMEOUT_S} s after A's rescan")
        time.sleep(POLL_S)
    t_done = time.monotonic()
    st_cpu = sa.cpu() + sb.cpu() - st_cpu0
    lists, take_cpu = 0, 0.0
    while True:
        out, _, cpu = b.run(["list", "--all", "--json"])
        lists += 1
        take_cpu += cpu
        listed = {it["name"] for it in json.loads(out)["items"]}
        if names <= listed:
            break
        if time.monotonic() - t_done > TIMEOUT_S:
            raise BenchError(f"B lists {len(names & listed)} of the {len(names)} photos {TIMEOUT_S} s after the transfer")
    t1 = time.monotonic()
    check_isolated([sa, sb])
    return {"total": t1 - t0, "import": imp, "transfer": t_done - t_scan, "scan": scan, "takein": t1 - t_done,
            "import_cpu": imp_cpu, "sync_cpu": st_cpu, "takein_cpu": take_cpu, "lists": lists}


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description="Bench row 16: import on A until B lists the items (issue 60).")
    ap.add_argument("nu11vlt")
    ap.add_argument("--photos", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", help="a folder for the vaults and Syncthing homes (default: a new one under bench/)")
    opts = ap.parse_args()
    binary = os.path.abspath(opts.nu11vlt)
    # PR_SET_CHILD_SUBREAPER (36): what nu11vlt leaves running comes to this process (reap_orphans).
    ctypes.CDLL(None).prctl(36, 1)
    for tool in ("syncthing", "convert", "ss"):
        if not shutil.which(tool):
            raise BenchError(f"{tool} is missing (apt-get install syncthing imagemagick iproute2)")
    base = opts.work or os.path.dirname(os.path.abspath(__file__))
    work = tempfile.mkdtemp(prefix="tmp.sync.", dir=base)
    peers = []
    try:
        say(f"making {opts.photos} JPEGs…")
        photos = os.path.join(work, "photos")
        names = make_photos(photos, opts.photos)
        kib = sum(os.path.getsize(os.path.join(photos, n)) for n in names) / 1024 / len(names)
        runs = []
        for r in range(opts.runs):
            run_dir = os.path.join(work, f"run{r + 1}")
            try:
                runs.append(one_run(binary, run_dir, photos, names, peers))
            finally:
                while peers:
                    peers.pop().stop()
            shutil.rmtree(run_dir, ignore_errors=True)
            x = runs[-1]
            say(f"run {r + 1}: total {x['total']:.2f} s = import {x['import']:.2f} + transfer {x['transfer']:.2f} "
                f"(rescan {x['scan']:.2f}) + take-in {x['takein']:.2f} ({x['lists']} list); CPU: import "
                f"{x['import_cpu']:.2f}, Syncthing A+B {x['sync_cpu']:.2f}, take-in {x['takein_cpu']:.2f}")
    finally:
        while peers:
            peers.pop().stop()
        shutil.rmtree(work, ignore_errors=True)

    def med(key):
        return statistics.median(x[key] for x in runs)
    slow = max(runs, key=lambda x: x["total"])
    print(f"| 16 | {len(names)} JPEGs (~{kib:.0f} KiB) imported on device A until device B lists them, Syncthing on "
          f"127.0.0.1, forced rescan (s) | {med('total'):.2f} median, {slow['total']:.2f} slowest; medians of the parts: "
          f"import on A {med('import'):.2f} (CPU {med('import_cpu'):.2f}), transfer {med('transfer'):.2f} (the "
          f"rescan {med('scan'):.2f}, then until B is complete; both Syncthings' CPU {med('sync_cpu'):.2f}), take-in "
          f"by B's `list` {med('takein'):.2f} (CPU {med('takein_cpu'):.2f}) | | | | | | | (no target; issue 60 asks "
          f"for the measurement) |")
    print("Row 16, every run in order (s; a fresh vault pair and fresh Syncthing instances each): " + "; ".join(
        f"{x['total']:.2f} = import {x['import']:.2f} + transfer {x['transfer']:.2f} + take-in {x['takein']:.2f}"
        + (f" ({x['lists']} lists)" if x["lists"] > 1 else "") for x in runs) + ".")


if __name__ == "__main__":
    def stop_now(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, stop_now)
    try:
        main()
    except SyncError as e:
        sys.exit(f"sync bench: failed: {e}")
    except KeyboardInterrupt:
        sys.exit("sync bench: interrupted (Syncthing stopped)")
