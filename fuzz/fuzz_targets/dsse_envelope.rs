//! Fuzz target: the DSSE envelope parser and verifier, and the in-toto statement parser. The
//! input is read strictly as an envelope, its payload decoded, its signatures checked against
//! a fixed key (DSSE's test key A); must never panic, and never accept a forged signature.

#![no_main]

use libfuzzer_sys::fuzz_target;
use scopebox_receipts::attestation::Statement;
use scopebox_receipts::dsse::{self, Envelope, IN_TOTO_PAYLOAD_TYPE};
use scopebox_schema::strict_json;

const KEY_A: &str = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n-----END PUBLIC KEY-----\n";

fuzz_target!(|data: &[u8]| {
    let key = dsse::verifying_key_from_pem(KEY_A).expect("key A");
    if let Ok(envelope) = strict_json::from_slice::<Envelope>(data) {
        let _ = dsse::decode_base64(&envelope.payload);
        for s in &envelope.signatures {
            let _ = dsse::decode_base64(&s.sig);
        }
        let _ = dsse::verify(&envelope, &key, IN_TOTO_PAYLOAD_TYPE);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = dsse::decode_base64(text);
        let _ = dsse::verifying_key_from_pem(text);
    }
    let _ = strict_json::from_slice::<Statement>(data);
});
