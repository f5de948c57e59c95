//! The runner's side of the two witnesses. The kernel witness: the control socket to the
//! `scopebox-witness` supervisor it runs under (fd 3, made close-on-exec at once), windows
//! opened before and closed after each case and control, and the sweep that finds, records and
//! kills every descendant still alive once the started program exited (the runner is a child
//! subreaper, so a double-forked daemon is reparented to it). The sentinel witness: the
//! abstract datagram socket `@scopebox-sentinel`, bound before anything runs, whose queued
//! reports (with the kernel's sender credentials) are drained at the end of each window — a
//! report sent cannot be taken back. Also how the runner gets under the supervisor in the first
//! place (`enter`). It must never judge; `witness::judge` does.

use crate::procfs;
use crate::supervisor::{self, WindowReport, BEGIN, BEGUN, END, WITNESS_ERROR_ENV, WITNESS_FD_ENV};
use scopebox_schema::witness::{
    SentinelReport, Survivor, WitnessRecord, REPORT_LIMIT, SENTINEL_SOCKET,
};
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// How a run is watched. The container and `run-rebased` always use `Kernel`; `Unwatched`
/// exists for the library's in-process unit tests, which cannot sit under a filter: it writes
/// no witness record, and the adversarial controls cannot be caught, so such a run never passes.
pub enum Watch {
    Kernel(KernelWatch),
    Unwatched,
}

/// The supervisor's control socket and the sentinel socket.
pub struct KernelWatch {
    control: UnixStream,
    sentinel: OwnedFd,
}

/// How the runner process itself was started.
pub enum Entry {
    /// Under the supervisor: watch with this.
    Supervised(KernelWatch),
    /// The supervisor could not install its filter: the reason (the run must be refused).
    Refused(String),
    /// Not yet under a supervisor.
    Bare,
}

fn os_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Reads (and removes) the supervisor's environment; when supervised, makes the control socket
/// close-on-exec, becomes non-dumpable (the supervisor made it a child subreaper) and binds
/// the sentinel socket.
pub fn entry() -> io::Result<Entry> {
    if let Some(reason) = std::env::var_os(WITNESS_ERROR_ENV) {
        std::env::remove_var(WITNESS_ERROR_ENV);
        return Ok(Entry::Refused(reason.to_string_lossy().into_owned()));
    }
    let Some(fd) = std::env::var_os(WITNESS_FD_ENV) else {
        return Ok(Entry::Bare);
    };
    std::env::remove_var(WITNESS_FD_ENV);
    let fd: RawFd = fd
        .to_str()
        .and_then(|s| s.parse().ok())
        .filter(|&fd| fd == supervisor::CONTROL_FD)
        .ok_or_else(|| {
            io::Error::other(format!(
                "{WITNESS_FD_ENV} is not {}",
                supervisor::CONTROL_FD
            ))
        })?;
    // SAFETY: fcntl/prctl on our own fd and process.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) != 0 {
            return Err(os_error("make the witness control socket close-on-exec"));
        }
        if libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 {
            return Err(os_error("prctl(PR_SET_DUMPABLE, 0)"));
        }
        // The supervisor made this process a child subreaper before its exec (the attribute
        // survives exec); natively this confirms it, under qemu-user it is refused (EINVAL)
        // and the supervisor's setting stands.
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
    // SAFETY: the supervisor handed us fd 3 for exactly this.
    let control = unsafe { UnixStream::from_raw_fd(fd) };
    let sentinel = bind_sentinel_socket()?;
    Ok(Entry::Supervised(KernelWatch { control, sentinel }))
}

/// Execs `witness program args...`: the supervisor takes over this process (and its pid).
/// Returns only on failure.
pub fn exec_under(
    witness: &std::path::Path,
    program: &std::path::Path,
    args: &[String],
) -> io::Error {
    use std::os::unix::process::CommandExt;
    std::process::Command::new(witness)
        .arg(program)
        .args(args)
        .exec()
}

/// For `run-rebased` on a host: private user, mount and network namespaces, with a tmpfs over
/// the sentinel's fixed marker directory, so that concurrent host runs (tests) each have their
/// own marker and `@scopebox-sentinel` socket. The uid and gid map to themselves. Must be
/// called single-threaded, before the witness is exec'd (the capabilities this gives in the
/// new user namespace end with that exec).
pub fn isolate_host_run() -> io::Result<()> {
    let marker_dir = std::path::Path::new(scopebox_schema::layout::SENTINEL_MARKER)
        .parent()
        .expect("the marker has a directory");
    match std::fs::create_dir_all(marker_dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("create {}: {e}", marker_dir.display()),
            ))
        }
    }
    // SAFETY: getuid/getgid/unshare/mount with valid C strings.
    unsafe {
        let (uid, gid) = (libc::getuid(), libc::getgid());
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET) != 0 {
            return Err(os_error(
                "unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET)",
            ));
        }
        std::fs::write("/proc/self/setgroups", "deny")?;
        std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
        let root = c"/";
        if libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return Err(os_error("make / a private mount"));
        }
        let dir = std::ffi::CString::new(marker_dir.as_os_str().as_encoded_bytes())
            .map_err(io::Error::other)?;
        let tmpfs = c"tmpfs";
        let options = c"mode=0755";
        if libc::mount(
            tmpfs.as_ptr(),
            dir.as_ptr(),
            tmpfs.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        ) != 0
        {
            return Err(os_error(&format!(
                "mount a tmpfs on {}",
                marker_dir.display()
            )));
        }
    }
    Ok(())
}

/// The sentinel socket: abstract, datagram, credentials passed, non-blocking.
fn bind_sentinel_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket/setsockopt/bind with a filled sockaddr_un.
    unsafe {
        let fd = libc::socket(
            libc::AF_UNIX,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        );
        if fd < 0 {
            return Err(os_error("socket(AF_UNIX, SOCK_DGRAM)"));
        }
        let fd = OwnedFd::from_raw_fd(fd);
        let one: libc::c_int = 1;
        if libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PASSCRED,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as u32,
        ) != 0
        {
            return Err(os_error("setsockopt(SO_PASSCRED)"));
        }
        let (addr, len) = sentinel_address();
        if libc::bind(
            fd.as_raw_fd(),
            (&addr as *const libc::sockaddr_un).cast(),
            len,
        ) != 0
        {
            return Err(os_error(&format!("bind @{SENTINEL_SOCKET}")));
        }
        Ok(fd)
    }
}

/// `\0scopebox-sentinel` as a sockaddr_un and its length.
pub fn sentinel_address() -> (libc::sockaddr_un, libc::socklen_t) {
    // SAFETY: sockaddr_un is plain data.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (i, b) in SENTINEL_SOCKET.bytes().enumerate() {
        addr.sun_path[i + 1] = b as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + 1 + SENTINEL_SOCKET.len();
    (addr, len as libc::socklen_t)
}

impl KernelWatch {
    /// Opens a window: every event from now on belongs to it.
    pub fn begin(&mut self) -> io::Result<()> {
        self.control.write_all(&[BEGIN])?;
        let mut ack = [0u8; 1];
        self.control.read_exact(&mut ack)?;
        if ack[0] != BEGUN {
            return Err(io::Error::other("the witness answered an unknown byte"));
        }
        Ok(())
    }

    /// Closes the window: the supervisor's events, the survivors and the sentinel's reports.
    pub fn end(&mut self, program: &str, survivors: Vec<Survivor>) -> io::Result<WitnessRecord> {
        self.control.write_all(&[END])?;
        let mut len = [0u8; 4];
        self.control.read_exact(&mut len)?;
        let mut json = vec![0u8; u32::from_le_bytes(len) as usize];
        self.control.read_exact(&mut json)?;
        let report: WindowReport = serde_json::from_slice(&json)
            .map_err(|e| io::Error::other(format!("the witness's report: {e}")))?;
        let (sentinel_reports, mut reports_dropped) = self.drain_sentinel();
        let mut survivors = survivors;
        if survivors.len() > REPORT_LIMIT {
            reports_dropped += (survivors.len() - REPORT_LIMIT) as u64;
            survivors.truncate(REPORT_LIMIT);
        }
        Ok(WitnessRecord {
            mechanism: report.mechanism,
            level: report.level,
            witness_machine: report.witness_machine,
            runner_pid: report.runner_pid,
            program: program.to_string(),
            events: report.events,
            events_dropped: report.events_dropped,
            survivors,
            sentinel_reports,
            reports_dropped,
        })
    }

    /// Every datagram queued on the sentinel socket.
    fn drain_sentinel(&mut self) -> (Vec<SentinelReport>, u64) {
        let mut reports = Vec::new();
        let mut dropped = 0;
        while let Some(r) = receive_report(&self.sentinel) {
            if reports.len() < REPORT_LIMIT {
                reports.push(r);
            } else {
                dropped += 1;
            }
        }
        (reports, dropped)
    }
}

/// One queued report with its sender's credentials; `None` when the queue is empty.
fn receive_report(socket: &OwnedFd) -> Option<SentinelReport> {
    let mut buf = [0u8; 256];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: CMSG_SPACE of one ucred.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<libc::ucred>() as u32) } as usize;
    let mut cmsg_buf = vec![0u8; space];
    // SAFETY: msghdr with live buffers; control data parsed with the CMSG macros.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg_buf.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let n = libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT);
        if n < 0 {
            return None;
        }
        let mut report = SentinelReport {
            pid: 0,
            uid: u32::MAX,
            argc: parse_argc(&buf[..n as usize]),
        };
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if !cmsg.is_null()
            && (*cmsg).cmsg_level == libc::SOL_SOCKET
            && (*cmsg).cmsg_type == libc::SCM_CREDENTIALS
        {
            let cred = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::ucred>());
            report.pid = cred.pid;
            report.uid = cred.uid;
        }
        Some(report)
    }
}

/// `argc=N` as the sentinel sends it; anything else counts as u32::MAX (a report all the same).
fn parse_argc(message: &[u8]) -> u32 {
    std::str::from_utf8(message)
        .ok()
        .and_then(|m| m.strip_prefix("argc="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(u32::MAX)
}

/// One process as /proc/<pid>/stat shows it.
#[derive(Debug, Clone)]
struct ProcStat {
    ppid: i32,
    pgid: i32,
    sid: i32,
    state: char,
    comm: String,
}

fn proc_stat(pid: i32) -> Option<ProcStat> {
    parse_stat(&procfs::read_to_string(&format!("{pid}/stat")).ok()?)
}

fn parse_stat(text: &str) -> Option<ProcStat> {
    // comm is parenthesized and may hold anything: the fields start after the last ')'.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let mut rest = text.get(close + 2..)?.split(' ');
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgid = rest.next()?.parse().ok()?;
    let sid = rest.next()?.parse().ok()?;
    Some(ProcStat {
        ppid,
        pgid,
        sid,
        state,
        comm,
    })
}

/// Every process below `ancestor`. Walks `/proc/<pid>/task/<tid>/children` from the ancestor
/// down (complete: once the started program exited, a live descendant is either reparented to
/// the ancestor, a subreaper, or the child of another live descendant), so it reads only the
/// descendants' files; without that file (CONFIG_PROC_CHILDREN off) it scans all of /proc.
fn descendants(ancestor: i32) -> BTreeMap<i32, ProcStat> {
    match descendants_by_children(ancestor) {
        Some(found) => found,
        None => descendants_by_scan(ancestor),
    }
}

fn children_of(pid: i32) -> Option<Vec<i32>> {
    let mut out = Vec::new();
    for task in procfs::list(&format!("{pid}/task")).ok()? {
        let task = task.to_string_lossy();
        let text = procfs::read_to_string(&format!("{pid}/task/{task}/children")).ok()?;
        out.extend(
            text.split_ascii_whitespace()
                .filter_map(|c| c.parse::<i32>().ok()),
        );
    }
    Some(out)
}

fn descendants_by_children(ancestor: i32) -> Option<BTreeMap<i32, ProcStat>> {
    let mut found = BTreeMap::new();
    let mut queue = children_of(ancestor)?;
    while let Some(pid) = queue.pop() {
        if found.len() >= 1 << 16 || found.contains_key(&pid) {
            continue;
        }
        let Some(stat) = proc_stat(pid) else {
            continue; // gone meanwhile
        };
        queue.extend(children_of(pid).unwrap_or_default());
        found.insert(pid, stat);
    }
    Some(found)
}

fn descendants_by_scan(ancestor: i32) -> BTreeMap<i32, ProcStat> {
    let mut all = BTreeMap::new();
    if let Ok(names) = procfs::list("") {
        for name in names {
            if let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) {
                if let Some(stat) = proc_stat(pid) {
                    all.insert(pid, stat);
                }
            }
        }
    }
    let below = |mut pid: i32| {
        for _ in 0..4096 {
            match all.get(&pid) {
                Some(s) if s.ppid == ancestor => return true,
                Some(s) if s.ppid > 0 && s.ppid != pid => pid = s.ppid,
                _ => return false,
            }
        }
        false
    };
    all.iter()
        .filter(|(pid, _)| **pid != ancestor && below(**pid))
        .map(|(pid, s)| (*pid, s.clone()))
        .collect()
}

/// Finds every live descendant of this process, records it (once) and kills it, until none is
/// left; reaps the zombies among its own children. Bounded: a descendant that cannot be
/// killed within the bound is still recorded.
pub fn sweep() -> Vec<Survivor> {
    let me = std::process::id() as i32;
    let mut seen: BTreeMap<i32, Survivor> = BTreeMap::new();
    for _ in 0..2000 {
        let found = descendants(me);
        if found.is_empty() {
            break;
        }
        for (pid, s) in &found {
            if s.state == 'Z' || s.state == 'X' {
                if s.ppid == me {
                    // SAFETY: reaping our own zombie child.
                    unsafe { libc::waitpid(*pid, std::ptr::null_mut(), libc::WNOHANG) };
                }
                continue;
            }
            seen.entry(*pid).or_insert_with(|| Survivor {
                pid: *pid,
                ppid: s.ppid,
                pgid: s.pgid,
                sid: s.sid,
                state: s.state.to_string(),
                comm: s.comm.clone(),
            });
            // SAFETY: kill by pid of a process found below us.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    seen.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argc_messages_parse_and_anything_else_still_counts() {
        assert_eq!(parse_argc(b"argc=3"), 3);
        assert_eq!(parse_argc(b"hello"), u32::MAX);
    }

    #[test]
    fn a_stat_line_with_parentheses_and_spaces_in_comm_parses() {
        let s = parse_stat("42 (a) b (c) S 7 40 41 0 -1 4194560 0 0").unwrap();
        assert_eq!(s.comm, "a) b (c");
        assert_eq!((s.state, s.ppid, s.pgid, s.sid), ('S', 7, 40, 41));
        assert!(parse_stat("42 (x").is_none());
        let me = proc_stat(std::process::id() as i32).unwrap();
        // SAFETY: getppid has no preconditions.
        assert_eq!(me.ppid, unsafe { libc::getppid() });
    }

    #[test]
    fn both_ways_of_finding_descendants_agree() {
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", "sleep 5 & sleep 5; wait"])
            .spawn()
            .unwrap();
        let me = std::process::id() as i32;
        // Wait until the grandchild exists (the shell forked it).
        let mut by_children = BTreeMap::new();
        for _ in 0..500 {
            by_children = descendants_by_children(me).unwrap();
            if by_children.len() >= 3 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let by_scan = descendants_by_scan(me);
        let _ = child.kill();
        let _ = child.wait();
        let pids = |m: &BTreeMap<i32, ProcStat>| m.keys().copied().collect::<Vec<_>>();
        assert!(by_children.contains_key(&(child.id() as i32)));
        assert!(by_children.len() >= 3, "{:?}", pids(&by_children));
        for pid in by_children.keys() {
            assert!(by_scan.contains_key(pid), "{pid}");
        }
    }

    #[test]
    fn the_sentinel_address_is_abstract() {
        let (addr, len) = sentinel_address();
        assert_eq!(addr.sun_path[0], 0);
        assert_eq!(len as usize, 2 + 1 + SENTINEL_SOCKET.len());
    }
}
