#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Two Syncthing instances that talk to each other and to nothing else, for bench/sync_latency.py.

Set up as Tests/Sync/syncthing_pair.py sets up its trusted pair (written here on its own): homes,
keys and API keys of their own; the config written before the first start, with global and local
discovery, relays, NAT traversal, STUN, usage and crash reporting and upgrades off, each peer's
address an explicit tcp://127.0.0.1:PORT (ports chosen free), the GUI/REST API on 127.0.0.1, one
send-receive folder whose own scan interval is an hour and whose watcher is off (rescans are
forced through the API). check_isolated() is the test's `ss` check; stop() goes by PID, and a
Syncthing gets SIGTERM should the process that started it die (PR_SET_PDEATHSIG).
"""
import ctypes
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

# The loopback-only config, shared with the sync test.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Tests", "Sync"))
from loopback import free_ports, isolate  # noqa: E402

FOLDER_ID = "nu11vlt-vault"
POLL_S = 0.1
TIMEOUT_S = 900
CLK_TCK = os.sysconf("SC_CLK_TCK")


class SyncError(Exception):
    pass


# ---------------------------------------------------------------- Syncthing, on the loopback only

def die_with_parent():
    # PR_SET_PDEATHSIG (1): SIGTERM to Syncthing should this script die without its cleanup.
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)


class Syncthing:
    NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def __init__(self, name, root, folder):
        self.name, self.root, self.folder = name, root, folder
        self.home = os.path.join(root, "syncthing")
        self.log = os.path.join(root, "syncthing.log")
        self.apikey = secrets.token_urlsafe(24)
        self.proc = None
        self.env = {"PATH": "/usr/bin:/bin", "HOME": root, "LANG": "C.UTF-8", "STNORESTART": "1",
                    "STNOUPGRADE": "1", "STNODEFAULTFOLDER": "1", "STMONITORED": ""}

    def generate(self):
        os.makedirs(self.root, exist_ok=True)
        p = subprocess.run(["syncthing", "generate", "--home", self.home, "--no-default-folder", "--skip-port-probing"],
                           capture_output=True, text=True, env=self.env, timeout=60)
        m = re.search(r"Device ID: ([A-Z0-9-]{63})", p.stdout + p.stderr)
        if p.returncode != 0 or not m:
            raise SyncError(f"syncthing generate ({self.name}) failed: {p.stdout}{p.stderr}")
        self.id = m.group(1)

    def configure(self, peers):
        """Rewrites the generated config before the first start: one send-receive folder shared
        with the peers, each peer at tcp://127.0.0.1:PORT, every other network feature off."""
        path = os.path.join(self.home, "config.xml")
        tree = ET.parse(path)
        cfg = tree.getroot()
        for el in cfg.findall("folder") + cfg.findall("device"):
            cfg.remove(el)
        defaults = cfg.find("defaults")
        folder = ET.fromstring(ET.tostring(defaults.find("folder")))
        for el in folder.findall("device"):
            folder.remove(el)
        folder.attrib.update({"id": FOLDER_ID, "label": "vault", "path": self.folder, "type": "sendreceive",
                              "rescanIntervalS": "3600", "fsWatcherEnabled": "false"})
        folder.find("paused").text = "false"
        for peer in peers:
            ET.SubElement(ET.SubElement(folder, "device", {"id": peer.id, "introducedBy": ""}), "encryptionPassword")
        cfg.insert(0, folder)
        for i, peer in enumerate(peers):
            dev = ET.fromstring(ET.tostring(defaults.find("device")))
            dev.attrib.update({"id": peer.id, "name": peer.name})
            dev.find("address").text = f"tcp://127.0.0.1:{peer.listen}"
            dev.find("untrusted").text = "false"
            dev.find("autoAcceptFolders").text = "false"
            cfg.insert(1 + i, dev)
        gui = cfg.find("gui")
        gui.attrib.update({"enabled": "true", "tls": "false"})
        gui.find("address").text = f"127.0.0.1:{self.gui}"
        gui.find("apikey").text = self.apikey
        isolate(cfg.find("options"), self.listen)
        tree.write(path)
        os.chmod(path, 0o600)
        os.makedirs(os.path.join(self.folder, ".stfolder"), mode=0o700, exist_ok=True)

    def start(self):
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(["syncthing", "serve", "--home", self.home, "--no-browser", "--no-restart",
                                          "--no-upgrade", "--logflags=0"],
                                         stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                         start_new_session=True, preexec_fn=die_with_parent)

    def tree(self):
        """Syncthing's process and every process under it."""
        found, todo = [], [self.proc.pid] if self.proc else []
        while todo:
            pid = todo.pop()
            found.append(pid)
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as f:
                        todo += [int(k) for k in f.read().split()]
            except OSError:
                pass
        return found

    def cpu(self):
        """User + system seconds of Syncthing's processes so far."""
        total = 0
        for pid in self.tree():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
            except (OSError, IndexError, ValueError):
                pass
        return total / CLK_TCK

    def api(self, path, method="GET", timeout=30):
        req = urllib.request.Request(f"http://127.0.0.1:{self.gui}{path}", method=method,
                                     headers={"X-API-Key": self.apikey})
        with self.NO_PROXY.open(req, timeout=timeout) as r:
            text = r.read()
        return json.loads(text) if text.strip() else None

    def wait_up(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SyncError(f"syncthing {self.name} exited:\n{tail(self.log)}")
            try:
                if self.api("/rest/system/ping", timeout=2).get("ping") == "pong":
                    return
            except (OSError, urllib.error.URLError, ValueError):
                pass
            time.sleep(0.2)
        raise SyncError(f"syncthing {self.name}: no answer from its API in 60 s:\n{tail(self.log)}")

    def scan(self):
        self.api(f"/rest/db/scan?folder={FOLDER_ID}", method="POST", timeout=TIMEOUT_S)

    def status(self):
        return self.api(f"/rest/db/status?folder={FOLDER_ID}")

    def sees_complete(self, other):
        c = self.api(f"/rest/db/completion?folder={FOLDER_ID}&device={other.id}")
        return c["completion"] == 100 and c["needItems"] == 0 and c["needDeletes"] == 0

    def stop(self):
        """The API's shutdown, then SIGTERM, then SIGKILL, each by PID."""
        if self.proc is None:
            return
        try:
            self.api("/rest/system/shutdown", method="POST", timeout=5)
        except (OSError, urllib.error.URLError, ValueError):
            pass
        for sig, wait in ((None, 10), (signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            if sig is not None:
                for pid in reversed(self.tree()):
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
            try:
                self.proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        self.proc = None


def tail(path, n=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no log)"


def idle(peer):
    s = peer.status()
    return s["state"] == "idle" and s["needTotalItems"] == 0 and s.get("pullErrors", 0) == 0


def wait_synced(a, b, what):
    """Forced rescans on both, then until each sees the other complete and both are idle."""
    start = time.monotonic()
    a.scan()
    b.scan()
    while time.monotonic() - start < TIMEOUT_S:
        try:
            if a.sees_complete(b) and b.sees_complete(a) and idle(a) and idle(b):
                return
        except (OSError, urllib.error.URLError, KeyError, ValueError):
            pass
        time.sleep(POLL_S)
    raise SyncError(f"{what}: A and B not in sync after {TIMEOUT_S} s")


def check_isolated(peers):
    """As the sync test's check: Syncthing listens on exactly the chosen ports on 127.0.0.1, holds
    no UDP socket and no TCP connection with an end off the loopback."""
    pids = {pid for p in peers for pid in p.tree()}
    allowed = {f"127.0.0.1:{port}" for p in peers for port in (p.listen, p.gui)}
    out = subprocess.run(["ss", "-H", "-tuapn"], capture_output=True, text=True, check=True).stdout
    listening, bad = set(), []
    for line in out.splitlines():
        if not {int(x) for x in re.findall(r"pid=(\d+)", line)} & pids:
            continue
        cols = line.split()
        if cols[0] != "tcp":
            bad.append(line)
        elif cols[1] == "LISTEN":
            listening.add(cols[4])
        elif not (cols[4].startswith("127.0.0.1:") and cols[5].startswith("127.0.0.1:")):
            bad.append(line)
    if bad or listening != allowed:
        raise SyncError(f"Syncthing off the loopback or off its ports: {bad}; listening on {sorted(listening)}, "
                         f"expected {sorted(allowed)}")
