//! scopebox-sentinel: the harmless executable configured as every stdio server's command in
//! the fixture matrix. When executed it first reports to the runner over the abstract datagram
//! socket `@scopebox-sentinel` (`witness::SENTINEL_SOCKET`: the kernel attaches its pid and uid;
//! the runner drains the queue after each case, so a report cannot be taken back), then creates
//! the marker file `layout::SENTINEL_MARKER`, writes its argv and pid into it, and exits 0 (1 if
//! the marker could not be written). Both locations are compile-time constants of the schema
//! crate: nothing in the environment or argv can move them. It must never do anything else: no
//! network, no output, no other file, no dependency beyond std.

use std::io::Write;
use std::os::linux::net::SocketAddrExt;
use std::process::ExitCode;

/// The constants only: no code of the schema crate is linked in.
use scopebox_schema::layout::SENTINEL_MARKER as MARKER;
use scopebox_schema::witness::SENTINEL_SOCKET as SOCKET;

fn main() -> ExitCode {
    report();
    match fire(std::path::Path::new(MARKER)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// One datagram `argc=N` (the count only: the arguments may be canaries). Best effort: with no
/// runner listening (a person trying the binary) there is no one to tell.
fn report() {
    let argc = std::env::args_os().count();
    let Ok(addr) = std::os::unix::net::SocketAddr::from_abstract_name(SOCKET) else {
        return;
    };
    if let Ok(socket) = std::os::unix::net::UnixDatagram::unbound() {
        let _ = socket.send_to_addr(format!("argc={argc}").as_bytes(), &addr);
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
