//! DSSE envelopes signed with ed25519: the pre-authentication encoding, the JSON envelope,
//! key generation and PEM handling (PKCS#8 private, SPKI public), signing and verifying.
//! It knows nothing about receipts or in-toto (see `attestation`); it never reads a bundle and
//! never accepts a signature it did not verify over the exact PAE bytes.
//!
//! Key id: lowercase hex SHA-256 of the public key's SPKI DER encoding. It is a hint only, as
//! the DSSE protocol requires: verification never trusts it. It only orders the work: the
//! signatures naming the given key's id are tried first, then those without a key id, then
//! the rest (another tool's key id scheme, e.g. the DSSE test vectors' "A", may label a
//! signature by this very key), so a genuine envelope costs one signature check.
//!
//! Bounded work: every ed25519 check hashes the whole PAE (payload included), so an envelope
//! may carry at most `MAX_SIGNATURES` signatures (more is refused before any is checked), the
//! PAE is built once per envelope, and a signature repeated verbatim is checked once.

use base64::Engine;
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The payload type of our envelopes: an in-toto Statement.
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// The most signatures an envelope may carry. `scopebox sign` writes one; DSSE sets no limit,
/// but each signature costs a hash of the whole payload, so a verifier must bound them.
pub const MAX_SIGNATURES: usize = 16;

/// A DSSE JSON envelope (`envelope.md` of the DSSE specification).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Envelope {
    /// Base64 of the serialized body (we write standard base64 with padding).
    pub payload: String,
    pub payload_type: String,
    pub signatures: Vec<EnvelopeSignature>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvelopeSignature {
    /// Optional, unauthenticated hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyid: Option<String>,
    /// Base64 of the 64-byte ed25519 signature over `pae(payloadType, body)`.
    pub sig: String,
}

/// Everything that can go wrong signing or verifying. Messages fit "failed to …".
#[derive(Debug, thiserror::Error)]
pub enum DsseError {
    #[error("gather randomness for a new key")]
    Random,
    #[error("encode the key as PEM")]
    EncodeKey,
    #[error("parse a PKCS#8 ed25519 private key PEM\nhint: pass the PREFIX.pem written by `scopebox keygen`")]
    PrivateKeyPem,
    #[error("parse an SPKI ed25519 public key PEM\nhint: pass the PREFIX.pub.pem written by `scopebox keygen`")]
    PublicKeyPem,
    #[error("create {path}: it already exists\nhint: choose another --out prefix, or remove the old key pair first")]
    KeyExists { path: PathBuf },
    #[error("write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("decode the envelope: {0}")]
    Malformed(String),
    #[error("accept payload type {got:?}: expected {expected:?}")]
    PayloadType { got: String, expected: String },
    #[error("verify the envelope: no signature verifies over the payload with the given key")]
    NoValidSignature,
    #[error("verify the envelope: it carries {count} signatures, more than the {MAX_SIGNATURES} a verifier checks (`scopebox sign` writes one)")]
    TooManySignatures { count: usize },
}

impl DsseError {
    /// Whether what was given was refused (an existing key pair, a directory that is not there,
    /// a key that does not parse) rather than a step failing on good input.
    pub fn is_refusal(&self) -> bool {
        match self {
            DsseError::KeyExists { .. } | DsseError::PrivateKeyPem | DsseError::PublicKeyPem => {
                true
            }
            DsseError::Write { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
            DsseError::Random
            | DsseError::EncodeKey
            | DsseError::Malformed(_)
            | DsseError::PayloadType { .. }
            | DsseError::NoValidSignature
            | DsseError::TooManySignatures { .. } => false,
        }
    }
}

/// The DSSE pre-authentication encoding:
/// `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, lengths in bytes, ASCII decimal.
pub fn pae(payload_type: &str, body: &[u8]) -> Vec<u8> {
    let type_bytes = payload_type.as_bytes();
    let mut out = Vec::with_capacity(32 + type_bytes.len() + body.len());
    out.extend_from_slice(b"DSSEv1 ");
    out.extend_from_slice(type_bytes.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(type_bytes);
    out.push(b' ');
    out.extend_from_slice(body.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(body);
    out
}

/// Decode base64 in either alphabet (standard or URL-safe), padded or not, as DSSE requires
/// verifiers to accept. Mixed alphabets within one string are refused.
pub fn decode_base64(text: &str) -> Result<Vec<u8>, DsseError> {
    use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
    use base64::engine::DecodePaddingMode;
    let config =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    let standard = GeneralPurpose::new(&base64::alphabet::STANDARD, config);
    let url_safe = GeneralPurpose::new(&base64::alphabet::URL_SAFE, config);
    let has_std = text.contains(['+', '/']);
    let has_url = text.contains(['-', '_']);
    let result = match (has_std, has_url) {
        (true, true) => return Err(DsseError::Malformed("base64 mixes two alphabets".into())),
        (false, true) => url_safe.decode(text),
        _ => standard.decode(text),
    };
    result.map_err(|_| DsseError::Malformed("invalid base64".into()))
}

/// Standard base64 with padding: what we write.
pub fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A fresh ed25519 key pair as (PKCS#8 private PEM, SPKI public PEM).
pub fn generate_keypair_pem() -> Result<(String, String), DsseError> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|_| DsseError::Random)?;
    let key = SigningKey::from_bytes(&seed);
    seed.fill(0);
    let private = key
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|_| DsseError::EncodeKey)?
        .to_string();
    let public = key
        .verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|_| DsseError::EncodeKey)?;
    Ok((private, public))
}

/// Where `write_keypair` put the two halves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPairPaths {
    /// `PREFIX.pem`, PKCS#8, mode 0600.
    pub private: PathBuf,
    /// `PREFIX.pub.pem`, SPKI.
    pub public: PathBuf,
    /// The key id (hex SHA-256 of the SPKI DER).
    pub keyid: String,
}

/// Generate a key pair and write `PREFIX.pem` (mode 0600, created new: an existing file is
/// never overwritten) and `PREFIX.pub.pem`.
pub fn write_keypair(prefix: &Path) -> Result<KeyPairPaths, DsseError> {
    let (private_pem, public_pem) = generate_keypair_pem()?;
    let private = with_suffix(prefix, ".pem");
    let public = with_suffix(prefix, ".pub.pem");
    for path in [&private, &public] {
        if path.symlink_metadata().is_ok() {
            return Err(DsseError::KeyExists { path: path.clone() });
        }
    }
    write_new(&private, private_pem.as_bytes(), 0o600)?;
    write_new(&public, public_pem.as_bytes(), 0o644)?;
    let keyid = keyid(&verifying_key_from_pem(&public_pem)?);
    Ok(KeyPairPaths {
        private,
        public,
        keyid,
    })
}

fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<(), DsseError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let io = |source| DsseError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut file = options.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            DsseError::KeyExists {
                path: path.to_path_buf(),
            }
        } else {
            io(e)
        }
    })?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)
}

pub fn signing_key_from_pem(pem: &str) -> Result<SigningKey, DsseError> {
    SigningKey::from_pkcs8_pem(pem.trim()).map_err(|_| DsseError::PrivateKeyPem)
}

pub fn verifying_key_from_pem(pem: &str) -> Result<VerifyingKey, DsseError> {
    VerifyingKey::from_public_key_pem(pem.trim()).map_err(|_| DsseError::PublicKeyPem)
}

/// Hex SHA-256 of the key's SPKI DER encoding.
pub fn keyid(key: &VerifyingKey) -> String {
    match key.to_public_key_der() {
        Ok(der) => crate::digest::sha256_hex(der.as_bytes()),
        // Encoding a valid 32-byte key cannot fail; fall back to the raw key bytes regardless.
        Err(_) => crate::digest::sha256_hex(key.as_bytes()),
    }
}

/// Sign `body` as `payload_type` and wrap it in an envelope with one signature.
pub fn sign(payload_type: &str, body: &[u8], key: &SigningKey) -> Envelope {
    let signature = key.sign(&pae(payload_type, body));
    Envelope {
        payload: encode_base64(body),
        payload_type: payload_type.to_string(),
        signatures: vec![EnvelopeSignature {
            keyid: Some(keyid(&key.verifying_key())),
            sig: encode_base64(&signature.to_bytes()),
        }],
    }
}

/// Whether one of `signatures` verifies over `message` with `key`, and how many ed25519 checks
/// (each a hash of the whole message) it took: a signature that does not decode to 64 bytes
/// costs none, one already checked (the same bytes, however encoded) costs none again.
fn find_valid_signature(
    signatures: &[EnvelopeSignature],
    key: &VerifyingKey,
    message: &[u8],
) -> (bool, usize) {
    let mut checked: Vec<[u8; 64]> = Vec::new();
    for entry in in_trial_order(signatures, &keyid(key)) {
        let Ok(raw) = decode_base64(&entry.sig) else {
            continue;
        };
        let Ok(bytes) = <[u8; 64]>::try_from(raw.as_slice()) else {
            continue;
        };
        if checked.contains(&bytes) {
            continue;
        }
        checked.push(bytes);
        let signature = Signature::from_bytes(&bytes);
        // verify_strict also refuses small-order keys and malleable (non-canonical) signatures.
        if key.verify_strict(message, &signature).is_ok() {
            return (true, checked.len());
        }
    }
    (false, checked.len())
}

/// Refuse an envelope with more than `MAX_SIGNATURES` signatures.
pub fn check_signature_count(envelope: &Envelope) -> Result<(), DsseError> {
    let count = envelope.signatures.len();
    if count > MAX_SIGNATURES {
        return Err(DsseError::TooManySignatures { count });
    }
    Ok(())
}

/// The signatures in the order they are tried: key id `ours` first, then no key id (absent or
/// empty), then any other key id. Stable within each group.
fn in_trial_order<'a>(
    signatures: &'a [EnvelopeSignature],
    ours: &str,
) -> Vec<&'a EnvelopeSignature> {
    let mut ordered: Vec<&EnvelopeSignature> = signatures.iter().collect();
    ordered.sort_by_key(|s| match s.keyid.as_deref() {
        Some(id) if id.eq_ignore_ascii_case(ours) => 0,
        None | Some("") => 1,
        Some(_) => 2,
    });
    ordered
}

/// Verify an envelope with one trusted key (threshold 1): at least one signature must verify
/// over the PAE of the decoded payload, and the payload type must be `expected_type`.
/// Returns the decoded payload.
///
/// At most `MAX_SIGNATURES` signatures are accepted (more: `TooManySignatures`, before the
/// payload is even decoded); the PAE is built once; each distinct signature is checked at most
/// once, those whose key id names `key` first (see the module's note on key ids).
pub fn verify(
    envelope: &Envelope,
    key: &VerifyingKey,
    expected_type: &str,
) -> Result<Vec<u8>, DsseError> {
    check_signature_count(envelope)?;
    let body = decode_base64(&envelope.payload)?;
    if envelope.signatures.is_empty() {
        return Err(DsseError::Malformed("no signatures".into()));
    }
    let message = pae(&envelope.payload_type, &body);
    let (any_valid, _checked) = find_valid_signature(&envelope.signatures, key, &message);
    if !any_valid {
        return Err(DsseError::NoValidSignature);
    }
    if envelope.payload_type != expected_type {
        return Err(DsseError::PayloadType {
            got: envelope.payload_type.clone(),
            expected: expected_type.to_string(),
        });
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Key "A" of the DSSE test vectors (RFC 8032 test 1).
    const SEED_A: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    const PUBLIC_A: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

    fn key_a() -> SigningKey {
        let seed: [u8; 32] = hex::decode(SEED_A).unwrap().try_into().unwrap();
        SigningKey::from_bytes(&seed)
    }

    #[test]
    fn pae_matches_the_protocol_example() {
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
        // Empty body: "... 0 " with the trailing space.
        assert_eq!(pae("t", b""), b"DSSEv1 1 t 0 ");
        // Lengths count bytes of UTF-8, not characters.
        assert!(pae("ä", b"x").starts_with("DSSEv1 2 ä 1 x".as_bytes()));
    }

    #[test]
    fn signing_with_vector_key_reproduces_the_vector_signature() {
        // DSSE testvectors/vectors.json "single-signature": ed25519 is deterministic, so our
        // signer must produce exactly the published signature.
        let body =
            decode_base64("eyJfdHlwZSI6Imh0dHBzOi8vaW4tdG90by5pby9TdGF0ZW1lbnQvdjEifQ==").unwrap();
        let envelope = sign(IN_TOTO_PAYLOAD_TYPE, &body, &key_a());
        assert_eq!(
            envelope.signatures[0].sig,
            "2WAfaHm5jluo0w+0rk8uVkluELJYWjSmU9x7EUzx+AyteDGJ4/nqyJXfmAUVFIAoQafWm7AxBZNw5M9ixNHiCA=="
        );
        assert_eq!(hex::encode(key_a().verifying_key().as_bytes()), PUBLIC_A);
    }

    #[test]
    fn base64_accepts_both_alphabets_with_or_without_padding() {
        assert_eq!(
            decode_base64("-_-_Pj8=").unwrap(),
            vec![0xfb, 0xff, 0xbf, 0x3e, 0x3f]
        );
        assert_eq!(
            decode_base64("-_-_Pj8").unwrap(),
            vec![0xfb, 0xff, 0xbf, 0x3e, 0x3f]
        );
        assert_eq!(
            decode_base64("+/+/Pj8=").unwrap(),
            vec![0xfb, 0xff, 0xbf, 0x3e, 0x3f]
        );
        assert!(decode_base64("+_").is_err());
        assert!(decode_base64("a$b=").is_err());
    }

    #[test]
    fn generated_keys_round_trip_through_pem_and_verify() {
        let (private, public) = generate_keypair_pem().unwrap();
        assert!(private.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"));
        let key = signing_key_from_pem(&private).unwrap();
        let verifying = verifying_key_from_pem(&public).unwrap();
        assert_eq!(key.verifying_key(), verifying);
        let envelope = sign(IN_TOTO_PAYLOAD_TYPE, b"{}", &key);
        assert_eq!(
            verify(&envelope, &verifying, IN_TOTO_PAYLOAD_TYPE).unwrap(),
            b"{}"
        );
        // A second key pair is a different key and does not verify.
        let (_, other) = generate_keypair_pem().unwrap();
        let other = verifying_key_from_pem(&other).unwrap();
        assert!(matches!(
            verify(&envelope, &other, IN_TOTO_PAYLOAD_TYPE),
            Err(DsseError::NoValidSignature)
        ));
    }

    fn envelope_with(signatures: Vec<EnvelopeSignature>) -> Envelope {
        Envelope {
            payload: encode_base64(b"{}"),
            payload_type: IN_TOTO_PAYLOAD_TYPE.into(),
            signatures,
        }
    }

    #[test]
    fn more_than_max_signatures_is_refused_before_any_is_checked() {
        let envelope = sign(IN_TOTO_PAYLOAD_TYPE, b"{}", &key_a());
        let good = envelope.signatures[0].clone();
        let key = key_a().verifying_key();
        let at_limit = envelope_with(vec![good.clone(); MAX_SIGNATURES]);
        assert!(verify(&at_limit, &key, IN_TOTO_PAYLOAD_TYPE).is_ok());
        let over = envelope_with(vec![good; MAX_SIGNATURES + 1]);
        let error = verify(&over, &key, IN_TOTO_PAYLOAD_TYPE).unwrap_err();
        assert!(
            matches!(error, DsseError::TooManySignatures { count: 17 }),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            "verify the envelope: it carries 17 signatures, more than the 16 a verifier checks (`scopebox sign` writes one)"
        );
    }

    #[test]
    fn a_repeated_signature_is_checked_once_however_it_is_encoded() {
        let key = key_a().verifying_key();
        let message = pae(IN_TOTO_PAYLOAD_TYPE, b"{}");
        // A valid signature over another body: well-formed, never verifies here.
        let wrong = sign(IN_TOTO_PAYLOAD_TYPE, b"[]", &key_a()).signatures[0].clone();
        let raw = decode_base64(&wrong.sig).unwrap();
        let url_safe = EnvelopeSignature {
            keyid: None,
            sig: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&raw),
        };
        let mut signatures = vec![wrong; MAX_SIGNATURES - 1];
        signatures.push(url_safe);
        assert_eq!(
            find_valid_signature(&signatures, &key, &message),
            (false, 1)
        );
    }

    #[test]
    fn the_signature_naming_the_key_is_tried_first_and_others_are_still_tried() {
        let key = key_a().verifying_key();
        let message = pae(IN_TOTO_PAYLOAD_TYPE, b"{}");
        let good = sign(IN_TOTO_PAYLOAD_TYPE, b"{}", &key_a()).signatures[0].clone();
        let other = generate_keypair_pem().unwrap().0;
        let other = signing_key_from_pem(&other).unwrap();
        let mut signatures: Vec<EnvelopeSignature> = (0..MAX_SIGNATURES as u8 - 1)
            .map(|i| sign(IN_TOTO_PAYLOAD_TYPE, &[i], &other).signatures[0].clone())
            .collect();
        signatures.push(good.clone());
        // Ours last in the file, first in the trial: one check.
        assert_eq!(find_valid_signature(&signatures, &key, &message), (true, 1));
        // Labelled under another scheme (the DSSE vectors' "A"), it still verifies, last.
        let last = signatures.len() - 1;
        signatures[last].keyid = Some("A".into());
        assert_eq!(
            find_valid_signature(&signatures, &key, &message),
            (true, MAX_SIGNATURES)
        );
    }

    #[test]
    fn garbage_pem_is_an_error() {
        assert!(matches!(
            signing_key_from_pem("nope"),
            Err(DsseError::PrivateKeyPem)
        ));
        assert!(matches!(
            verifying_key_from_pem(""),
            Err(DsseError::PublicKeyPem)
        ));
        let (private, _) = generate_keypair_pem().unwrap();
        // A private key is not a public key.
        assert!(verifying_key_from_pem(&private).is_err());
    }
}
