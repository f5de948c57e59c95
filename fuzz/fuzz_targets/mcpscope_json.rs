//! Fuzz target: mcpscope's own JSON/JSONC reader under every option set a client profile uses
//! (strict, JSONC, comments only, JSONC without BOM). Must never panic or recurse without
//! bound; a strict parse that succeeds must also succeed as JSONC (JSONC only adds syntax).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpscope::json::{parse, parse_located, Options};

fuzz_target!(|data: &[u8]| {
    let strict = parse(data, &Options::STRICT).is_ok();
    let _ = parse(data, &Options::COMMENTS);
    let _ = parse(data, &Options::JSONC_NO_BOM);
    let jsonc = parse(data, &Options::JSONC).is_ok();
    if strict {
        assert!(jsonc, "JSONC rejected what strict JSON accepts");
    }
    if let Err((_, at)) = parse_located(data, &Options::JSONC) {
        assert!(
            at <= data.len(),
            "error offset {at} beyond the input ({})",
            data.len()
        );
    }
});
