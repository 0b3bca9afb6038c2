# SPDX-License-Identifier: GPL-3.0-or-later
"""Two devices, one vault folder (issue 60, FORMAT.md § 9.6): the app stays unlocked on the
laptop while the phone — a second device joined with `device pair` / `device add`, its own key
store and PIN — imports a photo and deletes one of the laptop's; the folder is synced as a file
synchronizer does it (every file but the device-local ones; deletions too). The app shows the
phone's photo, and drops the deleted one, by itself: no lock, no unlock, no command on the
laptop; the photo's information says the phone added it. Used by gui_test.py (the pass "devices")."""
import json
import os
import re
import shutil
import subprocess

from atspi_driver import click, double_click, find, focus_window, gone, key, press, screenshot, start_app, type_text

LAPTOP_PIN, PHONE_PIN = "5173-laptop", "phone passphrase 4"
KDF = ["--kdf-memory", "19", "--kdf-iterations", "2"]


def local(rel):
    """A file that stays on its device (FORMAT.md § 5.4: the index, lock, backup marker, .stignore, temp files)."""
    top = rel.split("/")[0]
    return top.startswith("index.sqlite") or top in (".lock", "CACHEDIR.TAG", ".stignore") or os.path.basename(rel).startswith(".n11tmp-")


def files(root):
    out = {}
    for folder, _, names in os.walk(root):
        for name in names:
            rel = os.path.relpath(os.path.join(folder, name), root)
            if not local(rel):
                with open(os.path.join(folder, name), "rb") as f:
                    out[rel] = f.read()
    return out


def sync(source, target, before):
    """One pass of a synchronizer from `source` to `target`: changed files copied (atomically,
    as Syncthing renames its temp file into place), and the files `source` held at the last pass
    (`before`) and holds no more removed. Returns what `source` holds now, for the next pass."""
    want = files(source)
    have = files(target)
    for rel, data in want.items():
        if have.get(rel) == data:
            continue
        path = os.path.join(target, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temp = os.path.join(os.path.dirname(path), ".syncthing." + os.path.basename(path) + ".tmp")
        with open(temp, "wb") as f:
            f.write(data)
        os.chmod(temp, 0o600)
        os.replace(temp, path)
    for rel in have:
        if rel in before and rel not in want:
            os.remove(os.path.join(target, rel))
    return set(want)


class Devices:
    def __init__(self, cli, work):
        self.cli, self.work = cli, work
        self.laptop = (os.path.join(work, "dev-laptop", "vault"), os.path.join(work, "dev-laptop", "keystore"))
        self.phone = (os.path.join(work, "dev-phone", "vault"), os.path.join(work, "dev-phone", "keystore"))
        self.photos = os.path.join(work, "dev-photos")
        self.phone_had = set()   # the phone's files at its last sync to the laptop

    def run(self, device, args, stdin, extra=()):
        vault, keystore = device
        r = subprocess.run([self.cli, *args, "--vault", vault, "--keystore", keystore, *extra], input=stdin,
                           capture_output=True, text=True, pass_fds=())
        assert r.returncode == 0, f"nu11vlt {' '.join(args)} on {os.path.basename(os.path.dirname(vault))}: {r.stderr.strip()}"
        return r.stdout

    def photo(self, name, colour):
        os.makedirs(self.photos, exist_ok=True)
        path = os.path.join(self.photos, name)
        subprocess.run(["convert", "-size", "320x240", f"gradient:{colour}-white", path], check=True)
        return path

    def ids(self, device, pin):
        listed = json.loads(self.run(device, ["list", "--json", "--pin-stdin"], pin + "\n"))["items"]
        return {item["name"]: item["id"] for item in listed}

    def make(self):
        """The laptop's vault with two photos, shared; the phone joined with the code."""
        for vault, keystore in (self.laptop, self.phone):
            os.makedirs(os.path.dirname(vault), exist_ok=True)
        self.run(self.laptop, ["init", *KDF, "--pin-stdin", "--backups", "no"], LAPTOP_PIN + "\n")
        self.run(self.laptop, ["import", "--pin-stdin", self.photo("laptop-1.jpg", "navy"), self.photo("laptop-2.jpg", "olive")],
                 LAPTOP_PIN + "\n")
        paired = self.run(self.laptop, ["device", "pair", "--name", "laptop", "--pin-stdin"], LAPTOP_PIN + "\n")
        code = re.search(r"[cbdefghijklnrtuv]{4}(-[cbdefghijklnrtuv]{4}){7}", paired).group(0)
        os.makedirs(self.phone[0], exist_ok=True)
        sync(self.laptop[0], self.phone[0], set())
        # The code on descriptor 3, the new PIN on stdin (never in argv).
        read, write = os.pipe()
        os.write(write, (code + "\n").encode())
        os.close(write)
        vault, keystore = self.phone
        r = subprocess.run(["/bin/sh", "-c", 'exec "$0" "$@" 3<&' + str(read), self.cli, "device", "add", "--vault", vault,
                            "--keystore", keystore, "--name", "phone", *KDF, "--code-fd", "3", "--pin-stdin"],
                           input=PHONE_PIN + "\n", capture_output=True, text=True, pass_fds=(read,))
        os.close(read)
        assert r.returncode == 0, f"device add on the phone: {r.stderr.strip()}"
        names = set(self.ids(self.phone, PHONE_PIN))
        assert {"laptop-1.jpg", "laptop-2.jpg"} <= names, f"the phone lists {names} after joining"
        self.to_laptop()

    def to_laptop(self):
        self.phone_had = sync(self.phone[0], self.laptop[0], self.phone_had)


def devices_check(cli, app, work, shots, step):
    dev = Devices(cli, work)
    step("two devices: the laptop's vault shared with a phone (device pair, device add with the code)")
    dev.make()
    vault, keystore = dev.laptop
    process = start_app(app, vault, keystore, os.path.join(work, "devices-app.log"))
    try:
        find("PIN", "password text", timeout=60)
        focus_window("^Nu11VLT$")
        click(find("PIN", "password text"))
        type_text(LAPTOP_PIN)
        key("Return")
        find("laptop-2.jpg", "label", timeout=60)

        step("two devices: the phone imports a photo; synced, it shows in the unlocked app by itself")
        dev.run(dev.phone, ["import", "--pin-stdin", dev.photo("from-phone.jpg", "maroon")], PHONE_PIN + "\n")
        dev.to_laptop()
        find("from-phone.jpg", "label", timeout=30)
        screenshot(os.path.join(shots, "devices-arrived.png"))

        step("two devices: the item's information names the device that added it (the phone; this device for the laptop's)")
        double_click(find("from-phone.jpg", "label", timeout=10))
        find("Back to gallery", "push button", timeout=30)
        press("Information")
        find("on phone", "label", timeout=15, exact=False)
        screenshot(os.path.join(shots, "devices-info.png"))
        press("Next item")
        find("on this device", "label", timeout=15, exact=False)
        press("Information")
        press("Back to gallery")
        find("laptop-1.jpg", "label", timeout=15)

        step("two devices: the phone deletes one of the laptop's photos; synced, the app drops it by itself")
        gone_id = dev.ids(dev.phone, PHONE_PIN)["laptop-1.jpg"]
        dev.run(dev.phone, ["delete", gone_id, "--pin-stdin"], PHONE_PIN + "\n")
        dev.to_laptop()
        gone("laptop-1.jpg", "label", timeout=30)
        find("laptop-2.jpg", "label", timeout=5)
        focus_window("^Nu11VLT$")
        key("ctrl+q")
        process.wait(timeout=30)
        assert process.returncode == 0, f"the app exited with {process.returncode}"
    except BaseException:
        screenshot(os.path.join(shots, "failure-devices.png"))
        process.kill()
        raise
    # The laptop's command line agrees, and what it took in exports as the phone imported it.
    names = dev.ids(dev.laptop, LAPTOP_PIN)
    assert set(names) == {"laptop-2.jpg", "from-phone.jpg"}, f"the laptop lists {sorted(names)}"
    out = os.path.join(work, "dev-export.jpg")
    dev.run(dev.laptop, ["export", names["from-phone.jpg"], "-o", out, "--pin-stdin"], LAPTOP_PIN + "\n")
    with open(out, "rb") as a, open(os.path.join(dev.photos, "from-phone.jpg"), "rb") as b:
        assert a.read() == b.read(), "the phone's photo does not export byte-identical on the laptop"
    os.remove(out)
    shutil.rmtree(dev.photos, ignore_errors=True)
