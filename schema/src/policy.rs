//! The boundary policy (`images/boundary-policy.json`): what every evidence container must be
//! confined by. The orchestrator turns it into a container create request; the verifier checks
//! it against the raw `docker inspect` document and against the runner's inner observations.
//! Checks live here so both sides judge with one set of rules.

use crate::engine::{
    podman_tmpfs_options, EngineName, PODMAN_APPENDED_TMPFS_OPTIONS, PODMAN_IMPLICIT_TMPFS,
    PODMAN_READ_ONLY_TMPFS_OPTIONS,
};
use crate::evidence::{InnerBoundary, MountObservation};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BoundaryPolicy {
    /// Always 1.
    pub schema_version: u32,
    /// "none".
    pub network_mode: String,
    pub read_only_root: bool,
    /// "1000:1000".
    pub user: String,
    /// ["ALL"].
    pub cap_drop: Vec<String>,
    /// "no-new-privileges" must be among the security options.
    pub no_new_privileges: bool,
    pub init: bool,
    pub pids_limit: i64,
    pub memory_bytes: i64,
    /// Memory + swap; equal to `memory_bytes` (no swap).
    pub memory_swap_bytes: i64,
    pub nano_cpus: i64,
    /// Mount point → tmpfs options, e.g. "rw,noexec,nosuid,size=64m,uid=1000,gid=1000".
    pub tmpfs: BTreeMap<String, String>,
    /// Mount point of the one named volume.
    pub evidence_volume: String,
}

impl BoundaryPolicy {
    /// Parse a policy document strictly (unknown fields and duplicate keys refused).
    pub fn from_json(bytes: &[u8]) -> Result<Self, crate::strict_json::StrictJsonError> {
        crate::strict_json::from_slice(bytes)
    }

    /// `user` split into uid and gid; `None` when it is not `"<uid>:<gid>"` with numeric ids.
    pub fn uid_gid(&self) -> Option<(u32, u32)> {
        let (uid, gid) = self.user.split_once(':')?;
        Some((uid.parse().ok()?, gid.parse().ok()?))
    }
}

/// Render a JSON value compactly for a failure message (`null` when absent).
fn show(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "null".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// True when the value is absent, null, or an empty array/object.
fn is_empty(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(o)) => o.is_empty(),
        Some(_) => false,
    }
}

/// Engine inspect documents come from the API as one object; `docker inspect` wraps it in an
/// array. Accept both, nothing else.
fn unwrap_inspect(doc: &Value) -> Option<&serde_json::Map<String, Value>> {
    match doc {
        Value::Object(map) => Some(map),
        Value::Array(items) if items.len() == 1 => items[0].as_object(),
        _ => None,
    }
}

/// Check the raw container inspection (`outer/container-inspect.json`) against the policy.
/// Returns every failed check as `"<check-id>: expected …, got …"`; empty means it meets the
/// policy. Absent fields count as failures, never as defaults, except list-valued fields that
/// must be empty (`Binds`, `Devices`, …), which the engine omits or nulls when empty.
///
/// `engine` is the dialect the inspection is written in (`engine`): Podman lists the
/// capabilities it dropped instead of `ALL`, spells the container user's tmpfs ownership `U`,
/// appends its own tmpfs options and carries the read-only overrides of its implicit tmpfs
/// mounts. Each difference is accepted only in the form that means the same confinement.
pub fn check_applied(
    policy: &BoundaryPolicy,
    container_inspect: &Value,
    engine: EngineName,
) -> Vec<String> {
    let mut failures = Vec::new();
    let Some(doc) = unwrap_inspect(container_inspect) else {
        failures.push("inspect-document: expected one JSON object, got something else".into());
        return failures;
    };
    let Some(host) = doc.get("HostConfig").and_then(Value::as_object) else {
        failures.push("host-config: expected an object, got none".into());
        return failures;
    };
    let mut expect_eq = |id: &str, got: Option<&Value>, want: Value| {
        if got != Some(&want) {
            failures.push(format!(
                "{id}: expected {}, got {}",
                show(Some(&want)),
                show(got)
            ));
        }
    };
    expect_eq(
        "network-mode",
        host.get("NetworkMode"),
        Value::from(policy.network_mode.clone()),
    );
    expect_eq(
        "read-only-root",
        host.get("ReadonlyRootfs"),
        Value::from(policy.read_only_root),
    );
    expect_eq("init", host.get("Init"), Value::from(policy.init));
    expect_eq(
        "pids-limit",
        host.get("PidsLimit"),
        Value::from(policy.pids_limit),
    );
    expect_eq(
        "memory",
        host.get("Memory"),
        Value::from(policy.memory_bytes),
    );
    expect_eq(
        "memory-swap",
        host.get("MemorySwap"),
        Value::from(policy.memory_swap_bytes),
    );
    expect_eq(
        "nano-cpus",
        host.get("NanoCpus"),
        Value::from(policy.nano_cpus),
    );
    expect_eq("privileged", host.get("Privileged"), Value::from(false));
    let config_user = doc.get("Config").and_then(|c| c.get("User"));
    expect_eq("user", config_user, Value::from(policy.user.clone()));

    // Capabilities: every policy drop present, nothing added back.
    let cap_drop: Vec<&str> = host
        .get("CapDrop")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Podman expands a dropped ALL into the list of its default capabilities, so the
    // inspection names each one (`CHOWN`, …) instead; the runner's capEff of 0 is what
    // shows none is left.
    let podman_dropped_all = engine == EngineName::Podman
        && !cap_drop.is_empty()
        && cap_drop.iter().all(|c| {
            !c.is_empty()
                && !c.eq_ignore_ascii_case("ALL")
                && c.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        });
    for cap in &policy.cap_drop {
        let dropped = cap_drop.iter().any(|c| c.eq_ignore_ascii_case(cap))
            || (cap.eq_ignore_ascii_case("ALL") && podman_dropped_all);
        if !dropped {
            failures.push(format!(
                "cap-drop: expected {cap} dropped, got {}",
                show(host.get("CapDrop"))
            ));
        }
    }
    if !is_empty(host.get("CapAdd")) {
        failures.push(format!(
            "cap-add: expected none, got {}",
            show(host.get("CapAdd"))
        ));
    }

    // Security options: no-new-privileges on, no confinement switched off.
    let security_opts: Vec<&str> = host
        .get("SecurityOpt")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if policy.no_new_privileges
        && !security_opts.iter().any(|o| {
            matches!(
                *o,
                "no-new-privileges" | "no-new-privileges:true" | "no-new-privileges=true"
            )
        })
    {
        failures.push(format!(
            "no-new-privileges: expected in security options, got {}",
            show(host.get("SecurityOpt"))
        ));
    }
    for opt in &security_opts {
        let lowered = opt.to_ascii_lowercase();
        if lowered.ends_with("unconfined")
            || lowered.starts_with("no-new-privileges:false")
            || lowered.starts_with("no-new-privileges=false")
        {
            failures.push(format!(
                "security-opt: expected confinement kept, got {opt}"
            ));
        }
    }

    // Namespaces shared with the host.
    for (id, key) in [
        ("pid-mode", "PidMode"),
        ("ipc-mode", "IpcMode"),
        ("uts-mode", "UTSMode"),
        ("userns-mode", "UsernsMode"),
    ] {
        if host.get(key).and_then(Value::as_str) == Some("host") {
            failures.push(format!("{id}: expected not host, got host"));
        }
    }

    // Filesystems: the tmpfs map exactly as the policy says, no binds, no devices.
    let want_tmpfs = serde_json::to_value(&policy.tmpfs).unwrap_or(Value::Null);
    let got_tmpfs = host.get("Tmpfs");
    let tmpfs_matches = match (got_tmpfs, policy.tmpfs.is_empty(), engine) {
        (None | Some(Value::Null), true, _) => true,
        (got, _, EngineName::Docker) => got == Some(&want_tmpfs),
        (got, _, EngineName::Podman) => podman_tmpfs_matches(policy, got),
    };
    if !tmpfs_matches {
        failures.push(format!(
            "tmpfs: expected {}, got {}",
            show(Some(&want_tmpfs)),
            show(got_tmpfs)
        ));
    }
    // Podman shows the named volume as a bind of the volume's name (`<name>:<target>:<opts>`)
    // and no `HostConfig.Mounts`; the document-level `Mounts` (checked below) still has to
    // name one volume at the evidence mount point.
    let podman_volume_bind = engine == EngineName::Podman
        && match host
            .get("Binds")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([one]) => one.as_str().is_some_and(|bind| {
                let mut parts = bind.split(':');
                let (name, target) = (parts.next(), parts.next());
                name.is_some_and(|n| !n.is_empty() && !n.starts_with('/'))
                    && target == Some(policy.evidence_volume.as_str())
            }),
            _ => false,
        };
    for (id, key) in [
        ("binds", "Binds"),
        ("devices", "Devices"),
        ("volumes-from", "VolumesFrom"),
        ("port-bindings", "PortBindings"),
        ("device-requests", "DeviceRequests"),
    ] {
        if key == "Binds" && podman_volume_bind {
            continue;
        }
        if !is_empty(host.get(key)) {
            failures.push(format!("{id}: expected none, got {}", show(host.get(key))));
        }
    }
    if !(podman_volume_bind && is_empty(host.get("Mounts"))) {
        check_mounts(
            "host-mounts",
            host.get("Mounts"),
            "Target",
            &policy.evidence_volume,
            &mut failures,
        );
    }
    check_mounts(
        "mounts",
        doc.get("Mounts"),
        "Destination",
        &policy.evidence_volume,
        &mut failures,
    );

    // Attached networks: only the policy's network mode (for "none": nothing else).
    match doc.get("NetworkSettings").and_then(|n| n.get("Networks")) {
        None | Some(Value::Null) => {}
        Some(Value::Object(networks)) => {
            for name in networks.keys() {
                if name != &policy.network_mode {
                    failures.push(format!(
                        "networks: expected only {}, got {name}",
                        policy.network_mode
                    ));
                }
            }
        }
        Some(other) => failures.push(format!("networks: expected an object, got {other}")),
    }
    failures
}

/// Podman's tmpfs map means the policy's: each policy mount with its options translated
/// (`podman_tmpfs_options`) once Podman's appended options are dropped, and nothing else but
/// the read-only, noexec overrides of Podman's implicit mounts.
fn podman_tmpfs_matches(policy: &BoundaryPolicy, got: Option<&Value>) -> bool {
    let Some(got) = got.and_then(Value::as_object) else {
        return false;
    };
    let split = |text: &str| -> Vec<String> {
        text.split(',')
            .filter(|o| !o.is_empty())
            .map(str::to_string)
            .collect()
    };
    for (target, options) in got {
        let Some(options) = options.as_str() else {
            return false;
        };
        let given: Vec<String> = split(options)
            .into_iter()
            .filter(|o| !PODMAN_APPENDED_TMPFS_OPTIONS.contains(&o.as_str()))
            .collect();
        match policy.tmpfs.get(target) {
            Some(wanted) => {
                // Podman shows the `U` it was asked for resolved to `uid=`/`gid=`.
                let wanted = split(wanted);
                if given != wanted && podman_tmpfs_options(&wanted, &policy.user) != Some(given) {
                    return false;
                }
            }
            None => {
                let read_only_override = PODMAN_IMPLICIT_TMPFS.contains(&target.as_str())
                    && split(PODMAN_READ_ONLY_TMPFS_OPTIONS)
                        .into_iter()
                        .filter(|o| !PODMAN_APPENDED_TMPFS_OPTIONS.contains(&o.as_str()))
                        .eq(given);
                if !read_only_override {
                    return false;
                }
            }
        }
    }
    policy.tmpfs.keys().all(|target| got.contains_key(target))
}

/// Exactly one mount, a volume, at the evidence mount point.
fn check_mounts(
    id: &str,
    mounts: Option<&Value>,
    target_key: &str,
    evidence_volume: &str,
    failures: &mut Vec<String>,
) {
    let Some(list) = mounts.and_then(Value::as_array) else {
        failures.push(format!(
            "{id}: expected one volume at {evidence_volume}, got {}",
            show(mounts)
        ));
        return;
    };
    if list.len() != 1 {
        failures.push(format!(
            "{id}: expected exactly one mount, got {}",
            list.len()
        ));
    }
    for mount in list {
        let kind = mount.get("Type").and_then(Value::as_str).unwrap_or("");
        let target = mount.get(target_key).and_then(Value::as_str).unwrap_or("");
        if kind != "volume" || target != evidence_volume {
            failures.push(format!(
                "{id}: expected volume at {evidence_volume}, got {} at {}",
                if kind.is_empty() { "?" } else { kind },
                if target.is_empty() { "?" } else { target }
            ));
        }
    }
}

/// errno values the inner observations are judged against.
pub const EROFS: i32 = 30;
pub const EACCES: i32 = 13;

/// Check the runner's inner observations (`evidence/boundary.json`) against the policy.
/// Returns every failed check as `"<check-id>: expected …, got …"`; empty means it meets the
/// policy.
pub fn check_observed(policy: &BoundaryPolicy, observed: &InnerBoundary) -> Vec<String> {
    let mut failures = Vec::new();
    match policy.uid_gid() {
        Some((uid, gid)) => {
            if observed.uid != uid {
                failures.push(format!("uid: expected {uid}, got {}", observed.uid));
            }
            if observed.gid != gid {
                failures.push(format!("gid: expected {gid}, got {}", observed.gid));
            }
        }
        None => failures.push(format!(
            "user: expected a numeric uid:gid in the policy, got {}",
            policy.user
        )),
    }
    match u64::from_str_radix(observed.cap_eff.trim(), 16) {
        Ok(0) => {}
        _ => failures.push(format!(
            "cap-eff: expected 0000000000000000, got {}",
            observed.cap_eff
        )),
    }
    if policy.no_new_privileges && observed.no_new_privs != 1 {
        failures.push(format!(
            "no-new-privs: expected 1, got {}",
            observed.no_new_privs
        ));
    }
    if observed.seccomp != 2 {
        failures.push(format!("seccomp: expected 2, got {}", observed.seccomp));
    }
    if policy.network_mode == "none" && observed.net_interfaces != ["lo"] {
        failures.push(format!(
            "net-interfaces: expected [lo], got [{}]",
            observed.net_interfaces.join(",")
        ));
    }
    if policy.read_only_root && observed.root_write_errno != Some(EROFS) {
        failures.push(format!(
            "root-write: expected errno {EROFS}, got {}",
            show_errno(observed.root_write_errno)
        ));
    }
    let tmp_noexec = policy
        .tmpfs
        .get("/tmp")
        .is_some_and(|opts| opts.split(',').any(|o| o == "noexec"));
    if tmp_noexec && observed.tmpfs_exec_errno != Some(EACCES) {
        failures.push(format!(
            "tmpfs-exec: expected errno {EACCES}, got {}",
            show_errno(observed.tmpfs_exec_errno)
        ));
    }
    let want_pids = policy.pids_limit.to_string();
    if observed.pids_max.as_deref() != Some(want_pids.as_str()) {
        failures.push(format!(
            "pids-max: expected {want_pids}, got {}",
            observed.pids_max.as_deref().unwrap_or("none")
        ));
    }
    if observed.memory_limit_bytes.map(|m| m as i128) != Some(policy.memory_bytes as i128) {
        failures.push(format!(
            "memory-limit: expected {}, got {}",
            policy.memory_bytes,
            show_opt(observed.memory_limit_bytes)
        ));
    }
    if observed.memory_swap_limit_bytes.map(|m| m as i128) != Some(policy.memory_swap_bytes as i128)
    {
        failures.push(format!(
            "memory-swap-limit: expected {}, got {}",
            policy.memory_swap_bytes,
            show_opt(observed.memory_swap_limit_bytes)
        ));
    }
    if policy.init {
        let pid1 = observed
            .pid1_cmdline
            .first()
            .map(String::as_str)
            .unwrap_or("");
        let name = pid1.rsplit('/').next().unwrap_or("");
        // Docker's tini (`docker-init`), or Podman's catatonit (`/run/podman-init`).
        if !matches!(name, "docker-init" | "tini" | "tini-static" | "podman-init") {
            failures.push(format!(
                "pid1-init: expected an init (docker-init or podman-init), got {}",
                if pid1.is_empty() { "nothing" } else { pid1 }
            ));
        }
    }
    for (mount_point, options) in &policy.tmpfs {
        check_tmpfs_mount(mount_point, options, &observed.mounts, &mut failures);
    }
    if !observed
        .mounts
        .iter()
        .any(|m| m.mount_point == policy.evidence_volume)
    {
        failures.push(format!(
            "evidence-mount: expected a mount at {}, got none",
            policy.evidence_volume
        ));
    }
    if policy.read_only_root {
        if let Some(root) = observed.mounts.iter().find(|m| m.mount_point == "/") {
            if !root.options.split(',').any(|o| o == "ro") {
                failures.push(format!("root-mount: expected ro, got {}", root.options));
            }
        }
    }
    failures
}

fn show_errno(errno: Option<i32>) -> String {
    errno.map_or_else(|| "success".to_string(), |e| e.to_string())
}

fn show_opt(value: Option<u64>) -> String {
    value.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// A size in tmpfs option syntax ("64m", "65536k", "1g", bytes) as bytes.
fn parse_size(text: &str) -> Option<u64> {
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let mult = match unit.to_ascii_lowercase().as_str() {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// The observed mount at `mount_point` must be a tmpfs carrying the policy's flags, uid, gid and
/// size (sizes compared in bytes: mountinfo shows "65536k" for "64m").
fn check_tmpfs_mount(
    mount_point: &str,
    policy_options: &str,
    mounts: &[MountObservation],
    failures: &mut Vec<String>,
) {
    let Some(mount) = mounts.iter().find(|m| m.mount_point == mount_point) else {
        failures.push(format!(
            "tmpfs-mount: expected tmpfs at {mount_point}, got no mount"
        ));
        return;
    };
    if mount.fs_type != "tmpfs" {
        failures.push(format!(
            "tmpfs-mount: expected tmpfs at {mount_point}, got {}",
            mount.fs_type
        ));
    }
    let seen: Vec<&str> = mount.options.split(',').collect();
    for want in policy_options.split(',') {
        let ok = match want.split_once('=') {
            Some(("size", size)) => {
                let want_bytes = parse_size(size);
                seen.iter().any(|o| {
                    o.strip_prefix("size=")
                        .is_some_and(|s| parse_size(s).is_some() && parse_size(s) == want_bytes)
                })
            }
            Some((key @ ("uid" | "gid" | "mode"), value)) => {
                seen.contains(&format!("{key}={value}").as_str())
            }
            Some(_) => true,
            None => {
                !matches!(want, "noexec" | "nosuid" | "nodev" | "rw" | "ro") || seen.contains(&want)
            }
        };
        if !ok {
            failures.push(format!(
                "tmpfs-options: expected {want} on {mount_point}, got {}",
                mount.options
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Edit<T> = Box<dyn FnOnce(&mut T)>;

    fn policy() -> BoundaryPolicy {
        BoundaryPolicy::from_json(include_bytes!("../../images/boundary-policy.json"))
            .expect("the committed policy parses")
    }

    fn inspect() -> Value {
        serde_json::from_str(include_str!("../tests/fixtures/container-inspect.json"))
            .expect("fixture parses")
    }

    /// What a conforming runner observes (the fixture the verifier's synthetic bundle uses too).
    fn observed() -> InnerBoundary {
        serde_json::from_str(include_str!(
            "../tests/fixtures/conforming-observation.json"
        ))
        .expect("fixture parses")
    }

    #[test]
    fn real_inspect_of_a_policy_container_meets_the_policy() {
        assert_eq!(
            check_applied(&policy(), &inspect(), EngineName::Docker),
            Vec::<String>::new()
        );
        // `docker inspect` wraps the object in an array; that form is accepted too.
        let wrapped = Value::Array(vec![inspect()]);
        assert!(check_applied(&policy(), &wrapped, EngineName::Docker).is_empty());
    }

    fn applied_after(edit: impl FnOnce(&mut Value)) -> Vec<String> {
        let mut doc = inspect();
        edit(&mut doc);
        check_applied(&policy(), &doc, EngineName::Docker)
    }

    fn has(failures: &[String], prefix: &str) -> bool {
        failures.iter().any(|f| f.starts_with(prefix))
    }

    #[test]
    fn each_weakened_inspect_field_is_named() {
        let f = applied_after(|d| d["HostConfig"]["NetworkMode"] = "bridge".into());
        assert_eq!(
            f,
            vec!["network-mode: expected none, got bridge".to_string()]
        );
        let cases: Vec<(&str, Edit<Value>)> = vec![
            (
                "read-only-root",
                Box::new(|d| d["HostConfig"]["ReadonlyRootfs"] = false.into()),
            ),
            (
                "cap-drop",
                Box::new(|d| d["HostConfig"]["CapDrop"] = Value::Null),
            ),
            (
                "cap-add",
                Box::new(|d| d["HostConfig"]["CapAdd"] = serde_json::json!(["NET_ADMIN"])),
            ),
            (
                "no-new-privileges",
                Box::new(|d| d["HostConfig"]["SecurityOpt"] = serde_json::json!([])),
            ),
            (
                "security-opt",
                Box::new(|d| {
                    d["HostConfig"]["SecurityOpt"] =
                        serde_json::json!(["no-new-privileges", "seccomp=unconfined"])
                }),
            ),
            ("init", Box::new(|d| d["HostConfig"]["Init"] = Value::Null)),
            (
                "pids-limit",
                Box::new(|d| d["HostConfig"]["PidsLimit"] = 0.into()),
            ),
            ("memory", Box::new(|d| d["HostConfig"]["Memory"] = 0.into())),
            (
                "memory-swap",
                Box::new(|d| d["HostConfig"]["MemorySwap"] = (-1).into()),
            ),
            (
                "nano-cpus",
                Box::new(|d| d["HostConfig"]["NanoCpus"] = 0.into()),
            ),
            (
                "privileged",
                Box::new(|d| d["HostConfig"]["Privileged"] = true.into()),
            ),
            ("user", Box::new(|d| d["Config"]["User"] = "".into())),
            (
                "tmpfs",
                Box::new(|d| d["HostConfig"]["Tmpfs"]["/tmp"] = "rw,size=64m".into()),
            ),
            (
                "binds",
                Box::new(|d| {
                    d["HostConfig"]["Binds"] =
                        serde_json::json!(["/var/run/docker.sock:/var/run/docker.sock"])
                }),
            ),
            (
                "devices",
                Box::new(|d| {
                    d["HostConfig"]["Devices"] = serde_json::json!([{"PathOnHost": "/dev/kmsg"}])
                }),
            ),
            (
                "pid-mode",
                Box::new(|d| d["HostConfig"]["PidMode"] = "host".into()),
            ),
            (
                "host-mounts",
                Box::new(|d| d["HostConfig"]["Mounts"][0]["Type"] = "bind".into()),
            ),
            (
                "mounts",
                Box::new(|d| {
                    d["Mounts"]
                        .as_array_mut()
                        .unwrap()
                        .push(serde_json::json!({"Type": "bind", "Destination": "/x"}))
                }),
            ),
            (
                "networks",
                Box::new(|d| d["NetworkSettings"]["Networks"]["bridge"] = serde_json::json!({})),
            ),
        ];
        for (id, edit) in cases {
            let f = applied_after(edit);
            assert!(has(&f, &format!("{id}:")), "{id} not flagged: {f:?}");
        }
    }

    fn podman_inspect() -> Value {
        serde_json::from_str(include_str!(
            "../tests/fixtures/podman-container-inspect.json"
        ))
        .expect("fixture parses")
    }

    fn podman_applied_after(edit: impl FnOnce(&mut Value)) -> Vec<String> {
        let mut doc = podman_inspect();
        edit(&mut doc);
        check_applied(&policy(), &doc, EngineName::Podman)
    }

    #[test]
    fn real_podman_inspect_meets_the_policy_in_its_dialect_only() {
        assert_eq!(podman_applied_after(|_| {}), Vec::<String>::new());
        // Read as Docker's, the same document fails: the dialect is what makes it pass.
        let as_docker = check_applied(&policy(), &podman_inspect(), EngineName::Docker);
        for id in ["cap-drop", "tmpfs", "binds", "host-mounts"] {
            assert!(has(&as_docker, id), "{id}: {as_docker:?}");
        }
    }

    #[test]
    fn each_weakened_podman_field_is_named() {
        let cases: Vec<(&str, Edit<Value>)> = vec![
            // Podman's implicit /run left writable (the override missing or weakened).
            (
                "tmpfs",
                Box::new(|d| {
                    d["HostConfig"]["Tmpfs"]["/run"] = "rw,rprivate,nosuid,nodev,tmpcopyup".into()
                }),
            ),
            (
                "tmpfs",
                Box::new(|d| {
                    d["HostConfig"]["Tmpfs"]["/var/tmp"] = "ro,nosuid,nodev,size=64k".into()
                }),
            ),
            // Another writable tmpfs.
            (
                "tmpfs",
                Box::new(|d| d["HostConfig"]["Tmpfs"]["/opt"] = "rw,size=1m".into()),
            ),
            // A fixture root that allows exec.
            (
                "tmpfs",
                Box::new(|d| {
                    d["HostConfig"]["Tmpfs"]["/work"] =
                        "rw,nosuid,size=64m,uid=1000,gid=1000,rprivate,nodev,tmpcopyup".into()
                }),
            ),
            // Owned by root instead of the container user.
            (
                "tmpfs",
                Box::new(|d| {
                    d["HostConfig"]["Tmpfs"]["/tmp"] =
                        "rw,noexec,nosuid,size=64m,uid=0,gid=0,rprivate,nodev,tmpcopyup".into()
                }),
            ),
            // A fixture root missing.
            (
                "tmpfs",
                Box::new(|d| {
                    d["HostConfig"]["Tmpfs"]
                        .as_object_mut()
                        .unwrap()
                        .remove("/etc/codex");
                }),
            ),
            // A host path bound in beside the volume, or instead of it.
            (
                "binds",
                Box::new(|d| {
                    d["HostConfig"]["Binds"]
                        .as_array_mut()
                        .unwrap()
                        .push("/var/run/docker.sock:/s".into())
                }),
            ),
            (
                "binds",
                Box::new(|d| d["HostConfig"]["Binds"][0] = "/etc:/evidence:rw".into()),
            ),
            (
                "cap-add",
                Box::new(|d| d["HostConfig"]["CapAdd"] = serde_json::json!(["SYS_ADMIN"])),
            ),
            // A drop list that is not a list of capability names.
            (
                "cap-drop",
                Box::new(|d| d["HostConfig"]["CapDrop"] = serde_json::json!(["chown", "x y"])),
            ),
            (
                "cap-drop",
                Box::new(|d| d["HostConfig"]["CapDrop"] = serde_json::json!([])),
            ),
            (
                "mounts",
                Box::new(|d| d["Mounts"][0]["Destination"] = "/elsewhere".into()),
            ),
        ];
        for (id, edit) in cases {
            let f = podman_applied_after(edit);
            assert!(has(&f, id), "{id}: {f:?}");
        }
    }

    #[test]
    fn garbage_inspect_is_a_failure_not_a_panic() {
        for doc in [
            Value::Null,
            serde_json::json!([]),
            serde_json::json!({"HostConfig": 3}),
        ] {
            assert!(!check_applied(&policy(), &doc, EngineName::Docker).is_empty());
        }
        // An empty object: every required field is reported missing.
        let f = check_applied(
            &policy(),
            &serde_json::json!({"HostConfig": {}}),
            EngineName::Docker,
        );
        assert!(has(&f, "network-mode: expected none, got null"), "{f:?}");
        assert!(has(&f, "host-mounts:"), "{f:?}");
    }

    #[test]
    fn a_conforming_observation_meets_the_policy() {
        assert_eq!(check_observed(&policy(), &observed()), Vec::<String>::new());
    }

    #[test]
    fn each_weakened_observation_is_named() {
        let cases: Vec<(&str, Edit<InnerBoundary>)> = vec![
            ("uid", Box::new(|o| o.uid = 0)),
            ("gid", Box::new(|o| o.gid = 0)),
            (
                "cap-eff",
                Box::new(|o| o.cap_eff = "00000000a80425fb".into()),
            ),
            ("cap-eff", Box::new(|o| o.cap_eff = "not hex".into())),
            ("no-new-privs", Box::new(|o| o.no_new_privs = 0)),
            ("seccomp", Box::new(|o| o.seccomp = 0)),
            (
                "net-interfaces",
                Box::new(|o| o.net_interfaces.push("eth0".into())),
            ),
            ("root-write", Box::new(|o| o.root_write_errno = None)),
            ("tmpfs-exec", Box::new(|o| o.tmpfs_exec_errno = Some(8))),
            ("pids-max", Box::new(|o| o.pids_max = Some("max".into()))),
            (
                "memory-limit",
                Box::new(|o| o.memory_limit_bytes = Some(u64::MAX)),
            ),
            (
                "memory-swap-limit",
                Box::new(|o| o.memory_swap_limit_bytes = None),
            ),
            (
                "pid1-init",
                Box::new(|o| o.pid1_cmdline = vec!["/scopebox/bin/scopebox-runner".into()]),
            ),
            (
                "tmpfs-mount",
                Box::new(|o| o.mounts.retain(|m| m.mount_point != "/work")),
            ),
            (
                "tmpfs-options",
                Box::new(|o| {
                    o.mounts[3].options = "rw,nosuid,size=65536k,uid=1000,gid=1000".into()
                }),
            ),
            (
                "tmpfs-options",
                Box::new(|o| {
                    o.mounts[3].options = "rw,nosuid,noexec,size=1g,uid=1000,gid=1000".into()
                }),
            ),
            (
                "evidence-mount",
                Box::new(|o| o.mounts.retain(|m| m.mount_point != "/evidence")),
            ),
            (
                "root-mount",
                Box::new(|o| o.mounts[0].options = "rw,relatime".into()),
            ),
        ];
        for (id, edit) in cases {
            let mut o = observed();
            edit(&mut o);
            let f = check_observed(&policy(), &o);
            assert!(has(&f, &format!("{id}:")), "{id} not flagged: {f:?}");
        }
    }

    #[test]
    fn sizes_compare_in_bytes() {
        assert_eq!(parse_size("64m"), Some(64 << 20));
        assert_eq!(parse_size("65536k"), Some(64 << 20));
        assert_eq!(parse_size("12"), Some(12));
        assert_eq!(parse_size("3x"), None);
        assert_eq!(parse_size("99999999999999999999g"), None);
    }
}
