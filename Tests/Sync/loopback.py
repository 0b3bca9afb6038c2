# SPDX-License-Identifier: GPL-3.0-or-later
"""What keeps a Syncthing instance on the loopback, in one place: the sync test
(Tests/Sync/syncthing_pair.py) and the bench's row 16 (bench/loopback_syncthing.py) both write
their config with it, before the instance first starts."""
import socket
import xml.etree.ElementTree as ET


def free_ports(n):
    """n distinct free TCP ports on 127.0.0.1 (held open together while chosen)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def isolate(opts, listen):
    """Sets the config's <options> so that the instance listens on 127.0.0.1:`listen` only and
    talks to nothing but the devices given by address: global and local discovery, relays, NAT
    traversal, STUN, usage and crash reporting, upgrades and the browser off."""
    settings = {
        "listenAddress": f"tcp://127.0.0.1:{listen}",
        "globalAnnounceEnabled": "false", "globalAnnounceServer": "",
        "localAnnounceEnabled": "false",
        "relaysEnabled": "false",
        "natEnabled": "false",
        "urAccepted": "-1", "urSeen": "3", "urURL": "",
        "autoUpgradeIntervalH": "0", "releasesURL": "",
        "crashReportingEnabled": "false", "crashReportingURL": "",
        "stunKeepaliveStartS": "0", "stunKeepaliveMinS": "0", "stunServer": "",
        "announceLANAddresses": "false",
        "startBrowser": "false",
        "restartOnWakeup": "false",
        "setLowPriority": "false",
        "reconnectionIntervalS": "1",
        "progressUpdateIntervalS": "-1",
    }
    for key, value in settings.items():
        el = opts.find(key)
        if el is None:
            el = ET.SubElement(opts, key)
        el.text = value
    for el in opts.findall("listenAddress")[1:]:
        opts.remove(el)
