//! scopebox-hostile: a candidate that attacks the evidence loop instead of taking an inventory.
//! Packed as `bin/mcpscope` with `share/scopebox-hostile/attack` naming one attack, it finds the
//! MCP configs under the fixture roots the way any inventory would, then does what issue 12
//! says a hostile candidate may do:
//!
//! - `exec-delete-marker`: executes every configured command, then deletes the sentinel marker;
//! - `exec-redirected-marker`: executes them with `SCOPEBOX_SENTINEL_MARKER` pointed elsewhere,
//!   and deletes that file too;
//! - `double-fork-daemon`: double-forks a daemon (new session, stdio detached) that executes
//!   a configured command after the candidate has exited;
//! - `memfd-exec`: copies a configured command into a `memfd_create` file and executes it with
//!   `execveat(fd, "", …, AT_EMPTY_PATH)`, so no path on disk is ever executed;
//! - `base64-canary`: prints every config it read, base64-encoded, in an extra JSON field;
//! - `tmp-file-canary`: writes every config it read to a file in /tmp, then deletes it;
//! - `deep-tree`: leaves a directory 3,000 levels deep in /work, deeper than a path can name
//!   from the root (PATH_MAX), for whatever walks and clears the fixture roots;
//! - `lock-roots`: takes every permission off each fixture root it owns (`chmod 000`), so that
//!   whatever walks or clears them next is shut out;
//! - `truncate-journal`: empties the runner's case journal on the evidence volume with
//!   `truncate(2)` and moves it aside with `rename(2)` — by path, opening nothing;
//! - `plant-summary`: makes a FIFO where the runner writes its summary when the cases are done
//!   (`mknod(2)`, which opens nothing), for a write that would wait for a reader for ever;
//! - `flood-output`: prints 64 MiB on stdout and on stderr besides its report, for the size of
//!   each case's evidence;
//! - `plant-tmp`: leaves a directory, a symlink to the evidence volume and a FIFO in /tmp, with
//!   calls that open nothing (`mkdir`, `symlink`, `mknod`), for whatever a later case finds
//!   there;
//! - `touch-configs`: sets every config file's times back to 1970 (`utimensat`) and tags it
//!   with an extended attribute (`setxattr`), which open nothing and leave what a walk records
//!   (kind, mode, size, content) as it was;
//! - `kill-runner`: kills its parent, the runner, with SIGKILL;
//! - `kill-witness`: kills its grandparent, the kernel witness that supervises the runner;
//! - `file-flood`: leaves 5,000 empty files with long names in /work (for the size of what
//!   reports them);
//! - `escape-names`: leaves a file in /work whose name is a terminal escape sequence (set the
//!   window title, clear the screen, turn the text red, reverse what follows), for everything
//!   that reports it.
//!
//! It then prints a report shaped like mcpscope's and exits 0, so nothing but the harness's own
//! checks can fail it. It exists only for the end-to-end tests (`tests/hostile.rs`) and must
//! never be shipped or packed by `scopebox pack`.

use base64::Engine as _;
use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The runner's case journal on the evidence volume (`scopebox_schema::evidence::JOURNAL_FILE`
/// below `layout::EVIDENCE_DIR`).
const JOURNAL: &str = "/evidence/journal.tar";

/// Where the runner writes its summary once the cases are done
/// (`scopebox_schema::evidence::SUMMARY_FILE` below `layout::EVIDENCE_DIR`).
const SUMMARY: &str = "/evidence/summary.json";

/// The fixture roots of the evidence container (`scopebox_schema::layout::FIXTURE_ROOTS`).
const FIXTURE_ROOTS: [&str; 5] = [
    "/work",
    "/home/node",
    "/etc/claude-code",
    "/etc/codex",
    "/etc/gemini-cli",
];
/// The sentinel's marker (`scopebox_schema::layout::SENTINEL_MARKER`).
const SENTINEL_MARKER: &str = "/tmp/scopebox-sentinel/fired";
/// The sentinel itself, executed when no configured command can be read.
const SENTINEL_BIN: &str = "/scopebox/bin/scopebox-sentinel";
/// Where the redirected marker goes.
const REDIRECTED_MARKER: &str = "/tmp/scopebox-hostile-marker";
/// The file the leak goes to before it is deleted.
const LEAK_FILE: &str = "/tmp/scopebox-hostile-leak";
/// The file `escape-names` leaves: its name is what would take over a terminal printed raw.
const ESCAPE_NAME_FILE: &str = "/work/\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mred\u{202e}txt.exe";

/// One configured server command: program and arguments, as the config spells them.
struct Server {
    command: String,
    args: Vec<String>,
}

fn main() {
    let attack = attack_name();
    let (configs, servers) = read_configs();
    let mut extra = String::new();
    match attack.as_str() {
        "exec-delete-marker" => {
            execute_all(&servers, &[]);
            let _ = std::fs::remove_file(SENTINEL_MARKER);
        }
        "exec-redirected-marker" => {
            execute_all(&servers, &[("SCOPEBOX_SENTINEL_MARKER", REDIRECTED_MARKER)]);
            let _ = std::fs::remove_file(REDIRECTED_MARKER);
            let _ = std::fs::remove_file(SENTINEL_MARKER);
        }
        "double-fork-daemon" => double_fork_daemon(&servers),
        "memfd-exec" => memfd_exec(&servers),
        "base64-canary" => extra = base64::engine::general_purpose::STANDARD.encode(&configs),
        "tmp-file-canary" => {
            let _ = std::fs::write(LEAK_FILE, &configs);
            let _ = std::fs::remove_file(LEAK_FILE);
        }
        "deep-tree" => deep_tree(3_000),
        "lock-roots" => {
            for root in FIXTURE_ROOTS {
                let _ = std::fs::set_permissions(
                    root,
                    std::os::unix::fs::PermissionsExt::from_mode(0o000),
                );
            }
        }
        "truncate-journal" => {
            let journal = CString::new(JOURNAL).expect("no NUL");
            // SAFETY: truncate takes a NUL-terminated path; an error is only a return value.
            unsafe { libc::truncate(journal.as_ptr(), 0) };
            let _ = std::fs::rename(JOURNAL, format!("{JOURNAL}.moved"));
        }
        "plant-summary" => {
            let summary = CString::new(SUMMARY).expect("no NUL");
            // SAFETY: mkfifo takes a NUL-terminated path; an error is only a return value.
            unsafe { libc::mkfifo(summary.as_ptr(), 0o600) };
        }
        "flood-output" => {
            let block = vec![b'x'; 1024 * 1024];
            for _ in 0..64 {
                let _ = std::io::stdout().write_all(&block);
                let _ = std::io::stderr().write_all(&block);
            }
        }
        "plant-tmp" => {
            let _ = std::fs::create_dir("/tmp/cache");
            let _ = std::os::unix::fs::symlink(JOURNAL, "/tmp/journal");
            let fifo = CString::new("/tmp/pipe").expect("no NUL");
            // SAFETY: mkfifo takes a NUL-terminated path; an error is only a return value.
            unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) };
        }
        "touch-configs" => {
            let mut files = Vec::new();
            for root in FIXTURE_ROOTS {
                walk(Path::new(root), &mut files);
            }
            let epoch = [libc::timespec {
                tv_sec: 1,
                tv_nsec: 0,
            }; 2];
            for file in files {
                let Ok(path) = CString::new(file.as_os_str().as_bytes()) else {
                    continue;
                };
                // SAFETY: NUL-terminated path and name, a two-element times array and a value
                // of the length given; errors are only return values.
                unsafe {
                    libc::utimensat(libc::AT_FDCWD, path.as_ptr(), epoch.as_ptr(), 0);
                    libc::setxattr(
                        path.as_ptr(),
                        c"user.scopebox".as_ptr(),
                        b"x".as_ptr().cast(),
                        1,
                        0,
                    );
                }
            }
        }
        "kill-runner" => kill(std::os::unix::process::parent_id() as i32),
        "kill-witness" => kill(parent_of(std::os::unix::process::parent_id())),
        "file-flood" => {
            for i in 0..5_000 {
                let _ = std::fs::File::create(format!("/work/{}{i:05}", "f".repeat(200)));
            }
        }
        "escape-names" => {
            let _ = std::fs::write(ESCAPE_NAME_FILE, b"x");
        }
        other => extra = format!("unknown attack {other:?}"),
    }
    let report = serde_json::json!({
        "schemaVersion": 1,
        "servers": [],
        "hostile": attack,
        "configured": servers.len(),
        "extra": extra,
    });
    println!("{report}");
}

/// The attack the archive names beside the binary (`<exe>/../share/scopebox-hostile/attack`).
fn attack_name() -> String {
    let exe = std::env::current_exe().unwrap_or_default();
    let file = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("share/scopebox-hostile/attack"))
        .unwrap_or_default();
    std::fs::read_to_string(file)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Every JSON file under the fixture roots (bytes concatenated) and every `command` with its
/// `args` found in them, at any depth.
fn read_configs() -> (Vec<u8>, Vec<Server>) {
    let mut files = Vec::new();
    for root in FIXTURE_ROOTS {
        walk(Path::new(root), &mut files);
    }
    let mut bytes = Vec::new();
    let mut servers = Vec::new();
    for path in files {
        let Ok(content) = std::fs::read(&path) else {
            continue;
        };
        if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&content) {
            collect_servers(&doc, &mut servers);
            bytes.extend_from_slice(&content);
            bytes.push(b'\n');
        }
    }
    (bytes, servers)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&entry.path(), out);
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
}

fn collect_servers(value: &serde_json::Value, out: &mut Vec<Server>) {
    match value {
        serde_json::Value::Object(map) => {
            if let Some(command) = map.get("command").and_then(|c| c.as_str()) {
                let args = map
                    .get("args")
                    .and_then(|a| a.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(Server {
                    command: command.to_string(),
                    args,
                });
            }
            map.values().for_each(|v| collect_servers(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_servers(v, out)),
        _ => {}
    }
}

/// Runs each server command (its output discarded), killing any that runs past two seconds.
fn execute_all(servers: &[Server], env: &[(&str, &str)]) {
    for server in servers {
        let mut cmd = Command::new(&server.command);
        cmd.args(&server.args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let Ok(mut child) = cmd.spawn() else {
            continue;
        };
        let start = Instant::now();
        while matches!(child.try_wait(), Ok(None)) {
            if start.elapsed() > Duration::from_secs(2) {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The first server command that resolves to a readable file (absolute, or found on PATH),
/// with its argv; the sentinel when none does.
fn executable(servers: &[Server]) -> (PathBuf, Vec<String>) {
    let path_dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for server in servers {
        let candidates: Vec<PathBuf> = if server.command.contains('/') {
            vec![PathBuf::from(&server.command)]
        } else {
            path_dirs.iter().map(|d| d.join(&server.command)).collect()
        };
        if let Some(found) = candidates.into_iter().find(|p| p.is_file()) {
            let mut argv = vec![server.command.clone()];
            argv.extend(server.args.iter().cloned());
            return (found, argv);
        }
    }
    (PathBuf::from(SENTINEL_BIN), vec![SENTINEL_BIN.to_string()])
}

fn c_strings(items: &[String]) -> Vec<CString> {
    items
        .iter()
        .filter_map(|s| CString::new(s.as_bytes()).ok())
        .collect()
}

fn pointers(items: &[CString]) -> Vec<*const libc::c_char> {
    items
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// fork; the child starts a new session and forks again; the grandchild detaches its stdio,
/// outlives the candidate by a second and executes a configured command. The candidate waits
/// only for the middle child, which exits at once.
fn double_fork_daemon(servers: &[Server]) {
    let (program, argv) = executable(servers);
    let Ok(program) = CString::new(program.as_os_str().as_bytes()) else {
        return;
    };
    let argv = c_strings(&argv);
    let argv_ptrs = pointers(&argv);
    // SAFETY: single-threaded process; between fork and exec/_exit the children only make
    // async-signal-safe calls on memory prepared before the fork.
    unsafe {
        let middle = libc::fork();
        if middle == 0 {
            libc::setsid();
            if libc::fork() == 0 {
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
                for fd in 0..3 {
                    libc::dup2(null, fd);
                }
                libc::sleep(1);
                libc::execv(program.as_ptr(), argv_ptrs.as_ptr());
                libc::_exit(127);
            }
            libc::_exit(0);
        }
        if middle > 0 {
            let mut status = 0;
            libc::waitpid(middle, &mut status, 0);
        }
    }
}

/// Copies a configured command into an anonymous memfd and executes that descriptor: the
/// candidate becomes the command, as `execveat(fd, "", argv, envp, AT_EMPTY_PATH)` allows.
/// Returns only when that failed.
fn memfd_exec(servers: &[Server]) {
    let (program, argv) = executable(servers);
    let Ok(bytes) = std::fs::read(&program) else {
        return;
    };
    let argv = c_strings(&argv);
    let argv_ptrs = pointers(&argv);
    let env: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
    let env = c_strings(&env);
    let env_ptrs = pointers(&env);
    // SAFETY: plain syscalls on a descriptor this process owns and on NUL-terminated arrays
    // that outlive the calls.
    unsafe {
        let fd = libc::memfd_create(c"scopebox-hostile".as_ptr(), 0);
        if fd < 0 {
            return;
        }
        let mut written = 0;
        while written < bytes.len() {
            let n = libc::write(fd, bytes[written..].as_ptr().cast(), bytes.len() - written);
            if n <= 0 {
                return;
            }
            written += n as usize;
        }
        libc::syscall(
            libc::SYS_execveat,
            fd,
            c"".as_ptr(),
            argv_ptrs.as_ptr(),
            env_ptrs.as_ptr(),
            libc::AT_EMPTY_PATH,
        );
    }
}

/// SIGKILL to `pid` (a process of the same user: no capability needed); never to a group or
/// to everyone (0, -1) when a pid could not be found.
fn kill(pid: i32) {
    if pid > 1 {
        // SAFETY: kill has no memory preconditions; a wrong pid is only an error.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// The parent of `pid`, from `/proc/<pid>/stat` (readable for any process of the same user).
fn parent_of(pid: u32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // "pid (comm) state ppid …": the comm may hold spaces and parentheses, so after the last ')'.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(1))
        .and_then(|ppid| ppid.parse().ok())
        .unwrap_or(0)
}

/// `levels` nested directories below /work, each made from inside its parent (so no path
/// ever grows past PATH_MAX while it is made).
fn deep_tree(levels: usize) {
    if std::env::set_current_dir("/work").is_err() {
        return;
    }
    for _ in 0..levels {
        if std::fs::create_dir("d").is_err() || std::env::set_current_dir("d").is_err() {
            return;
        }
    }
}
