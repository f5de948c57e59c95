//! The kernel witness's record (`witness.json` beside every case's and control's `record.json`)
//! and the pure rules that judge it. The supervisor (`scopebox-witness`, a native process of
//! the engine's machine that installed a seccomp user-notification filter before the runner's
//! own exec) sees every `execve`/`execveat` and every process creation (`fork`, `vfork`,
//! `clone` without `CLONE_THREAD`; `clone3` is refused with ENOSYS by the filter itself, as
//! Docker's default profile already does, so its flags never need reading from memory) of the
//! runner and everything it starts. The runner asks it for the events of one window (one case
//! or control) over a channel the candidate cannot reach, adds the descendants it found and
//! killed after the candidate exited and the sentinel's socket reports, and writes this record.
//!
//! `judge` is what the runner and the verifier both call: exactly one exec in a window — the
//! program the runner started, executed by a child of the runner — no process created by
//! anyone but the runner, no survivor, no sentinel report, nothing dropped. This module must
//! stay pure: no I/O, no clock, no process.

use serde::{Deserialize, Serialize};

/// File name of the witness record in a case's or control's evidence directory.
pub const WITNESS_FILE: &str = "witness.json";
/// The one mechanism implemented: seccomp user notification.
pub const MECHANISM_SECCOMP_USER_NOTIFY: &str = "seccomp-user-notify";
/// Most events a window keeps; more are counted in `eventsDropped` (and fail the window).
pub const EVENT_LIMIT: usize = 4096;
/// Most survivors and sentinel reports a window keeps; more are counted as dropped.
pub const REPORT_LIMIT: usize = 1024;
/// Most bytes of a path read from a tracee's memory (PATH_MAX).
pub const PATH_LIMIT: usize = 4096;
/// The abstract unix socket (datagram) the runner binds before anything runs and the
/// sentinel reports to (`\0scopebox-sentinel`); fixed at build time, like the marker path.
pub const SENTINEL_SOCKET: &str = "scopebox-sentinel";

/// Where the supervisor ran relative to the platform's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WitnessLevel {
    /// The platform runs natively: the filter is on the runner itself.
    Native,
    /// The platform is emulated (qemu-user through binfmt): the filter, in the host's syscall
    /// numbers, is on the emulator process and everything it starts.
    BesideEmulator,
}

/// The syscalls the filter reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WitnessSyscall {
    Execve,
    Execveat,
    Fork,
    Vfork,
    /// `clone` without `CLONE_THREAD` (a thread is not a process: the filter lets it through).
    Clone,
    /// `open`/`openat`/`creat` with any of O_WRONLY, O_RDWR, O_CREAT, O_TRUNC (the flags are in
    /// a register, so the filter decides without reading memory): the inventory only reads.
    /// `openat2` (flags in memory) and `io_uring_setup` are refused with ENOSYS by the filter.
    Open,
    Openat,
    Creat,
}

impl WitnessSyscall {
    pub fn is_exec(self) -> bool {
        matches!(self, WitnessSyscall::Execve | WitnessSyscall::Execveat)
    }

    pub fn is_process_creation(self) -> bool {
        matches!(
            self,
            WitnessSyscall::Fork | WitnessSyscall::Vfork | WitnessSyscall::Clone
        )
    }

    pub fn is_write_open(self) -> bool {
        matches!(
            self,
            WitnessSyscall::Open | WitnessSyscall::Openat | WitnessSyscall::Creat
        )
    }
}

/// `controls/<name>/witness.json` and `cases/<id>/witness.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WitnessRecord {
    /// `seccomp-user-notify`.
    pub mechanism: String,
    pub level: WitnessLevel,
    /// `uname` machine of the supervisor (the engine's: `x86_64`, `aarch64`).
    pub witness_machine: String,
    /// The runner's pid as the supervisor knows it (its own child): the only process allowed
    /// to create a process in a window, and the parent the one exec must have.
    pub runner_pid: i32,
    /// The program the runner started in this window (`argv[0]` as spawned); the one exec
    /// allowed must name it.
    pub program: String,
    /// Every reported syscall of the window, in the order the supervisor received them.
    pub events: Vec<WitnessEvent>,
    /// Events beyond `EVENT_LIMIT` (only counted).
    pub events_dropped: u64,
    /// Descendants of the runner still alive after the started program exited; each was
    /// killed. Zombies are reaped and not listed.
    pub survivors: Vec<Survivor>,
    /// Every datagram the sentinel socket received during the window.
    pub sentinel_reports: Vec<SentinelReport>,
    /// Survivors and reports beyond `REPORT_LIMIT` (only counted).
    pub reports_dropped: u64,
}

/// One syscall the kernel reported, as the supervisor saw it before letting it proceed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WitnessEvent {
    /// The supervisor's own counter: strictly increasing within the window, from 1 (events
    /// carried over from between windows first), so it does not depend on earlier cases.
    pub seq: u64,
    pub syscall: WitnessSyscall,
    /// The calling thread's process id (tgid) in the container's pid namespace.
    pub pid: i32,
    /// Its parent then (from /proc), `None` when it could not be read.
    pub ppid: Option<i32>,
    /// exec and open: the path argument as read from the caller's memory (lossy UTF-8, at most
    /// `PATH_LIMIT` bytes), `None` when unreadable (then `pathError` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_error: Option<String>,
    /// execveat, openat: the dirfd argument and what it named (`readlink /proc/<pid>/fd/<fd>`, e.g.
    /// `/memfd:x (deleted)`), when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirfd: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirfd_target: Option<String>,
    /// exec: the number of argv entries (never their contents), `None` when unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argc: Option<u32>,
    /// clone, execveat, open, openat: their flags argument.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<u64>,
}

/// A descendant of the runner found alive after the started program exited (and killed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Survivor {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub sid: i32,
    /// `/proc/<pid>/stat` state letter (`R`, `S`, `T`, ...).
    pub state: String,
    /// `/proc/<pid>/comm` (lossy, as the process named itself: not trusted, only shown).
    pub comm: String,
}

/// One report the sentinel sent to `SENTINEL_SOCKET` (the kernel's credentials of the sender,
/// and the argc it claimed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SentinelReport {
    /// Sender pid and uid as the kernel attached them (SCM_CREDENTIALS).
    pub pid: i32,
    pub uid: u32,
    /// The number of arguments the sender said it got (never their contents).
    pub argc: u32,
}

/// Every way a window shows execution beyond the one program the runner started; empty when
/// the witness saw exactly that program executed once by a child of the runner, no other
/// process created, nothing surviving, no sentinel report and nothing dropped.
pub fn judge(record: &WitnessRecord) -> Vec<String> {
    let mut failures = Vec::new();
    if record.mechanism != MECHANISM_SECCOMP_USER_NOTIFY {
        failures.push(format!(
            "witness mechanism {:?} is not {MECHANISM_SECCOMP_USER_NOTIFY}",
            record.mechanism
        ));
    }
    let mut last_seq = None;
    for e in &record.events {
        if last_seq.is_some_and(|s| e.seq <= s) {
            failures.push(format!("witness event {} out of order", e.seq));
        }
        last_seq = Some(e.seq);
    }
    let mut execs = record.events.iter().filter(|e| e.syscall.is_exec());
    match execs.next() {
        None => failures.push(format!(
            "witness saw no exec of {:?}: the window did not cover the program",
            record.program
        )),
        Some(first) => {
            let ok = first.syscall == WitnessSyscall::Execve
                && first.pid != record.runner_pid
                && first.ppid == Some(record.runner_pid)
                && first.path.as_deref() == Some(record.program.as_str());
            if !ok {
                failures.push(format!(
                    "witness: the first exec is not the runner starting {:?}: {}",
                    record.program,
                    describe(first)
                ));
            }
        }
    }
    for extra in execs {
        failures.push(format!("witness: executed {}", describe(extra)));
    }
    for e in record.events.iter().filter(|e| e.pid != record.runner_pid) {
        if e.syscall.is_process_creation() {
            failures.push(format!("witness: process created: {}", describe(e)));
        } else if e.syscall.is_write_open() {
            failures.push(format!("witness: opened for writing: {}", describe(e)));
        }
    }
    if record.events_dropped > 0 {
        failures.push(format!(
            "witness: {} event(s) beyond the limit of {EVENT_LIMIT}",
            record.events_dropped
        ));
    }
    for s in &record.survivors {
        failures.push(format!(
            "witness: process {} ({:?}, parent {}, group {}, session {}) outlived the program and was killed",
            s.pid, s.comm, s.ppid, s.pgid, s.sid
        ));
    }
    for r in &record.sentinel_reports {
        failures.push(format!(
            "sentinel reported execution by pid {} (uid {}, {} argument(s))",
            r.pid, r.uid, r.argc
        ));
    }
    if record.reports_dropped > 0 {
        failures.push(format!(
            "witness: {} survivor(s) or sentinel report(s) beyond the limit of {REPORT_LIMIT}",
            record.reports_dropped
        ));
    }
    failures
}

/// One event in words for a failure: syscall, path (Debug-quoted: it came from the candidate's
/// memory), argc, pid and parent.
pub fn describe(e: &WitnessEvent) -> String {
    let syscall = serde_json::to_value(e.syscall)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut text = syscall;
    if e.syscall.is_exec() || e.syscall.is_write_open() {
        match (&e.path, &e.path_error) {
            (Some(p), _) => text.push_str(&format!(" {p:?}")),
            (None, Some(err)) => text.push_str(&format!(" <path unreadable: {err}>")),
            (None, None) => text.push_str(" <path unreadable>"),
        }
        if let Some(t) = &e.dirfd_target {
            text.push_str(&format!(" (dirfd {:?})", t));
        }
        if let Some(argc) = e.argc {
            text.push_str(&format!(" with {argc} argument(s)"));
        }
    }
    let ppid = e.ppid.map_or_else(|| "?".to_string(), |p| p.to_string());
    text.push_str(&format!(" by pid {} (parent {ppid})", e.pid));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUNNER: i32 = 7;
    const PROGRAM: &str = "/scopebox/candidate/bin/mcpscope";

    fn event(seq: u64, syscall: WitnessSyscall, pid: i32, ppid: i32) -> WitnessEvent {
        WitnessEvent {
            seq,
            syscall,
            pid,
            ppid: Some(ppid),
            path: syscall.is_exec().then(|| PROGRAM.to_string()),
            path_error: None,
            dirfd: None,
            dirfd_target: None,
            argc: syscall.is_exec().then_some(3),
            flags: None,
        }
    }

    fn honest() -> WitnessRecord {
        WitnessRecord {
            mechanism: MECHANISM_SECCOMP_USER_NOTIFY.into(),
            level: WitnessLevel::Native,
            witness_machine: "x86_64".into(),
            runner_pid: RUNNER,
            program: PROGRAM.into(),
            events: vec![
                event(10, WitnessSyscall::Clone, RUNNER, 1),
                event(11, WitnessSyscall::Execve, 20, RUNNER),
            ],
            events_dropped: 0,
            survivors: vec![],
            sentinel_reports: vec![],
            reports_dropped: 0,
        }
    }

    #[test]
    fn the_runner_starting_the_program_once_passes() {
        assert_eq!(judge(&honest()), Vec::<String>::new());
    }

    #[test]
    fn a_second_exec_fails_naming_its_path() {
        let mut r = honest();
        let mut e = event(12, WitnessSyscall::Execve, 20, RUNNER);
        e.path = Some("/scopebox/bin/scopebox-sentinel".into());
        r.events.push(e);
        let f = judge(&r);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].starts_with("witness: executed execve \"/scopebox/bin/scopebox-sentinel\""),
            "{f:?}"
        );
    }

    #[test]
    fn a_fork_by_the_program_fails_but_the_runners_own_does_not() {
        let mut r = honest();
        r.events.push(event(12, WitnessSyscall::Fork, 20, RUNNER));
        let f = judge(&r);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].starts_with("witness: process created: fork by pid 20"));
    }

    #[test]
    fn a_write_open_by_the_program_fails() {
        let mut r = honest();
        let mut e = event(12, WitnessSyscall::Openat, 20, RUNNER);
        e.path = Some("/tmp/leak".into());
        e.flags = Some(0o1101);
        r.events.push(e);
        let f = judge(&r);
        assert_eq!(
            f,
            ["witness: opened for writing: openat \"/tmp/leak\" by pid 20 (parent 7)"]
        );
    }

    #[test]
    fn no_exec_or_a_wrong_first_exec_fails() {
        let mut r = honest();
        r.events.truncate(1);
        assert!(judge(&r)[0].starts_with("witness saw no exec"));

        // The exec of a grandchild reparented to the runner is not the runner's: the path differs.
        let mut r = honest();
        r.events[1].path = Some("/memfd:x".into());
        assert!(judge(&r)[0].starts_with("witness: the first exec is not"));

        let mut r = honest();
        r.events[1].syscall = WitnessSyscall::Execveat;
        assert_eq!(judge(&r).len(), 1);

        let mut r = honest();
        r.events[1].ppid = Some(99);
        assert_eq!(judge(&r).len(), 1);
    }

    #[test]
    fn survivors_reports_drops_and_disorder_fail() {
        let mut r = honest();
        r.survivors.push(Survivor {
            pid: 30,
            ppid: RUNNER,
            pgid: 30,
            sid: 30,
            state: "S".into(),
            comm: "daemon".into(),
        });
        r.sentinel_reports.push(SentinelReport {
            pid: 31,
            uid: 1000,
            argc: 2,
        });
        r.events_dropped = 1;
        r.reports_dropped = 2;
        r.events.swap(0, 1);
        let f = judge(&r);
        assert_eq!(f.len(), 5, "{f:?}");
        assert!(f[0].contains("out of order"));
    }

    #[test]
    fn an_unknown_mechanism_fails() {
        let mut r = honest();
        r.mechanism = "marker-only".into();
        assert_eq!(judge(&r).len(), 1);
    }

    #[test]
    fn records_are_strict_camel_case_json() {
        let json = serde_json::to_value(honest()).unwrap();
        assert_eq!(json["level"], "native");
        assert_eq!(json["events"][1]["syscall"], "execve");
        assert_eq!(json["runnerPid"], RUNNER);
        assert!(json["events"][0].get("path").is_none());
        let mut bad = json.clone();
        bad["extra"] = 1.into();
        assert!(serde_json::from_value::<WitnessRecord>(bad).is_err());
        let back: WitnessRecord = serde_json::from_value(json).unwrap();
        assert_eq!(back, honest());
    }
}
