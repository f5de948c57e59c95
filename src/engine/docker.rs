//! The engine over bollard, talking API 1.41 (what Debian's Docker 20.10 speaks; newer engines
//! and Podman's Docker-compatible service accept it too) to `DOCKER_HOST` or the local socket.
//! It translates a `Sandbox` into the create request of the engine it found (`create_body`:
//! Podman's dialect differs in tmpfs ownership and its implicit tmpfs mounts). Bollard's own request timeout is set far
//! beyond any deadline: deadlines belong to `run` (`tokio::time::timeout`). Inspections are
//! fetched with a plain HTTP/1.0 GET so the bundle keeps the engine's JSON byte for byte
//! (bollard would re-serialize its typed model). It maps errors; it never retries or decides.

use super::short;
use super::{
    Engine, EngineError, EngineErrorKind, EngineInfo, EngineName, Labelled, Labels, LogStream,
    ObjectKind,
};
use crate::sandbox::Sandbox;
use bollard::container::LogOutput;
use bollard::errors::Error as BollardError;
use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType, VolumeCreateRequest};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, DownloadFromContainerOptionsBuilder, ImportImageOptions,
    KillContainerOptionsBuilder, ListVolumesOptionsBuilder, LogsOptionsBuilder,
    RemoveContainerOptionsBuilder, RemoveVolumeOptionsBuilder,
};
use bollard::{ClientVersion, Docker};
use futures_util::StreamExt;
use scopebox_schema::engine::{
    podman_tmpfs_options, PODMAN_IMPLICIT_TMPFS, PODMAN_READ_ONLY_TMPFS_OPTIONS,
};
use std::collections::HashMap;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// The socket tried when `DOCKER_HOST` is unset.
pub const DEFAULT_HOST: &str = "unix:///var/run/docker.sock";
/// The API version every request uses.
pub const API_VERSION: ClientVersion = ClientVersion {
    major_version: 1,
    minor_version: 41,
};
/// Bollard's per-request timeout, set so it never fires first: a day.
const BOLLARD_TIMEOUT_SECS: u64 = 24 * 60 * 60;
/// Upper bound on an inspection document.
const MAX_INSPECT_BYTES: u64 = 16 * 1024 * 1024;

enum Address {
    Unix(String),
    Tcp(String),
}

pub struct DockerEngine {
    host: String,
    address: Address,
    client: Docker,
    /// Which engine answers, once asked (`info`, or the first create).
    name: std::sync::OnceLock<EngineName>,
}

impl DockerEngine {
    /// Images of `repository` (any tag), as (ID, tags), for `scopebox prune`.
    pub async fn list_images(
        &self,
        repository: &str,
    ) -> Result<Vec<(String, Vec<String>)>, EngineError> {
        let mut filters = HashMap::new();
        filters.insert("reference".to_string(), vec![repository.to_string()]);
        let images = self
            .client
            .list_images(Some(
                bollard::query_parameters::ListImagesOptionsBuilder::new()
                    .filters(&filters)
                    .build(),
            ))
            .await
            .map_err(|e| map_error(format!("list images of {repository}"), e))?;
        Ok(images.into_iter().map(|i| (i.id, i.repo_tags)).collect())
    }

    /// The host from `DOCKER_HOST`, else the default socket.
    pub fn host_from_env() -> String {
        std::env::var("DOCKER_HOST")
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| DEFAULT_HOST.to_string())
    }

    /// Build a client for `host` (`unix://PATH` or `tcp://HOST:PORT`). Does not contact the engine.
    pub fn connect(host: &str) -> Result<DockerEngine, EngineError> {
        let op = || format!("connect to the Docker engine at {host}");
        let (address, client) = if let Some(path) = host.strip_prefix("unix://") {
            let client = Docker::connect_with_unix(host, BOLLARD_TIMEOUT_SECS, &API_VERSION)
                .map_err(|e| map_error(op(), e))?;
            (Address::Unix(path.to_string()), client)
        } else if let Some(addr) = host
            .strip_prefix("tcp://")
            .or_else(|| host.strip_prefix("http://"))
        {
            let client = Docker::connect_with_http(host, BOLLARD_TIMEOUT_SECS, &API_VERSION)
                .map_err(|e| map_error(op(), e))?;
            (Address::Tcp(addr.trim_end_matches('/').to_string()), client)
        } else {
            return Err(EngineError::new(
                format!("connect to the Docker engine at {host}: only unix:// and tcp:// hosts are supported"),
                EngineErrorKind::Unreachable,
            ));
        };
        Ok(DockerEngine {
            host: host.to_string(),
            address,
            client,
            name: std::sync::OnceLock::new(),
        })
    }

    /// Which engine answers: Docker, or Podman's compatible service (`GET /version`).
    async fn engine_name(&self) -> Result<EngineName, EngineError> {
        if let Some(name) = self.name.get() {
            return Ok(*name);
        }
        let version =
            self.client.version().await.map_err(|e| {
                map_error("ask the engine for its version (GET /version)".into(), e)
            })?;
        let components = version.components.unwrap_or_default();
        let name = EngineName::from_components(components.iter().map(|c| c.name.as_str()));
        Ok(*self.name.get_or_init(|| name))
    }

    /// `GET /v1.41{path}` over HTTP/1.0 (so the body is never chunked): status and raw body.
    async fn raw_get(&self, op: &str, path: &str) -> Result<(u16, Vec<u8>), EngineError> {
        let io_err = |e: std::io::Error| {
            let kind = match e.kind() {
                std::io::ErrorKind::NotFound
                | std::io::ErrorKind::ConnectionRefused
                | std::io::ErrorKind::PermissionDenied => EngineErrorKind::Unreachable,
                _ => EngineErrorKind::Other,
            };
            EngineError::new(op, kind).with_source(e)
        };
        let request = format!(
            "GET /v{}.{}{path} HTTP/1.0\r\nHost: docker\r\nUser-Agent: scopebox\r\n\r\n",
            API_VERSION.major_version, API_VERSION.minor_version
        );
        let response = match &self.address {
            Address::Unix(p) => {
                let stream = tokio::net::UnixStream::connect(p).await.map_err(io_err)?;
                exchange(stream, request.as_bytes()).await.map_err(io_err)?
            }
            Address::Tcp(a) => {
                let stream = tokio::net::TcpStream::connect(a).await.map_err(io_err)?;
                exchange(stream, request.as_bytes()).await.map_err(io_err)?
            }
        };
        let bad = |why: &str| EngineError::new(format!("{op}: {why}"), EngineErrorKind::Other);
        let split = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| bad("no HTTP header in the response"))?;
        let head = String::from_utf8_lossy(&response[..split]);
        let status: u16 = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("no HTTP status in the response"))?;
        if head
            .lines()
            .any(|l| l.to_ascii_lowercase().starts_with("transfer-encoding:"))
        {
            return Err(bad("unexpected transfer encoding"));
        }
        Ok((status, response[split + 4..].to_vec()))
    }
}

async fn exchange<S>(mut stream: S, request: &[u8]) -> std::io::Result<Vec<u8>>
where
    S: AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    stream.write_all(request).await?;
    let mut response = Vec::new();
    (&mut stream)
        .take(MAX_INSPECT_BYTES + 64 * 1024)
        .read_to_end(&mut response)
        .await?;
    Ok(response)
}

/// Map a bollard error: connection failures are `Unreachable`; 404 and 409 keep their meaning.
fn map_error(op: String, e: BollardError) -> EngineError {
    let kind = match &e {
        BollardError::SocketNotFoundError(_)
        | BollardError::HyperLegacyError { .. }
        | BollardError::IOError { .. } => EngineErrorKind::Unreachable,
        BollardError::DockerResponseServerError {
            status_code: 404, ..
        } => EngineErrorKind::NotFound,
        BollardError::DockerResponseServerError {
            status_code: 409, ..
        } => EngineErrorKind::Conflict,
        _ => EngineErrorKind::Other,
    };
    EngineError::new(op, kind).with_source(e)
}

fn label_filter(label: &str) -> HashMap<String, Vec<String>> {
    HashMap::from([("label".to_string(), vec![label.to_string()])])
}

impl Engine for DockerEngine {
    fn host(&self) -> &str {
        &self.host
    }

    async fn ping(&self) -> Result<(), EngineError> {
        self.client.ping().await.map(|_| ()).map_err(|e| {
            let mut err = map_error(format!("reach the Docker engine at {}", self.host), e);
            // Whatever stopped the ping, no usable engine answered.
            err.kind = EngineErrorKind::Unreachable;
            err
        })
    }

    async fn info(&self) -> Result<EngineInfo, EngineError> {
        let info =
            self.client.info().await.map_err(|e| {
                map_error("ask the Docker engine about itself (GET /info)".into(), e)
            })?;
        let name = self.engine_name().await?;
        Ok(EngineInfo {
            name,
            architecture: machine_spelling(&info.architecture.unwrap_or_default()),
            os_type: info.os_type.unwrap_or_default(),
            server_version: info.server_version.unwrap_or_default(),
            operating_system: info.operating_system.unwrap_or_default(),
        })
    }

    async fn remove_image(&self, id: &str) -> Result<(), EngineError> {
        match self
            .client
            .remove_image(
                id,
                Some(
                    bollard::query_parameters::RemoveImageOptionsBuilder::new()
                        .force(true)
                        .build(),
                ),
                None,
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => {
                let err = map_error(format!("remove image {id}"), e);
                if err.kind == EngineErrorKind::NotFound {
                    Ok(())
                } else {
                    Err(err)
                }
            }
        }
    }

    async fn load_image(&self, archive: Vec<u8>) -> Result<(), EngineError> {
        let op = "load the image archive".to_string();
        let mut stream = self.client.import_image(
            ImportImageOptions::default(),
            bollard::body_full(archive.into()),
            None,
        );
        while let Some(item) = stream.next().await {
            item.map_err(|e| map_error(op.clone(), e))?;
        }
        Ok(())
    }

    async fn inspect_image(&self, id: &str) -> Result<Option<Vec<u8>>, EngineError> {
        let op = format!("inspect image {id}");
        let (status, body) = self.raw_get(&op, &format!("/images/{id}/json")).await?;
        match status {
            200 => Ok(Some(body)),
            404 => Ok(None),
            s => Err(EngineError::new(
                format!(
                    "{op}: the engine answered {s}: {}",
                    String::from_utf8_lossy(&body).trim()
                ),
                EngineErrorKind::Other,
            )),
        }
    }

    async fn create_volume(&self, name: &str, labels: &Labels) -> Result<(), EngineError> {
        let request = VolumeCreateRequest {
            name: Some(name.to_string()),
            driver: Some("local".to_string()),
            labels: Some(labels.clone().into_iter().collect()),
            ..Default::default()
        };
        self.client
            .create_volume(request)
            .await
            .map(|_| ())
            .map_err(|e| map_error(format!("create volume {name}"), e))
    }

    async fn remove_volume(&self, name: &str) -> Result<(), EngineError> {
        self.client
            .remove_volume(
                name,
                Some(RemoveVolumeOptionsBuilder::new().force(true).build()),
            )
            .await
            .map_err(|e| map_error(format!("remove volume {name}"), e))
    }

    async fn create_container(&self, name: &str, sandbox: &Sandbox) -> Result<String, EngineError> {
        let engine = self.engine_name().await?;
        let body = create_body(sandbox, engine).map_err(|why| {
            EngineError::new(
                format!("create container {name}: {why}"),
                EngineErrorKind::Other,
            )
        })?;
        let platform = sandbox.platform.as_str();
        self.client
            .create_container(
                Some(
                    CreateContainerOptionsBuilder::new()
                        .name(name)
                        .platform(platform)
                        .build(),
                ),
                body,
            )
            .await
            .map(|r| r.id)
            .map_err(|e| map_error(format!("create container {name}"), e))
    }

    async fn start_container(&self, id: &str) -> Result<(), EngineError> {
        self.client
            .start_container(id, None)
            .await
            .map_err(|e| map_error(format!("start container {}", short(id)), e))
    }

    async fn wait_container(&self, id: &str) -> Result<i64, EngineError> {
        let mut stream = self.client.wait_container(id, None);
        let mut code = None;
        while let Some(item) = stream.next().await {
            match item {
                Ok(response) => code = Some(response.status_code),
                // bollard reports a non-zero exit as an error: it is an exit code, not a failure.
                Err(BollardError::DockerContainerWaitError { code: c, .. }) => code = Some(c),
                Err(e) => return Err(map_error(format!("wait for container {}", short(id)), e)),
            }
        }
        code.ok_or_else(|| {
            EngineError::new(
                format!(
                    "wait for container {}: the engine sent no exit code",
                    short(id)
                ),
                EngineErrorKind::Other,
            )
        })
    }

    async fn kill_container(&self, id: &str) -> Result<(), EngineError> {
        self.client
            .kill_container(
                id,
                Some(KillContainerOptionsBuilder::new().signal("SIGKILL").build()),
            )
            .await
            .map_err(|e| map_error(format!("kill container {}", short(id)), e))
    }

    async fn inspect_container(&self, id: &str) -> Result<Vec<u8>, EngineError> {
        let op = format!("inspect container {}", short(id));
        let (status, body) = self.raw_get(&op, &format!("/containers/{id}/json")).await?;
        match status {
            200 => Ok(body),
            404 => Err(EngineError::new(op, EngineErrorKind::NotFound)),
            s => Err(EngineError::new(
                format!(
                    "{op}: the engine answered {s}: {}",
                    String::from_utf8_lossy(&body).trim()
                ),
                EngineErrorKind::Other,
            )),
        }
    }

    async fn remove_container(&self, id: &str) -> Result<(), EngineError> {
        self.client
            .remove_container(
                id,
                Some(RemoveContainerOptionsBuilder::new().force(true).build()),
            )
            .await
            .map_err(|e| map_error(format!("remove container {}", short(id)), e))
    }

    async fn download(&self, id: &str, path: &str, max_bytes: u64) -> Result<Vec<u8>, EngineError> {
        let op = format!("copy {path} out of container {}", short(id));
        let mut stream = self.client.download_from_container(
            id,
            Some(
                DownloadFromContainerOptionsBuilder::new()
                    .path(path)
                    .build(),
            ),
        );
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| map_error(op.clone(), e))?;
            if (bytes.len() + chunk.len()) as u64 > max_bytes {
                return Err(EngineError::new(
                    format!("{op}: the archive exceeds {max_bytes} bytes"),
                    EngineErrorKind::TooLarge,
                ));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    fn logs(&self, id: &str) -> LogStream<'_> {
        let op = format!("follow the logs of container {}", short(id));
        let options = LogsOptionsBuilder::new()
            .follow(true)
            .stdout(true)
            .stderr(true)
            .build();
        Box::pin(self.client.logs(id, Some(options)).map(move |item| {
            item.map(|out| match out {
                LogOutput::StdErr { message }
                | LogOutput::StdOut { message }
                | LogOutput::StdIn { message }
                | LogOutput::Console { message } => message.to_vec(),
            })
            .map_err(|e| map_error(op.clone(), e))
        }))
    }

    async fn list(&self, label: &str) -> Result<Vec<Labelled>, EngineError> {
        let filters = label_filter(label);
        // Containers through the raw listing: bollard's typed model refuses states it does
        // not know (Podman reports "stopped"); only the id and the labels are read.
        let op = format!("list containers labelled {label}");
        let query = serde_json::json!({ "label": [label] }).to_string();
        let (status, body) = self
            .raw_get(
                &op,
                &format!("/containers/json?all=1&filters={}", percent_encode(&query)),
            )
            .await?;
        if status != 200 {
            return Err(EngineError::new(
                format!(
                    "{op}: the engine answered {status}: {}",
                    String::from_utf8_lossy(&body).trim()
                ),
                EngineErrorKind::Other,
            ));
        }
        let containers = listed_containers(&body)
            .map_err(|why| EngineError::new(format!("{op}: {why}"), EngineErrorKind::Other))?;
        let volumes = self
            .client
            .list_volumes(Some(
                ListVolumesOptionsBuilder::new().filters(&filters).build(),
            ))
            .await
            .map_err(|e| map_error(format!("list volumes labelled {label}"), e))?;
        let mut found = containers;
        found.extend(
            volumes
                .volumes
                .unwrap_or_default()
                .into_iter()
                .map(|v| Labelled {
                    kind: ObjectKind::Volume,
                    id: v.name,
                    labels: v.labels.into_iter().collect(),
                }),
        );
        Ok(found)
    }
}

/// Every byte but the URL-unreserved ones as `%HH`.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The id and labels of each container in a `GET /containers/json` answer.
fn listed_containers(body: &[u8]) -> Result<Vec<Labelled>, String> {
    let list: Vec<serde_json::Value> =
        serde_json::from_slice(body).map_err(|e| format!("unreadable listing: {e}"))?;
    list.iter()
        .map(|c| {
            let id = c["Id"]
                .as_str()
                .ok_or("a listed container has no Id")?
                .to_string();
            let labels = match &c["Labels"] {
                serde_json::Value::Object(map) => map
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect(),
                _ => Labels::new(),
            };
            Ok(Labelled {
                kind: ObjectKind::Container,
                id,
                labels,
            })
        })
        .collect()
}

/// The engine's architecture in `uname -m` spelling: Docker says `x86_64`/`aarch64`, Podman
/// says Go's `amd64`/`arm64`.
fn machine_spelling(architecture: &str) -> String {
    match architecture {
        "amd64" => "x86_64".to_string(),
        "arm64" => "aarch64".to_string(),
        other => other.to_string(),
    }
}

/// The create request for `sandbox` on `engine`: exactly what it asks for, nothing more — no
/// binds, no devices, no socket, no auto-remove. On Podman, a tmpfs owned by the container user
/// is spelled `U`, and on a read-only root each of Podman's implicit writable tmpfs mounts the
/// sandbox does not mount itself is mounted read-only and noexec. Refused (as text) when the
/// sandbox cannot be spelled for the engine.
pub fn create_body(sandbox: &Sandbox, engine: EngineName) -> Result<ContainerCreateBody, String> {
    let mut tmpfs: HashMap<String, String> = HashMap::new();
    for mount in &sandbox.tmpfs {
        let options = match engine {
            EngineName::Docker => mount.joined(),
            EngineName::Podman => podman_tmpfs_options(&mount.options, &sandbox.user)
                .ok_or_else(|| {
                    format!(
                        "Podman cannot mount {} owned by anyone but the container user {}",
                        mount.target, sandbox.user
                    )
                })?
                .join(","),
        };
        tmpfs.insert(mount.target.clone(), options);
    }
    if engine == EngineName::Podman && sandbox.read_only_root {
        for target in PODMAN_IMPLICIT_TMPFS {
            tmpfs
                .entry(target.to_string())
                .or_insert_with(|| PODMAN_READ_ONLY_TMPFS_OPTIONS.to_string());
        }
    }
    let host = HostConfig {
        network_mode: Some(sandbox.network_mode.clone()),
        readonly_rootfs: Some(sandbox.read_only_root),
        cap_drop: Some(sandbox.cap_drop.clone()),
        security_opt: sandbox
            .no_new_privileges
            .then(|| vec!["no-new-privileges".to_string()]),
        init: sandbox.init.then_some(true),
        pids_limit: sandbox.limits.pids,
        memory: sandbox.limits.memory_bytes,
        memory_swap: sandbox.limits.memory_swap_bytes,
        nano_cpus: sandbox.limits.nano_cpus,
        tmpfs: (!tmpfs.is_empty()).then_some(tmpfs),
        mounts: sandbox.volume.as_ref().map(|v| {
            vec![Mount {
                target: Some(v.target.clone()),
                source: Some(v.name.clone()),
                typ: Some(MountType::VOLUME),
                read_only: Some(false),
                ..Default::default()
            }]
        }),
        privileged: Some(false),
        auto_remove: Some(false),
        ..Default::default()
    };
    Ok(ContainerCreateBody {
        image: Some(sandbox.image.clone()),
        env: (!sandbox.env.is_empty()).then(|| {
            sandbox
                .env
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect()
        }),
        user: Some(sandbox.user.clone()),
        labels: Some(sandbox.labels.clone().into_iter().collect()),
        tty: Some(false),
        open_stdin: Some(false),
        attach_stdin: Some(false),
        host_config: Some(host),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::{labels, load_policy, sandbox};
    use crate::toolchain::workspace_root;
    use scopebox_schema::platform::Platform;

    fn evidence_sandbox() -> (scopebox_schema::policy::BoundaryPolicy, Sandbox) {
        let (policy, _) = load_policy(&workspace_root()).unwrap();
        let sb = sandbox(
            &policy,
            "sha256:abc",
            Platform::LinuxAmd64,
            "vol-1",
            &labels("r1", false),
            Some("x86_64"),
        );
        (policy, sb)
    }

    #[test]
    fn docker_is_asked_for_the_policy_exactly() {
        let (policy, sb) = evidence_sandbox();
        let body = create_body(&sb, EngineName::Docker).unwrap();
        let host = body.host_config.as_ref().unwrap();
        assert_eq!(host.network_mode.as_deref(), Some("none"));
        assert_eq!(host.readonly_rootfs, Some(true));
        assert_eq!(host.cap_drop, Some(vec!["ALL".to_string()]));
        assert_eq!(
            host.security_opt,
            Some(vec!["no-new-privileges".to_string()])
        );
        assert_eq!(host.init, Some(true));
        assert_eq!(host.pids_limit, Some(policy.pids_limit));
        assert_eq!(host.memory, Some(policy.memory_bytes));
        assert_eq!(host.memory_swap, Some(policy.memory_swap_bytes));
        assert_eq!(host.nano_cpus, Some(policy.nano_cpus));
        // The policy's tmpfs map, byte for byte, and nothing else.
        let tmpfs: std::collections::BTreeMap<_, _> =
            host.tmpfs.clone().unwrap().into_iter().collect();
        assert_eq!(tmpfs, policy.tmpfs);
        let mounts = host.mounts.as_ref().unwrap();
        assert_eq!(mounts.len(), 1);
        assert_eq!(mounts[0].typ, Some(MountType::VOLUME));
        assert_eq!(mounts[0].target.as_deref(), Some("/evidence"));
        assert_eq!(mounts[0].source.as_deref(), Some("vol-1"));
        assert!(host.binds.is_none() && host.devices.is_none());
        assert_eq!(host.privileged, Some(false));
        assert_eq!(host.auto_remove, Some(false));
        assert_eq!(body.user.as_deref(), Some("1000:1000"));
        assert_eq!(
            body.env,
            Some(vec!["SCOPEBOX_ENGINE_MACHINE=x86_64".to_string()])
        );
        assert_eq!(body.labels.as_ref().unwrap()["scopebox.run"], "r1");
    }

    #[test]
    fn podman_is_asked_for_the_same_confinement_in_its_dialect() {
        let (policy, sb) = evidence_sandbox();
        let body = create_body(&sb, EngineName::Podman).unwrap();
        let tmpfs = body.host_config.unwrap().tmpfs.unwrap();
        for (target, options) in &policy.tmpfs {
            let want = options.replace(",uid=1000,gid=1000", ",U");
            assert_eq!(tmpfs[target], want, "{target}");
        }
        // Podman's implicit writable mounts on a read-only root, which the policy does not
        // name, are mounted read-only and noexec instead.
        for target in ["/run", "/var/tmp"] {
            assert!(!policy.tmpfs.contains_key(target));
            assert_eq!(tmpfs[target], PODMAN_READ_ONLY_TMPFS_OPTIONS);
        }
        assert_eq!(tmpfs.len(), policy.tmpfs.len() + 2);
    }

    #[test]
    fn podman_refuses_a_tmpfs_owned_by_someone_else() {
        let (_, mut sb) = evidence_sandbox();
        sb.tmpfs[0] = crate::sandbox::Tmpfs::new("/work", "rw,uid=0,gid=0");
        let why = create_body(&sb, EngineName::Podman).unwrap_err();
        assert!(why.contains("/work") && why.contains("1000:1000"), "{why}");
        // Docker can express it.
        assert!(create_body(&sb, EngineName::Docker).is_ok());
    }

    #[test]
    fn a_listing_in_either_dialect_gives_ids_and_labels() {
        // Podman's state "stopped" is unknown to Docker's model; it is not read.
        let body = br#"[{"Id":"c1","State":"stopped","Labels":{"scopebox.run":"r1"}},
                        {"Id":"c2","State":"exited","Labels":null}]"#;
        let found = listed_containers(body).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].id, "c1");
        assert_eq!(found[0].labels["scopebox.run"], "r1");
        assert!(found[1].labels.is_empty());
        assert!(listed_containers(br#"[{"State":"x"}]"#).is_err());
        assert!(listed_containers(b"{").is_err());
        assert_eq!(
            percent_encode(r#"{"label":["a=b"]}"#),
            "%7B%22label%22%3A%5B%22a%3Db%22%5D%7D"
        );
        assert_eq!(machine_spelling("amd64"), "x86_64");
        assert_eq!(machine_spelling("aarch64"), "aarch64");
    }

    #[test]
    fn the_probe_asks_for_no_limits_tmpfs_or_volume() {
        let sb = crate::boundary::probe_sandbox("sha256:p", Platform::LinuxArm64, &Labels::new());
        let body = create_body(&sb, EngineName::Podman).unwrap();
        let host = body.host_config.unwrap();
        assert!(host.mounts.is_none() && host.pids_limit.is_none() && host.init.is_none());
        // Even the probe gets no writable implicit tmpfs on Podman.
        assert_eq!(host.tmpfs.unwrap().len(), 3);
        assert!(body.env.is_none());
    }
}
