#!/usr/bin/env python3
"""An independent DSSE / ed25519 implementation for the interoperability test.

It shares no code with scopebox-receipts: PAE, base64 handling and signatures are written
here from the DSSE protocol text, over Python's `cryptography` package.

  dsse_interop.py verify ENVELOPE PUBLIC_PEM
      Verify a DSSE envelope produced by scopebox with the SPKI public key; print the
      statement's _type and predicateType. Exit 0 when it verifies, 1 when it does not.
  dsse_interop.py resign ENVELOPE_IN ENVELOPE_OUT PUBLIC_PEM_OUT
      Generate a fresh ed25519 key, sign the payload of ENVELOPE_IN with it, and write the
      envelope (URL-safe base64 without padding, to exercise that rule) and the public key.
"""

import base64
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: bytes, body: bytes) -> bytes:
    return b"DSSEv1 %d %s %d %s" % (len(payload_type), payload_type, len(body), body)


def b64decode_any(text: str) -> bytes:
    """Standard or URL-safe alphabet, padded or not (DSSE: verifiers MUST accept either)."""
    text = text.replace("-", "+").replace("_", "/")
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


def verify(envelope_path: str, public_pem_path: str) -> int:
    with open(envelope_path, "rb") as f:
        envelope = json.load(f)
    with open(public_pem_path, "rb") as f:
        public_key = serialization.load_pem_public_key(f.read())
    if envelope.get("payloadType") != PAYLOAD_TYPE:
        print("unexpected payloadType", envelope.get("payloadType"), file=sys.stderr)
        return 1
    body = b64decode_any(envelope["payload"])
    message = pae(envelope["payloadType"].encode("utf-8"), body)
    for signature in envelope.get("signatures", []):
        try:
            public_key.verify(b64decode_any(signature["sig"]), message)
        except (InvalidSignature, ValueError):
            continue
        statement = json.loads(body)
        print(statement["_type"], statement["predicateType"])
        return 0
    print("no signature verifies", file=sys.stderr)
    return 1


def resign(envelope_in: str, envelope_out: str, public_out: str) -> int:
    with open(envelope_in, "rb") as f:
        envelope = json.load(f)
    body = b64decode_any(envelope["payload"])
    key = Ed25519PrivateKey.generate()
    signature = key.sign(pae(PAYLOAD_TYPE.encode("utf-8"), body))
    urlsafe = lambda raw: base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    out = {
        "payload": urlsafe(body),
        "payloadType": PAYLOAD_TYPE,
        "signatures": [{"keyid": "python-cryptography", "sig": urlsafe(signature)}],
    }
    with open(envelope_out, "w") as f:
        json.dump(out, f)
    with open(public_out, "wb") as f:
        f.write(
            key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
    return 0


def main(argv: list) -> int:
    if len(argv) == 4 and argv[1] == "verify":
        return verify(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "resign":
        return resign(argv[2], argv[3], argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
