#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Nu11VLT's software FIDO2 authenticator, for tests only.

A CTAP 2.0 authenticator with what Nu11VLT uses: getInfo, makeCredential (ES256, "packed"
self attestation, non-resident), getAssertion with the hmac-secret extension, and clientPIN
(PIN/UV auth protocol 1: getRetries, getKeyAgreement, setPIN, getPinToken) with a retry
counter that persists (8 tries; 3 wrong in a row need a new connection... here: a restart of
the authenticator, as a real key needs re-plugging).

It listens on an AF_UNIX socket. libfido2 reaches it through its custom-transport hooks
(Sources/CNu11Fido/transport.c, debug builds only). Each message, both ways:
command (1 byte) || length (4 bytes, big-endian) || payload.

Dependencies: Debian's python3-fido2 (its CBOR codec only) and python3-cryptography.
Usage: soft_fido2.py --socket PATH --state FILE [--pin PIN] [--deny-touch]
"""
import argparse
import hashlib
import hmac
import json
import os
import socket
import struct
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from fido2 import cbor

CMD_INIT, CMD_CBOR, CMD_CANCEL = 0x06, 0x10, 0x11
OK, INVALID_COMMAND, INVALID_CBOR, MISSING_PARAMETER = 0x00, 0x01, 0x12, 0x14
UNSUPPORTED_ALGORITHM, OPERATION_DENIED, NO_CREDENTIALS = 0x26, 0x27, 0x2E
PIN_INVALID, PIN_BLOCKED, PIN_AUTH_INVALID, PIN_AUTH_BLOCKED = 0x31, 0x32, 0x33, 0x34
PIN_NOT_SET, PIN_REQUIRED, PIN_POLICY_VIOLATION = 0x35, 0x36, 0x37
AAGUID = bytes.fromhex("6e31317666696b6f736f6674776172ff")  # "n11vfikosoftwar" + 0xff


def aes(key, data, encrypt):
    c = Cipher(algorithms.AES(key), modes.CBC(b"\0" * 16))
    op = c.encryptor() if encrypt else c.decryptor()
    return op.update(data) + op.finalize()


def left16_hmac(key, msg):
    return hmac.new(key, msg, hashlib.sha256).digest()[:16]


def cose_public(key, alg):
    n = key.public_key().public_numbers()
    return {1: 2, 3: alg, -1: 1, -2: n.x.to_bytes(32, "big"), -3: n.y.to_bytes(32, "big")}


class Authenticator:
    def __init__(self, state_path, deny_touch):
        self.state_path = state_path
        self.deny_touch = deny_touch
        self.state = {"pin": None, "retries": 8, "creds": {}, "counter": 0}
        if os.path.exists(state_path):
            with open(state_path) as f:
                self.state = json.load(f)
        self.consecutive = 0
        self.new_key_agreement()
        self.pin_token = os.urandom(32)

    def save(self):
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state, f)
        os.replace(tmp, self.state_path)

    def new_key_agreement(self):
        self.agreement = ec.generate_private_key(ec.SECP256R1())

    def shared_secret(self, platform_cose):
        if not isinstance(platform_cose, dict) or -2 not in platform_cose or -3 not in platform_cose:
            raise Status(MISSING_PARAMETER)
        peer = ec.EllipticCurvePublicNumbers(int.from_bytes(platform_cose[-2], "big"),
                                             int.from_bytes(platform_cose[-3], "big"), ec.SECP256R1()).public_key()
        return hashlib.sha256(self.agreement.exchange(ec.ECDH(), peer)).digest()

    # ---- commands ----
    def get_info(self, _):
        return {1: ["FIDO_2_0"], 2: ["hmac-secret"], 3: AAGUID,
                4: {"rk": False, "up": True, "plat": False, "clientPin": self.state["pin"] is not None},
                5: 2048, 6: [1]}

    def check_pin_auth(self, params, msg, auth_key=6, proto_key=7):
        """The pinAuth of a makeCredential/getAssertion: True when verified, False when absent."""
        if auth_key not in params:
            if self.state["pin"] is not None and auth_key == 8:
                raise Status(PIN_REQUIRED)
            return False
        if self.state["pin"] is None:
            raise Status(PIN_NOT_SET)
        if params.get(proto_key) != 1:
            raise Status(PIN_AUTH_INVALID)
        if not hmac.compare_digest(left16_hmac(self.pin_token, msg), params[auth_key]):
            raise Status(PIN_AUTH_INVALID)
        return True

    def touch(self):
        if self.deny_touch:
            raise Status(OPERATION_DENIED)

    def make_credential(self, p):
        for k in (1, 2, 3, 4):
            if k not in p:
                raise Status(MISSING_PARAMETER)
        if not any(c.get("alg") == -7 for c in p[4]):
            raise Status(UNSUPPORTED_ALGORITHM)
        uv = self.check_pin_auth(p, p[1], auth_key=8, proto_key=9)
        self.touch()
        key = ec.generate_private_key(ec.SECP256R1())
        cred_id = os.urandom(48)
        hmac_ext = bool(p.get(6, {}).get("hmac-secret"))
        self.state["creds"][cred_id.hex()] = {
            "rp": p[2]["id"],
            "key": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()).decode(),
            "with_uv": os.urandom(32).hex(), "without_uv": os.urandom(32).hex(),
        }
        self.state["counter"] += 1
        self.save()
        flags = 0x01 | 0x40 | (0x04 if uv else 0) | (0x80 if hmac_ext else 0)
        auth_data = (hashlib.sha256(p[2]["id"].encode()).digest() + bytes([flags])
                     + struct.pack(">I", self.state["counter"]) + AAGUID + struct.pack(">H", len(cred_id)) + cred_id
                     + cbor.encode(cose_public(key, -7)))
        if hmac_ext:
            auth_data += cbor.encode({"hmac-secret": True})
        sig = key.sign(auth_data + p[1], ec.ECDSA(hashes.SHA256()))
        return {1: "packed", 2: auth_data, 3: {"alg": -7, "sig": sig}}

    def get_assertion(self, p):
        for k in (1, 2):
            if k not in p:
                raise Status(MISSING_PARAMETER)
        uv = self.check_pin_auth(p, p[2])
        cred_id, cred = None, None
        for c in p.get(3, []):
            found = self.state["creds"].get(c["id"].hex())
            if found and found["rp"] == p[1]:
                cred_id, cred = c["id"], found
                break
        if cred is None:
            raise Status(NO_CREDENTIALS)
        presence = p.get(5, {}).get("up", True)
        if presence:
            self.touch()
        ext = b""
        hs = p.get(4, {}).get("hmac-secret")
        if hs is not None:
            ss = self.shared_secret(hs.get(1))
            if not hmac.compare_digest(left16_hmac(ss, hs[2]), hs[3]):
                raise Status(PIN_AUTH_INVALID)  # CTAP2_ERR_EXTENSION_FIRST in 2.1; libfido2 reports either
            salt = aes(ss, hs[2], encrypt=False)
            if len(salt) not in (32, 64):
                raise Status(INVALID_CBOR)
            cred_random = bytes.fromhex(cred["with_uv"] if uv else cred["without_uv"])
            out = b"".join(hmac.new(cred_random, salt[i:i + 32], hashlib.sha256).digest() for i in range(0, len(salt), 32))
            ext = cbor.encode({"hmac-secret": aes(ss, out, encrypt=True)})
        self.state["counter"] += 1
        self.save()
        flags = (0x01 if presence else 0) | (0x04 if uv else 0) | (0x80 if ext else 0)
        auth_data = hashlib.sha256(p[1].encode()).digest() + bytes([flags]) + struct.pack(">I", self.state["counter"]) + ext
        key = serialization.load_pem_private_key(cred["key"].encode(), None)
        sig = key.sign(auth_data + p[2], ec.ECDSA(hashes.SHA256()))
        return {1: {"id": cred_id, "type": "public-key"}, 2: auth_data, 3: sig}

    def client_pin(self, p):
        sub = p.get(2)
        if p.get(1) != 1:
            raise Status(MISSING_PARAMETER)
        if sub == 1:
            return {3: self.state["retries"]}
        if sub == 2:
            return {1: cose_public(self.agreement, -25)}
        if sub == 3:  # setPIN
            if self.state["pin"] is not None:
                raise Status(PIN_AUTH_INVALID)
            ss = self.shared_secret(p.get(3))
            if not hmac.compare_digest(left16_hmac(ss, p[5]), p[4]):
                raise Status(PIN_AUTH_INVALID)
            pin = aes(ss, p[5], encrypt=False).rstrip(b"\0")
            if len(pin) < 4:
                raise Status(PIN_POLICY_VIOLATION)
            self.state["pin"] = pin.decode()
            self.state["retries"] = 8
            self.save()
            return {}
        if sub == 5:  # getPinToken
            if self.state["pin"] is None:
                raise Status(PIN_NOT_SET)
            if self.state["retries"] <= 0:
                raise Status(PIN_BLOCKED)
            if self.consecutive >= 3:
                raise Status(PIN_AUTH_BLOCKED)
            ss = self.shared_secret(p.get(3))
            self.state["retries"] -= 1
            self.save()
            given = aes(ss, p[6], encrypt=False)
            if not hmac.compare_digest(given, hashlib.sha256(self.state["pin"].encode()).digest()[:16]):
                self.consecutive += 1
                self.new_key_agreement()
                if self.state["retries"] <= 0:
                    raise Status(PIN_BLOCKED)
                raise Status(PIN_AUTH_BLOCKED if self.consecutive >= 3 else PIN_INVALID)
            self.consecutive = 0
            self.state["retries"] = 8
            self.save()
            self.pin_token = os.urandom(32)
            return {2: aes(ss, self.pin_token, encrypt=True)}
        raise Status(INVALID_COMMAND)

    def cbor_command(self, data):
        handlers = {0x01: self.make_credential, 0x02: self.get_assertion, 0x04: self.get_info, 0x06: self.client_pin}
        if not data or data[0] not in handlers:
            return bytes([INVALID_COMMAND])
        try:
            params = cbor.decode(data[1:]) if len(data) > 1 else {}
        except Exception:
            return bytes([INVALID_CBOR])
        try:
            reply = handlers[data[0]](params)
        except Status as s:
            return bytes([s.code])
        return bytes([OK]) + (cbor.encode(reply) if reply else b"")


class Status(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def read_exact(conn, n):
    buf = b""
    while len(buf) < n:
        got = conn.recv(n - len(buf))
        if not got:
            return None
        buf += got
    return buf


def serve(conn, auth):
    while True:
        head = read_exact(conn, 5)
        if head is None:
            return
        cmd, n = head[0], struct.unpack(">I", head[1:])[0]
        data = read_exact(conn, n) if n else b""
        if data is None:
            return
        if cmd == CMD_INIT:  # nonce (8) || CID (4) || protocol, major, minor, build || capabilities (CBOR)
            reply = data[:8] + b"\x11\x22\x33\x44" + bytes([2, 1, 0, 0, 0x04])
        elif cmd == CMD_CBOR:
            reply = auth.cbor_command(data)
        elif cmd == CMD_CANCEL:
            continue
        else:
            reply = bytes([INVALID_COMMAND])
        conn.sendall(bytes([cmd]) + struct.pack(">I", len(reply)) + reply)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--pin", help="set the authenticator's PIN when the state is new")
    ap.add_argument("--deny-touch", action="store_true", help="refuse user presence (nobody touches the key)")
    args = ap.parse_args()
    auth = Authenticator(args.state, args.deny_touch)
    if args.pin and not os.path.exists(args.state):
        auth.state["pin"] = args.pin
    auth.save()
    if os.path.exists(args.socket):
        os.unlink(args.socket)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(args.socket)
    server.listen(4)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        with conn:
            try:
                serve(conn, auth)
            except (ConnectionError, OSError):
                pass


if __name__ == "__main__":
    sys.exit(main())
