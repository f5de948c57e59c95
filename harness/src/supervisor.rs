//! `scopebox-witness`: the kernel witness's supervisor, a native process of the engine's machine
//! that the runner execs into first thing (`/scopebox/witness/$SCOPEBOX_ENGINE_MACHINE/
//! scopebox-witness RUNNER ARGS...`, so it keeps the container's pid 1, which no process in the
//! container can kill). It forks; the child installs the seccomp filter (`seccomp::install`,
//! host syscall numbers), hands the listener over (SCM_RIGHTS) and execs the runner again —
//! natively, or through binfmt/qemu on an emulated platform, the filter staying on the emulator
//! and everything it starts. The parent reads every notification, records it (syscall, pid,
//! parent, path read from the caller's memory and checked with NOTIF_ID_VALID, argc — never
//! argv contents) and lets the syscall continue.
//!
//! Attribution: the runner holds the other end of a control socket (fd 3, which it makes
//! close-on-exec at once, and it is non-dumpable, so nothing it starts can reach it) and opens
//! (`B`) and closes (`E`) a window around each case and control; at `E` the supervisor drains
//! what is pending and answers with the window's events (`WindowReport`). Events outside any
//! window by a process other than the runner are carried into the next window, so nothing
//! is lost between windows. If the filter cannot be installed, the supervisor execs the runner
//! unsupervised with `SCOPEBOX_WITNESS_ERROR` set, and the runner refuses to run (error.json):
//! never a silent marker-only run. It must never judge, write evidence, or change a syscall's
//! outcome.

use crate::{procfs, seccomp};
use scopebox_schema::witness::{
    WitnessEvent, WitnessLevel, WitnessSyscall, EVENT_LIMIT, MECHANISM_SECCOMP_USER_NOTIFY,
    PATH_LIMIT,
};
use serde::{Deserialize, Serialize};
use std::ffi::{CString, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;

/// Environment the supervised runner finds its control socket's fd number in.
pub const WITNESS_FD_ENV: &str = "SCOPEBOX_WITNESS_FD";
/// Environment the runner gets instead when no filter could be installed: the reason.
pub const WITNESS_ERROR_ENV: &str = "SCOPEBOX_WITNESS_ERROR";
/// The control socket's fd in the runner.
pub const CONTROL_FD: RawFd = 3;
/// Control requests: open a window, close it (answered with a `WindowReport`).
pub const BEGIN: u8 = b'B';
pub const END: u8 = b'E';
pub const BEGUN: u8 = b'k';

/// The supervisor's answer to `END`: what it saw in the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WindowReport {
    pub mechanism: String,
    pub level: WitnessLevel,
    pub witness_machine: String,
    pub runner_pid: i32,
    pub events: Vec<WitnessEvent>,
    pub events_dropped: u64,
}

/// Runs the supervisor for `program args` (`argv[0]` = program); returns the exit code to end
/// with (the runner's). Only returns on the supervised path; the unsupervised fallback execs.
pub fn main(program: &OsString, args: &[OsString]) -> i32 {
    match supervise(program, args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("scopebox-witness: error: {e}");
            3
        }
    }
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::other("argument contains a NUL byte"))
}

fn os_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// The level: beside an emulator when the program is an ELF of another machine.
pub fn level_for(program: &std::path::Path) -> WitnessLevel {
    let mut header = [0u8; 20];
    let machine = std::fs::File::open(program)
        .and_then(|mut f| f.read_exact(&mut header))
        .ok()
        .filter(|()| header.starts_with(b"\x7fELF"))
        .map(|()| u16::from_le_bytes([header[18], header[19]]));
    match machine {
        Some(m) if m != seccomp::ELF_MACHINE => WitnessLevel::BesideEmulator,
        _ => WitnessLevel::Native,
    }
}

fn socketpair(kind: libc::c_int) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            kind | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(os_error("socketpair"));
    }
    // SAFETY: both are fresh descriptors we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn supervise(program: &OsString, args: &[OsString]) -> io::Result<i32> {
    // SAFETY: prctl with constant arguments.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    let level = level_for(std::path::Path::new(program));
    let (control, runner_end) = socketpair(libc::SOCK_STREAM)?;
    let (handover, child_handover) = socketpair(libc::SOCK_DGRAM)?;

    // Everything the child needs, built before fork.
    let path = cstring(program.as_bytes())?;
    let mut argv_c = vec![path.clone()];
    for a in args {
        argv_c.push(cstring(a.as_bytes())?);
    }
    let env_base: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| k != WITNESS_FD_ENV && k != WITNESS_ERROR_ENV)
        .collect();
    let envp_with = |extra: &str| -> io::Result<Vec<CString>> {
        let mut v = Vec::new();
        for (k, val) in &env_base {
            let mut e = k.as_bytes().to_vec();
            e.push(b'=');
            e.extend_from_slice(val.as_bytes());
            v.push(cstring(&e)?);
        }
        v.push(cstring(extra.as_bytes())?);
        Ok(v)
    };
    let supervised_env = envp_with(&format!("{WITNESS_FD_ENV}={CONTROL_FD}"))?;

    // SAFETY: the supervisor is single-threaded here; the child only makes syscalls and
    // uses what was allocated before the fork (plus one error string on failure).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(os_error("fork"));
    }
    if pid == 0 {
        drop(control);
        drop(handover);
        child(runner_end, child_handover, &path, &argv_c, &supervised_env);
    }
    drop(runner_end);
    drop(child_handover);
    let listener = match receive_listener(&handover) {
        Ok(l) => l,
        Err(reason) => {
            let mut status = 0;
            // SAFETY: reaping our own child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            let message = format!(
                "failed to install the kernel witness (seccomp user notification) on {}: {reason}",
                seccomp::MACHINE
            );
            eprintln!("scopebox-witness: error: {message}");
            let env = envp_with(&format!("{WITNESS_ERROR_ENV}={message}"))?;
            exec(&path, &argv_c, &env);
            return Err(os_error("exec the runner unsupervised"));
        }
    };
    let mut state = State {
        listener,
        runner_pid: pid,
        level,
        seq: 0,
        window: None,
        stray: Vec::new(),
        dropped: 0,
    };
    let mut control = UnixStream::from(control);
    state.serve(&mut control)?;
    Ok(wait_for(pid))
}

/// The forked child: fd 3 = control, install the filter, hand the listener over, exec.
fn child(
    runner_end: OwnedFd,
    handover: OwnedFd,
    path: &CString,
    argv: &[CString],
    env: &[CString],
) -> ! {
    // SAFETY: raw descriptor juggling in a fresh child.
    unsafe {
        // The runner must not outlive its supervisor (kept across exec).
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        // The runner is a child subreaper (kept across exec). Set here, natively: qemu-user
        // refuses PR_SET_CHILD_SUBREAPER from an emulated process (EINVAL).
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            libc::_exit(125);
        }
        if runner_end.as_raw_fd() == CONTROL_FD {
            let flags = libc::fcntl(CONTROL_FD, libc::F_GETFD);
            libc::fcntl(CONTROL_FD, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            std::mem::forget(runner_end);
        } else if libc::dup2(runner_end.as_raw_fd(), CONTROL_FD) < 0 {
            libc::_exit(125);
        }
    }
    match seccomp::install() {
        Ok(listener) => {
            if send_fd(&handover, listener.as_raw_fd()).is_err() {
                // SAFETY: leaving the child.
                unsafe { libc::_exit(125) };
            }
            drop(listener);
            drop(handover);
            exec(path, argv, env);
            // SAFETY: leaving the child.
            unsafe { libc::_exit(127) }
        }
        Err(e) => {
            let text = e.to_string();
            // SAFETY: a datagram of our own bytes.
            unsafe {
                libc::send(handover.as_raw_fd(), text.as_ptr().cast(), text.len(), 0);
                libc::_exit(126)
            }
        }
    }
}

fn exec(path: &CString, argv: &[CString], env: &[CString]) {
    let mut argv_p: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_p.push(std::ptr::null());
    let mut env_p: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_p.push(std::ptr::null());
    // SAFETY: NUL-terminated arrays of valid C strings.
    unsafe { libc::execve(path.as_ptr(), argv_p.as_ptr(), env_p.as_ptr()) };
}

fn send_fd(socket: &OwnedFd, fd: RawFd) -> io::Result<()> {
    let mut byte = *b"L";
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: CMSG_SPACE of one int.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut cmsg_buf = vec![0u8; space];
    // SAFETY: msghdr filled with buffers that live through sendmsg.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg_buf.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        if libc::sendmsg(socket.as_raw_fd(), &msg, 0) != 1 {
            return Err(os_error("sendmsg"));
        }
    }
    Ok(())
}

/// The listener, or the child's reason it could not install the filter.
fn receive_listener(socket: &OwnedFd) -> Result<OwnedFd, String> {
    let mut buf = vec![0u8; 1024];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: CMSG_SPACE of one int.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut cmsg_buf = vec![0u8; space];
    // SAFETY: msghdr with live buffers; the control data is parsed with the CMSG macros.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg_buf.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let n = libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n <= 0 {
            return Err("the filter's process ended before handing over its listener".into());
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if !cmsg.is_null()
            && (*cmsg).cmsg_level == libc::SOL_SOCKET
            && (*cmsg).cmsg_type == libc::SCM_RIGHTS
        {
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
            return Ok(OwnedFd::from_raw_fd(fd));
        }
        Err(String::from_utf8_lossy(&buf[..n as usize]).into_owned())
    }
}

/// Waits for the runner; its exit code, or 128 + signal. Every other child (orphans
/// reparented to pid 1) is reaped on the way.
fn wait_for(pid: i32) -> i32 {
    loop {
        let mut status = 0;
        // SAFETY: waiting for any child of ours.
        let got = unsafe { libc::waitpid(-1, &mut status, 0) };
        if got < 0 {
            if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return 3;
        }
        if got == pid {
            if libc::WIFEXITED(status) {
                return libc::WEXITSTATUS(status);
            }
            if libc::WIFSIGNALED(status) {
                return 128 + libc::WTERMSIG(status);
            }
        }
    }
}

struct State {
    listener: OwnedFd,
    runner_pid: i32,
    level: WitnessLevel,
    seq: u64,
    window: Option<Vec<WitnessEvent>>,
    /// Outside any window, by a process other than the runner: handed to the next window.
    stray: Vec<WitnessEvent>,
    dropped: u64,
}

impl State {
    /// Serves until the runner closes the control socket.
    fn serve(&mut self, control: &mut UnixStream) -> io::Result<()> {
        let mut listening = true;
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: control.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: if listening {
                        self.listener.as_raw_fd()
                    } else {
                        -1
                    },
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: two valid pollfds.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            if n < 0 {
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(os_error("poll"));
            }
            if fds[1].revents & libc::POLLIN != 0 {
                self.handle_one();
            } else if fds[1].revents & (libc::POLLHUP | libc::POLLERR) != 0 {
                // No process uses the filter any more.
                listening = false;
            }
            if fds[0].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                let mut request = [0u8; 1];
                match control.read(&mut request) {
                    Ok(0) | Err(_) => return Ok(()),
                    Ok(_) => self.request(request[0], control)?,
                }
            }
        }
    }

    fn request(&mut self, request: u8, control: &mut UnixStream) -> io::Result<()> {
        match request {
            BEGIN => {
                let mut events = std::mem::take(&mut self.stray);
                events.truncate(EVENT_LIMIT);
                // Numbered per window (carried-over events first), so a case's record does
                // not depend on what ran before it: the same bytes in any order or shard.
                for (n, e) in events.iter_mut().enumerate() {
                    e.seq = n as u64 + 1;
                }
                self.seq = events.len() as u64;
                self.window = Some(events);
                control.write_all(&[BEGUN])
            }
            END => {
                self.drain();
                let report = WindowReport {
                    mechanism: MECHANISM_SECCOMP_USER_NOTIFY.into(),
                    level: self.level,
                    witness_machine: seccomp::MACHINE.into(),
                    runner_pid: self.runner_pid,
                    events: self.window.take().unwrap_or_default(),
                    events_dropped: std::mem::take(&mut self.dropped),
                };
                let json = serde_json::to_vec(&report).expect("reports serialize");
                control.write_all(&(json.len() as u32).to_le_bytes())?;
                control.write_all(&json)
            }
            _ => Err(io::Error::other("unknown control request")),
        }
    }

    /// Handles every notification already pending.
    fn drain(&mut self) {
        loop {
            let mut fd = libc::pollfd {
                fd: self.listener.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, no wait.
            let n = unsafe { libc::poll(&mut fd, 1, 0) };
            if n <= 0 || fd.revents & libc::POLLIN == 0 {
                return;
            }
            self.handle_one();
        }
    }

    fn handle_one(&mut self) {
        let l = self.listener.as_raw_fd();
        let Ok(notif) = seccomp::receive(l) else {
            // ENOENT: the caller died or was interrupted before we got to it.
            return;
        };
        let event = self.observe(&notif);
        let valid = seccomp::still_valid(l, notif.id);
        // ENOENT here too means the caller is gone; there is nothing to let proceed.
        let _ = seccomp::continue_syscall(l, notif.id);
        // An invalid id: the caller died or its syscall was interrupted before proceeding (a
        // restarted one notifies again), so what was read describes nothing that happened.
        let Some(event) = event.filter(|_| valid) else {
            return;
        };
        if let Some(window) = &mut self.window {
            if window.len() < EVENT_LIMIT {
                window.push(event);
            } else {
                self.dropped += 1;
            }
        } else if event.pid != self.runner_pid {
            if self.stray.len() < EVENT_LIMIT {
                self.stray.push(event);
            } else {
                self.dropped += 1;
            }
        }
    }

    fn observe(&mut self, notif: &libc::seccomp_notif) -> Option<WitnessEvent> {
        let tid = notif.pid as i32;
        let args = notif.data.args;
        let nr = notif.data.nr as libc::c_long;
        let syscall = syscall_of(nr)?;
        let (tgid, ppid) = proc_ids(tid);
        self.seq += 1;
        let mut e = WitnessEvent {
            seq: self.seq,
            syscall,
            pid: tgid.unwrap_or(tid),
            ppid,
            path: None,
            path_error: None,
            dirfd: None,
            dirfd_target: None,
            argc: None,
            flags: None,
        };
        let (path_arg, argv_arg, dirfd_arg, flags_arg) = match syscall {
            WitnessSyscall::Execve => (Some(0), Some(1), None, None),
            WitnessSyscall::Execveat => (Some(1), Some(2), Some(0), Some(4)),
            WitnessSyscall::Clone => (None, None, None, Some(0)),
            WitnessSyscall::Openat => (Some(1), None, Some(0), Some(2)),
            WitnessSyscall::Open => (Some(0), None, None, Some(1)),
            WitnessSyscall::Creat => (Some(0), None, None, None),
            WitnessSyscall::Fork | WitnessSyscall::Vfork => (None, None, None, None),
        };
        if let Some(i) = flags_arg {
            e.flags = Some(args[i]);
        }
        if let Some(i) = dirfd_arg {
            let fd = args[i] as i32;
            e.dirfd = Some(fd);
            if fd != libc::AT_FDCWD {
                e.dirfd_target = procfs::read_link(&format!("{tid}/fd/{fd}"))
                    .ok()
                    .map(|t| t.to_string_lossy().into_owned());
            }
        }
        if path_arg.is_some() || argv_arg.is_some() {
            match procfs::open(&format!("{tid}/mem")) {
                Ok(mem) => {
                    if let Some(i) = path_arg {
                        match read_cstring(&mem, args[i]) {
                            Ok(p) => e.path = Some(p),
                            Err(err) => e.path_error = Some(err.to_string()),
                        }
                    }
                    // An exec through /proc/self/fd/N (fexecve's fallback): what N is.
                    if let Some(n) = e
                        .path
                        .as_deref()
                        .and_then(|p| p.strip_prefix("/proc/self/fd/"))
                        .and_then(|n| n.parse::<i32>().ok())
                    {
                        e.dirfd_target = procfs::read_link(&format!("{tid}/fd/{n}"))
                            .ok()
                            .map(|t| t.to_string_lossy().into_owned());
                    }
                    if let Some(i) = argv_arg {
                        e.argc = count_pointers(&mem, args[i]);
                    }
                }
                Err(err) => e.path_error = Some(format!("open /proc/{tid}/mem: {err}")),
            }
        }
        Some(e)
    }
}

fn syscall_of(nr: libc::c_long) -> Option<WitnessSyscall> {
    Some(match nr {
        libc::SYS_execve => WitnessSyscall::Execve,
        libc::SYS_execveat => WitnessSyscall::Execveat,
        libc::SYS_clone => WitnessSyscall::Clone,
        libc::SYS_openat => WitnessSyscall::Openat,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_fork => WitnessSyscall::Fork,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_vfork => WitnessSyscall::Vfork,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => WitnessSyscall::Open,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_creat => WitnessSyscall::Creat,
        _ => return None,
    })
}

/// Tgid and PPid of a thread, from `/proc/<tid>/status`.
pub fn proc_ids(tid: i32) -> (Option<i32>, Option<i32>) {
    let Ok(status) = procfs::read_to_string(&format!("{tid}/status")) else {
        return (None, None);
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
    };
    (field("Tgid:"), field("PPid:"))
}

fn pread(mem: &std::fs::File, buf: &mut [u8], addr: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    mem.read_at(buf, addr)
}

/// A NUL-terminated string from the caller's memory, page by page, at most `PATH_LIMIT`.
fn read_cstring(mem: &std::fs::File, addr: u64) -> io::Result<String> {
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < PATH_LIMIT {
        let to_boundary = (PAGE - at % PAGE) as usize;
        let mut chunk = vec![0u8; to_boundary.min(PATH_LIMIT - out.len())];
        let n = pread(mem, &mut chunk, at)?;
        if n == 0 {
            break;
        }
        if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            return Ok(String::from_utf8_lossy(&out).into_owned());
        }
        out.extend_from_slice(&chunk[..n]);
        at += n as u64;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The number of non-null pointers before the terminating null (argv's count).
fn count_pointers(mem: &std::fs::File, addr: u64) -> Option<u32> {
    if addr == 0 {
        return Some(0);
    }
    let mut count = 0u32;
    let mut buf = [0u8; 8 * 64];
    let mut at = addr;
    loop {
        let n = pread(mem, &mut buf, at).ok()?;
        if n < 8 {
            return None;
        }
        for ptr in buf[..n - n % 8].chunks_exact(8) {
            if ptr.iter().all(|&b| b == 0) {
                return Some(count);
            }
            count += 1;
            if count > 1 << 20 {
                return None;
            }
        }
        at += (n - n % 8) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_follows_the_programs_machine() {
        let d = tempfile::tempdir().unwrap();
        let native = std::env::current_exe().unwrap();
        assert_eq!(level_for(&native), WitnessLevel::Native);
        let mut foreign = std::fs::read(&native).unwrap()[..64].to_vec();
        let other: u16 = if seccomp::ELF_MACHINE == 62 { 183 } else { 62 };
        foreign[18..20].copy_from_slice(&other.to_le_bytes());
        let path = d.path().join("foreign");
        std::fs::write(&path, foreign).unwrap();
        assert_eq!(level_for(&path), WitnessLevel::BesideEmulator);
        // Not an ELF (a script): it runs natively through its interpreter.
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        assert_eq!(level_for(&path), WitnessLevel::Native);
    }

    #[test]
    fn strings_and_pointer_arrays_are_read_from_process_memory() {
        let mem = std::fs::File::open("/proc/self/mem").unwrap();
        let text = b"/scopebox/candidate/bin/mcpscope\0tail";
        assert_eq!(
            read_cstring(&mem, text.as_ptr() as u64).unwrap(),
            "/scopebox/candidate/bin/mcpscope"
        );
        let a = CString::new("a").unwrap();
        let ptrs: [*const libc::c_char; 4] = [a.as_ptr(), a.as_ptr(), a.as_ptr(), std::ptr::null()];
        assert_eq!(count_pointers(&mem, ptrs.as_ptr() as u64), Some(3));
        assert_eq!(count_pointers(&mem, 0), Some(0));
        assert!(read_cstring(&mem, 8).is_err(), "unmapped memory");
    }

    #[test]
    fn proc_ids_name_the_thread_group_and_parent() {
        let (tgid, ppid) = proc_ids(std::process::id() as i32);
        assert_eq!(tgid, Some(std::process::id() as i32));
        // SAFETY: getppid has no preconditions.
        assert_eq!(ppid, Some(unsafe { libc::getppid() }));
    }
}
