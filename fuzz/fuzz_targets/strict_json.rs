//! Fuzz target: the strict JSON reader, alone and into every bundle record type. Must never
//! panic or hang, and must agree with itself: `check` accepting means the bytes are one JSON
//! value serde_json reads too.

#![no_main]

use libfuzzer_sys::fuzz_target;
use scopebox_schema::strict_json;

fuzz_target!(|data: &[u8]| {
    let checked = strict_json::check(data);
    if checked.is_ok() {
        assert!(serde_json::from_slice::<serde_json::Value>(data).is_ok());
    }
    let _ = strict_json::from_slice::<scopebox_schema::receipt::Receipt>(data);
    let _ = strict_json::from_slice::<scopebox_schema::matrix::Matrix>(data);
    let _ = strict_json::from_slice::<scopebox_schema::evidence::CaseRecord>(data);
    let _ = strict_json::from_slice::<scopebox_schema::policy::BoundaryPolicy>(data);
});
