//! The adversarial stand-ins: `scopebox-runner hostile <name> SENTINEL`, static code shipped in
//! the image inside the runner itself, each doing what a hostile candidate would
//! (`evidence::ADVERSARIAL_CONTROLS`): execute the sentinel and delete the marker; execute it
//! with a redirected marker environment; double-fork a daemon that executes it after the
//! stand-in exited; execute it through memfd_create + execveat (or, where that syscall is
//! missing, execve of /proc/self/fd/N, as fexecve falls back); print a canary base64-encoded;
//! write a canary into a file in /tmp and delete it. The runner runs each as a control under
//! the kernel witness; the judge must catch every one. They leak only `judge::CONTROL_CANARY`
//! and execute only the sentinel given to them. Never called by anything but those controls.

use scopebox_schema::judge::CONTROL_CANARY;
use scopebox_schema::layout::SENTINEL_MARKER;
use std::ffi::CString;
use std::io::Write;
use std::process::Command;

/// Runs the stand-in `name`; the exit code to end with (0 after a "successful" attack, 2 for an
/// unknown name, 1 when the attack itself could not be carried out).
pub fn main(name: &str, sentinel: &str) -> u8 {
    let done = match name {
        "exec-delete-marker" => exec_delete_marker(sentinel),
        "exec-redirected-marker" => exec_redirected_marker(sentinel),
        "double-fork-daemon" => double_fork_daemon(sentinel),
        "memfd-exec" => memfd_exec(sentinel),
        "base64-canary" => base64_canary(),
        "tmp-file-canary" => tmp_file_canary(),
        _ => {
            eprintln!("scopebox-runner hostile: unknown stand-in {name:?}");
            return 2;
        }
    };
    match done {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("scopebox-runner hostile {name}: {e}");
            1
        }
    }
}

fn exec_delete_marker(sentinel: &str) -> std::io::Result<()> {
    Command::new(sentinel).arg("hostile").status()?;
    match std::fs::remove_file(SENTINEL_MARKER) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

fn exec_redirected_marker(sentinel: &str) -> std::io::Result<()> {
    Command::new(sentinel)
        .arg("hostile")
        .env("SCOPEBOX_SENTINEL_MARKER", "/tmp/scopebox-elsewhere/fired")
        .status()?;
    let _ = std::fs::remove_dir_all("/tmp/scopebox-elsewhere");
    Ok(())
}

fn double_fork_daemon(sentinel: &str) -> std::io::Result<()> {
    let path = CString::new(sentinel).map_err(std::io::Error::other)?;
    let arg = CString::new("daemon").expect("no NUL");
    // SAFETY: single-threaded here; the children only sleep, setsid, fork and exec.
    unsafe {
        let first = libc::fork();
        if first < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if first == 0 {
            libc::setsid();
            if libc::fork() == 0 {
                // The daemon: outlive the stand-in, then execute.
                libc::usleep(300_000);
                let argv = [path.as_ptr(), arg.as_ptr(), std::ptr::null()];
                let envp: [*const libc::c_char; 1] = [std::ptr::null()];
                libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr());
            }
            libc::_exit(0);
        }
        libc::waitpid(first, std::ptr::null_mut(), 0);
    }
    Ok(())
}

fn memfd_exec(sentinel: &str) -> std::io::Result<()> {
    let bytes = std::fs::read(sentinel)?;
    let name = CString::new("scopebox-hostile").expect("no NUL");
    // SAFETY: memfd_create/write/execveat with valid buffers; execveat only returns on failure.
    unsafe {
        let fd = libc::memfd_create(name.as_ptr(), 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut file = <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd);
        file.write_all(&bytes)?;
        let empty = CString::new("").expect("no NUL");
        let arg = CString::new("memfd").expect("no NUL");
        let argv = [arg.as_ptr(), std::ptr::null()];
        let envp: [*const libc::c_char; 1] = [std::ptr::null()];
        libc::syscall(
            libc::SYS_execveat,
            fd,
            empty.as_ptr(),
            argv.as_ptr(),
            envp.as_ptr(),
            libc::AT_EMPTY_PATH,
        );
        // Where execveat does not exist (qemu-user emulates none), fexecve's own fallback:
        // exec the descriptor through /proc.
        let by_proc = CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL");
        libc::execve(by_proc.as_ptr(), argv.as_ptr(), envp.as_ptr());
        std::mem::forget(file);
    }
    Err(std::io::Error::last_os_error())
}

fn base64_canary() -> std::io::Result<()> {
    let leak = base64(CONTROL_CANARY.as_bytes());
    println!("{{\"schemaVersion\":1,\"servers\":[],\"note\":\"{leak}\"}}");
    Ok(())
}

fn tmp_file_canary() -> std::io::Result<()> {
    let path = format!("/tmp/scopebox-hostile-{}", std::process::id());
    std::fs::write(&path, CONTROL_CANARY)?;
    std::fs::remove_file(&path)
}

/// Standard padded base64.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_standard_and_padded() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn an_unknown_stand_in_is_refused() {
        assert_eq!(main("nope", "/bin/true"), 2);
    }
}
