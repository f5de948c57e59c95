//! Fuzz target: mcpscope's TOML reader (Codex's config.toml). Must never panic or hang; an
//! error offset stays inside the input.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err((_, at)) = mcpscope::toml_config::parse_located(data) {
        assert!(at <= data.len(), "offset {at} beyond {}", data.len());
    }
});
