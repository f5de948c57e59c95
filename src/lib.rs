//! The scopebox orchestrator: packs `mcpscope`, generates a content-addressed image, runs the
//! fixture matrix in a locked-down container through the Docker Engine API and writes a receipt
//! bundle. Everything the verifier checks is defined in `scopebox-schema` (formats, judge) and
//! `scopebox-receipts` (verification); this crate only
//! produces it, and must never judge a case or the boundary with rules of its own.

/// `eprintln!` that never panics. The orchestrator's messages go to a stderr that may be
/// closed (a pipe into `head`, a terminal gone with its SIGHUP) or full, and a message that
/// cannot be written must not end a run before its cleanup, its exit code and its `--json`
/// answer (`eprintln!` panics then).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod boundary;
pub mod bundle_file;
pub mod cli;
pub mod engine;
pub mod evidence;
pub mod exit;
pub mod image;
pub mod junit;
pub mod native;
pub mod pack;
pub mod progress;
pub mod provenance;
pub mod prune;
pub mod receipt;
pub mod run;
pub mod sandbox;
pub mod shipped;
pub mod toolchain;
