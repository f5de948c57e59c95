#!/usr/bin/env python3
"""Our DSSE envelopes through securesystemslib (PyPI), as an auditor would check them.

securesystemslib looks a signature up by its `keyid`: a key loaded with our key id rule
(lowercase hex SHA-256 of the public key's SubjectPublicKeyInfo DER, the bytes inside the
.pub.pem) matches our signatures; under any other id no signature is found.

  sslib_interop.py keyid PUBLIC_PEM
      Print the key id of an SPKI PEM public key under our rule.
  sslib_interop.py verify ENVELOPE PUBLIC_PEM
      securesystemslib.dsse.Envelope.verify with that key (threshold 1); print the statement's
      _type and predicateType. Exit 0 when it verifies, 1 when it does not.
  sslib_interop.py sign ENVELOPE_IN ENVELOPE_OUT PUBLIC_PEM_OUT
      Sign ENVELOPE_IN's payload with a fresh key through securesystemslib's CryptoSigner
      (key id by our rule) and write the envelope and the public key.
"""

import hashlib
import json
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import CryptoSigner, SSlibKey


def keyid_of(public_key) -> str:
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()


def load_key(public_pem_path: str) -> SSlibKey:
    with open(public_pem_path, "rb") as f:
        public_key = serialization.load_pem_public_key(f.read())
    return SSlibKey.from_crypto(public_key, keyid=keyid_of(public_key))


def verify(envelope_path: str, public_pem_path: str) -> int:
    with open(envelope_path, "rb") as f:
        envelope = Envelope.from_dict(json.load(f))
    key = load_key(public_pem_path)
    try:
        envelope.verify([key], 1)
    except VerificationError as e:
        print(f"securesystemslib: {e}", file=sys.stderr)
        return 1
    statement = json.loads(envelope.payload)
    print(statement["_type"], statement["predicateType"])
    return 0


def sign(envelope_in: str, envelope_out: str, public_out: str) -> int:
    with open(envelope_in, "rb") as f:
        ours = Envelope.from_dict(json.load(f))
    private_key = Ed25519PrivateKey.generate()
    public_key = private_key.public_key()
    signer = CryptoSigner(
        private_key, SSlibKey.from_crypto(public_key, keyid=keyid_of(public_key))
    )
    theirs = Envelope(payload=ours.payload, payload_type=ours.payload_type, signatures={})
    theirs.sign(signer)
    with open(envelope_out, "w") as f:
        json.dump(theirs.to_dict(), f)
    with open(public_out, "wb") as f:
        f.write(
            public_key.public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
    return 0


def main(argv: list) -> int:
    if len(argv) == 3 and argv[1] == "keyid":
        with open(argv[2], "rb") as f:
            print(keyid_of(serialization.load_pem_public_key(f.read())))
        return 0
    if len(argv) == 4 and argv[1] == "verify":
        return verify(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "sign":
        return sign(argv[2], argv[3], argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
