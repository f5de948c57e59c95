//! scopebox-sentinel: the harmless executable configured as every stdio server's command in
//! the fixture matrix. When executed it creates the marker file (`layout::SENTINEL_MARKER`, or
//! `$SCOPEBOX_SENTINEL_MARKER` when set — host tests only; the matrix cannot set `SCOPEBOX_*`
//! and the runner clears the candidate's environment), writes its argv and pid into it, and
//! exits 0 (1 if the marker could not be written). It must never do anything else: no network,
//! no output, no other file, no dependency beyond std (the marker path is a
//! compile-time constant of the schema crate).

use std::io::Write;
use std::process::ExitCode;

/// The constant only: no code of the schema crate is linked in.
use scopebox_schema::layout::SENTINEL_MARKER as MARKER;

fn main() -> ExitCode {
    let marker = std::env::var_os("SCOPEBOX_SENTINEL_MARKER")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| MARKER.into());
    match fire(&marker) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

fn fire(marker: &std::path::Path) -> std::io::Result<()> {
    if let Some(parent) = marker.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(marker)?;
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // One write(2) per firing: with O_APPEND, sentinels fired at once (a client starting several
    // servers) never interleave their lines.
    let line = format!("pid={} argv={:?}\n", std::process::id(), argv);
    file.write_all(line.as_bytes())
}
