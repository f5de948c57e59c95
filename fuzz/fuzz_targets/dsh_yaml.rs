//! Fuzz target: the DSH managed-block finder and the YAML reader behind it, then the row
//! classifier over whatever parses. Must never panic or hang; an error offset stays inside
//! the block.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpscope::profile::dsh::{entry, yaml};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for block in [yaml::managed_block(text).ok().flatten(), Some(text)]
        .into_iter()
        .flatten()
    {
        match yaml::parse_located(block) {
            Ok(doc) => {
                if let Some(items) = doc.as_array() {
                    for item in items {
                        let _ = entry::yaml_row(item, false);
                        let _ = entry::yaml_row(item, true);
                    }
                }
                let _ = entry::yaml_row(&doc, false);
            }
            Err((_, at)) => assert!(at <= block.len(), "offset {at} beyond {}", block.len()),
        }
    }
});
