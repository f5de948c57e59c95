//! What the runner can see of its own confinement from inside: identity, capabilities,
//! no_new_privs, seccomp, network interfaces, whether the root filesystem refuses a write and a
//! tmpfs refuses an exec, the cgroup pids and memory limits (v1, with a v2 fallback), the init
//! process, and the mounts of the fixture roots, /tmp and /evidence. It records; it never
//! judges (the verifier compares these observations with the policy) and never changes the
//! boundary. The probes leave nothing behind.

use crate::case::{remove_marker, run_under};
use crate::watch::Watch;
use crate::Layout;
use scopebox_schema::evidence::{InnerBoundary, MountObservation};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Observes everything `InnerBoundary` holds. Unreadable sources become empty/`None` values
/// rather than errors: a missing observation is itself evidence the verifier will reject.
pub fn observe(layout: &Layout, watch: &mut Watch) -> InnerBoundary {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| status_field(&status, name);
    let mut mount_points: Vec<String> = layout
        .fixture_roots
        .iter()
        .map(|(_, host)| host.to_string_lossy().into_owned())
        .collect();
    mount_points.push(layout.scratch_dir.to_string_lossy().into_owned());
    mount_points.push(layout.evidence_dir.to_string_lossy().into_owned());
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let (memory, memory_swap) = memory_limits(Path::new("/sys/fs/cgroup"));
    InnerBoundary {
        uid: rustix::process::getuid().as_raw(),
        gid: rustix::process::getgid().as_raw(),
        cap_eff: field("CapEff").unwrap_or_default(),
        no_new_privs: field("NoNewPrivs")
            .and_then(|v| v.parse().ok())
            .unwrap_or(u8::MAX),
        seccomp: field("Seccomp")
            .and_then(|v| v.parse().ok())
            .unwrap_or(u8::MAX),
        net_interfaces: net_interfaces(Path::new("/sys/class/net")),
        root_write_errno: root_write_errno(&layout.root_probe),
        tmpfs_exec_errno: tmpfs_exec_errno(layout, watch),
        pids_max: pids_max(Path::new("/sys/fs/cgroup")),
        memory_limit_bytes: memory,
        memory_swap_limit_bytes: memory_swap,
        pid1_cmdline: pid1_cmdline(),
        mounts: mounts(&mountinfo, &mount_points),
        machine: rustix::system::uname()
            .machine()
            .to_string_lossy()
            .into_owned(),
    }
}

/// `Name:\tvalue` from /proc/self/status.
fn status_field(status: &str, name: &str) -> Option<String> {
    status.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k == name).then(|| v.trim().to_string())
    })
}

fn net_interfaces(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// errno of creating a file at `probe` (EROFS = 30 expected); `None` when the write worked
/// (the file is removed again).
fn root_write_errno(probe: &Path) -> Option<i32> {
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(probe)
    {
        Ok(_) => {
            let _ = fs::remove_file(probe);
            None
        }
        Err(e) => Some(e.raw_os_error().unwrap_or(-1)),
    }
}

/// errno of executing a copy of the sentinel placed in the scratch tmpfs (EACCES = 13 expected
/// on a noexec mount); `None` when it ran (its marker is then removed). `Some(-1)` when the
/// probe could not even be placed.
fn tmpfs_exec_errno(layout: &Layout, watch: &mut Watch) -> Option<i32> {
    let probe = layout.scratch_dir.join("scopebox-exec-probe");
    let _ = fs::remove_file(&probe);
    let placed = fs::copy(&layout.sentinel_bin, &probe)
        .and_then(|_| fs::set_permissions(&probe, fs::Permissions::from_mode(0o755)));
    if placed.is_err() {
        let _ = fs::remove_file(&probe);
        return Some(-1);
    }
    let mut cmd = Command::new(&probe);
    cmd.arg("exec-probe").env_clear();
    // In a window of its own, whose record is dropped: the probe is the runner's, and its
    // exec attempt must not be carried into the first control's window.
    let captured = match run_under(watch, cmd, Duration::from_secs(10)) {
        Ok((captured, _)) => captured,
        Err(_) => return Some(-1),
    };
    let result = match captured {
        Ok(_) => {
            remove_marker(layout);
            None
        }
        Err(e) => Some(e.raw_os_error().unwrap_or(-1)),
    };
    let _ = fs::remove_file(&probe);
    result
}

fn read_trimmed(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// cgroup v1 `pids/pids.max`, else v2 `pids.max`.
fn pids_max(cgroup: &Path) -> Option<String> {
    read_trimmed(&cgroup.join("pids/pids.max")).or_else(|| read_trimmed(&cgroup.join("pids.max")))
}

/// (memory, memory+swap) in bytes: v1 `memory.limit_in_bytes` and `memory.memsw.limit_in_bytes`,
/// else v2 `memory.max` and `memory.max + memory.swap.max` ("max" = unlimited = `None`).
fn memory_limits(cgroup: &Path) -> (Option<u64>, Option<u64>) {
    let num = |p: &Path| read_trimmed(p).and_then(|s| s.parse::<u64>().ok());
    let v1 = cgroup.join("memory");
    if v1.join("memory.limit_in_bytes").exists() {
        return (
            num(&v1.join("memory.limit_in_bytes")),
            num(&v1.join("memory.memsw.limit_in_bytes")),
        );
    }
    let memory = num(&cgroup.join("memory.max"));
    let swap = num(&cgroup.join("memory.swap.max"));
    (memory, memory.zip(swap).map(|(m, s)| m + s))
}

fn pid1_cmdline() -> Vec<String> {
    fs::read("/proc/1/cmdline")
        .map(|bytes| split_cmdline(&bytes))
        .unwrap_or_default()
}

fn split_cmdline(bytes: &[u8]) -> Vec<String> {
    bytes
        .strip_suffix(b"\0")
        .unwrap_or(bytes)
        .split(|&b| b == 0)
        .filter(|_| !bytes.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// The topmost mount at each wanted mount point, from /proc/self/mountinfo text.
/// Line format: `id parent maj:min root mountpoint mountopts [optional...] - fstype source superopts`.
fn mounts(mountinfo: &str, wanted: &[String]) -> Vec<MountObservation> {
    let mut found: Vec<MountObservation> = Vec::new();
    for line in mountinfo.lines() {
        let Some((left, right)) = line.trim().split_once(" - ") else {
            continue;
        };
        let left: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        if left.len() < 6 || right.len() < 3 {
            continue;
        }
        let mount_point = unescape_mountinfo(left[4]);
        if !wanted.contains(&mount_point) {
            continue;
        }
        let obs = MountObservation {
            mount_point: mount_point.clone(),
            fs_type: right[0].to_string(),
            options: format!("{},{}", left[5], right[2]),
        };
        // Later lines are mounted over earlier ones at the same point.
        found.retain(|m| m.mount_point != mount_point);
        found.push(obs);
    }
    found.sort_by(|a, b| a.mount_point.cmp(&b.mount_point));
    found
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape_mountinfo(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let digit = |b: u8| u32::from(b - b'0');
            let v = digit(bytes[i + 1]) * 64 + digit(bytes[i + 2]) * 8 + digit(bytes[i + 3]);
            out.push(v as u8);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_read_by_exact_name() {
        let status = "Name:\tx\nCapEff:\t0000000000000000\nCapBnd:\t1\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n";
        assert_eq!(
            status_field(status, "CapEff").as_deref(),
            Some("0000000000000000")
        );
        assert_eq!(status_field(status, "Seccomp").as_deref(), Some("2"));
        assert_eq!(status_field(status, "NoNewPrivs").as_deref(), Some("1"));
        assert_eq!(status_field(status, "CapAmb"), None);
    }

    #[test]
    fn mountinfo_lines_are_parsed_and_the_topmost_wins() {
        let info = "\
 600 500 0:50 / / ro,relatime master:1 - overlay overlay ro,lowerdir=x
 601 600 0:51 / /work rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,size=65536k,uid=1000,gid=1000
 602 600 0:52 / /evidence rw,relatime - ext4 /dev/sda1 rw
 603 600 0:53 / /work rw,relatime - tmpfs tmpfs rw
 604 600 0:54 / /my\\040dir rw - tmpfs tmpfs rw
";
        let wanted = vec![
            "/work".to_string(),
            "/evidence".to_string(),
            "/my dir".to_string(),
            "/tmp".to_string(),
        ];
        let m = mounts(info, &wanted);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].mount_point, "/evidence");
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[1].mount_point, "/my dir");
        assert_eq!(m[2].mount_point, "/work");
        assert_eq!(
            m[2].options, "rw,relatime,rw",
            "the later mount over /work wins"
        );
    }

    #[test]
    fn cmdline_splits_on_nul() {
        assert_eq!(
            split_cmdline(b"/sbin/docker-init\0--\0/scopebox/bin/scopebox-runner\0"),
            ["/sbin/docker-init", "--", "/scopebox/bin/scopebox-runner"]
        );
        assert_eq!(split_cmdline(b""), Vec::<String>::new());
    }

    #[test]
    fn cgroup_v1_and_v2_limits_are_read() {
        let d = tempfile::tempdir().unwrap();
        let v1 = d.path().join("v1");
        fs::create_dir_all(v1.join("pids")).unwrap();
        fs::create_dir_all(v1.join("memory")).unwrap();
        fs::write(v1.join("pids/pids.max"), "256\n").unwrap();
        fs::write(v1.join("memory/memory.limit_in_bytes"), "2147483648\n").unwrap();
        fs::write(
            v1.join("memory/memory.memsw.limit_in_bytes"),
            "2147483648\n",
        )
        .unwrap();
        assert_eq!(pids_max(&v1).as_deref(), Some("256"));
        assert_eq!(memory_limits(&v1), (Some(2147483648), Some(2147483648)));

        let v2 = d.path().join("v2");
        fs::create_dir_all(&v2).unwrap();
        fs::write(v2.join("pids.max"), "max\n").unwrap();
        fs::write(v2.join("memory.max"), "2147483648\n").unwrap();
        fs::write(v2.join("memory.swap.max"), "0\n").unwrap();
        assert_eq!(pids_max(&v2).as_deref(), Some("max"));
        assert_eq!(memory_limits(&v2), (Some(2147483648), Some(2147483648)));
        fs::write(v2.join("memory.swap.max"), "max\n").unwrap();
        assert_eq!(memory_limits(&v2), (Some(2147483648), None));
    }

    #[test]
    fn root_write_probe_reports_errno_or_cleans_up() {
        let d = tempfile::tempdir().unwrap();
        let probe = d.path().join("probe");
        assert_eq!(root_write_errno(&probe), None);
        assert!(!probe.exists(), "a successful probe is removed");
        assert_eq!(
            root_write_errno(&d.path().join("no/such/dir/probe")),
            Some(2)
        );
    }
}
