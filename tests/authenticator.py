"""A software WebAuthn authenticator for the tests that post passkey ceremonies without a
browser: it makes ES256 credentials (or takes an Ed25519 or ES256 key) and answers ``navigator.credentials.create()`` and
``get()`` options as a browser would send them (attestation "none")."""

import hashlib
import json
import secrets
import struct

import cbor2
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url

UP, UV, BE, BS, AT = 0x01, 0x04, 0x08, 0x10, 0x40


class Credential:
    """One credential: its id, key pair, user handle and signature counter."""

    def __init__(self, rp_id, user_handle, credential_id=None, *, key=None, backed_up=False, counter=0):
        self.rp_id = rp_id
        self.user_handle = user_handle
        self.id = credential_id or secrets.token_bytes(16)
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.backed_up = backed_up
        self.counter = counter

    @property
    def b64_id(self):
        return bytes_to_base64url(self.id)

    def _flags(self, user_verified):
        flags = UP | (UV if user_verified else 0)
        return flags | (BE | BS if self.backed_up else 0)

    def _cose_key(self):
        public = self.key.public_key()
        if isinstance(public, ed25519.Ed25519PublicKey):
            raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            return cbor2.dumps({1: 1, 3: -8, -1: 6, -2: raw})
        numbers = public.public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})

    def sign(self, data):
        """ES256 or Ed25519, as the key is."""
        if isinstance(self.key, ed25519.Ed25519PrivateKey):
            return self.key.sign(data)
        return self.key.sign(data, ec.ECDSA(hashes.SHA256()))

    def _rp_hash(self):
        return hashlib.sha256(self.rp_id.encode()).digest()


def _client_data(kind, options, origin):
    return json.dumps(
        {"type": kind, "challenge": options["challenge"], "origin": origin, "crossOrigin": False}
    ).encode()


def create(options, origin, *, credential_id=None, key=None, user_verified=True, backed_up=False):
    """Answer creation ``options`` (the JSON the server sent) with a new credential (or one
    of id ``credential_id`` and private ``key``): ``(credential, answer JSON)``. The
    attestation is "none": nothing proves which authenticator made it."""
    options = json.loads(options) if isinstance(options, str) else options
    credential = Credential(
        options["rp"]["id"], base64url_to_bytes(options["user"]["id"]), credential_id, key=key, backed_up=backed_up
    )
    attested = bytes(16) + struct.pack(">H", len(credential.id)) + credential.id + credential._cose_key()
    auth_data = credential._rp_hash() + bytes([credential._flags(user_verified) | AT]) + struct.pack(">I", 0) + attested
    client_data = _client_data("webauthn.create", options, origin)
    attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
    response = {"attestationObject": bytes_to_base64url(attestation), "transports": ["internal"]}
    return credential, _answer(credential, client_data, response)


def get(credential, options, origin, *, user_verified=True, counter=None, user_handle=True):
    """Answer request ``options`` with ``credential`` (its counter goes up by one, or is
    ``counter``): the answer JSON."""
    options = json.loads(options) if isinstance(options, str) else options
    credential.counter = credential.counter + 1 if counter is None else counter
    auth_data = (
        credential._rp_hash() + bytes([credential._flags(user_verified)]) + struct.pack(">I", credential.counter)
    )
    client_data = _client_data("webauthn.get", options, origin)
    signature = credential.sign(auth_data + hashlib.sha256(client_data).digest())
    response = {
        "authenticatorData": bytes_to_base64url(auth_data),
        "signature": bytes_to_base64url(signature),
        "userHandle": bytes_to_base64url(credential.user_handle) if user_handle else None,
    }
    return _answer(credential, client_data, response)


def _answer(credential, client_data, response):
    """The JSON a browser sends for ``credential``: ``response`` with the client data."""
    answer = {
        "id": credential.b64_id,
        "rawId": credential.b64_id,
        "type": "public-key",
        "response": {"clientDataJSON": bytes_to_base64url(client_data), **response},
        "clientExtensionResults": {},
    }
    return json.dumps(answer)
