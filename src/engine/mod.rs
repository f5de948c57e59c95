//! The engine boundary: a small async trait over exactly the Docker Engine calls the run needs
//! (ping, load and inspect an image, create and remove a volume, create/start/wait/kill/inspect/
//! remove a container, download an archive from it, follow its logs, list by label), with the
//! real implementation over bollard (`docker`: Docker, and Podman through its Docker-compatible
//! API service) and a scripted fake for the fault-path tests (`fake`). The calls speak the
//! project's own types (`Sandbox` for a container); bollard's appear only inside `docker`.
//! Nothing in it decides policy, deadlines or cleanup order — that is `run`'s job.

pub mod docker;
#[cfg(test)]
pub mod fake;

use crate::sandbox::Sandbox;
use futures_util::Stream;
pub use scopebox_schema::engine::EngineName;
use std::collections::BTreeMap;
use std::pin::Pin;

/// The first 12 characters of an id, for messages.
pub fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// Every container and volume carries `scopebox.run=<run id>`.
pub const RUN_LABEL: &str = "scopebox.run";
/// `<hostname>/<pid>` of the orchestrator that created it: the start-of-run sweep removes only
/// objects whose owner is gone, so concurrent runs never remove each other's containers.
pub const OWNER_LABEL: &str = "scopebox.owner";
/// `<run id>-<arch>` on every object of one platform of a run: each platform's final sweep
/// lists only its own, since the platforms of one run end at different times.
pub const LANE_LABEL: &str = "scopebox.lane";
/// Set on every object of a `--keep-on-failure` run: sweeps before and after other runs leave
/// it alone; `scopebox sweep` removes it.
pub const KEEP_LABEL: &str = "scopebox.keep";

pub type Labels = BTreeMap<String, String>;

/// Chunks of the container's combined stdout and stderr, as the engine delivers them.
pub type LogStream<'a> = Pin<Box<dyn Stream<Item = Result<Vec<u8>, EngineError>> + Send + 'a>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Container,
    Volume,
}

/// A container or volume found by label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labelled {
    pub kind: ObjectKind,
    /// Container id, or volume name.
    pub id: String,
    pub labels: Labels,
}

/// Why an engine call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineErrorKind {
    /// No engine answered at the address (socket missing, connection refused).
    Unreachable,
    /// The engine answered 404.
    NotFound,
    /// The engine answered 409 (e.g. killing a container that is not running).
    Conflict,
    /// A response exceeded the bound we accept.
    TooLarge,
    Other,
}

/// A failed engine call; `op` fits "failed to {op}".
#[derive(Debug, thiserror::Error)]
#[error("{op}")]
pub struct EngineError {
    pub op: String,
    pub kind: EngineErrorKind,
    #[source]
    pub source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl EngineError {
    pub fn new(op: impl Into<String>, kind: EngineErrorKind) -> EngineError {
        EngineError {
            op: op.into(),
            kind,
            source: None,
        }
    }

    pub fn with_source(
        mut self,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> EngineError {
        self.source = Some(source.into());
        self
    }
}

/// What the engine says about itself (`GET /info`): its own architecture decides which
/// platforms run natively and which under emulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineInfo {
    /// Docker or Podman (from `GET /version`): how a sandbox is spelled for it and how its
    /// inspections read.
    pub name: EngineName,
    /// `uname -m` spelling, e.g. "x86_64", "aarch64".
    pub architecture: String,
    pub os_type: String,
    pub server_version: String,
    pub operating_system: String,
}

/// The engine calls the orchestrator makes. `run` is generic over it; tests use `fake::Fake`.
// Used only through generics on a current-thread runtime, so the futures need no `Send` bound.
#[allow(async_fn_in_trait)]
pub trait Engine {
    /// The address tried, for hints ("unix:///var/run/docker.sock").
    fn host(&self) -> &str;
    async fn ping(&self) -> Result<(), EngineError>;
    async fn info(&self) -> Result<EngineInfo, EngineError>;
    /// `POST /images/load` of a docker-archive.
    async fn load_image(&self, archive: Vec<u8>) -> Result<(), EngineError>;
    /// Removes an image (by ID or tag); an image the engine does not have is not an error.
    async fn remove_image(&self, id: &str) -> Result<(), EngineError>;
    /// The raw inspection JSON, or `None` when the engine has no such image.
    async fn inspect_image(&self, id: &str) -> Result<Option<Vec<u8>>, EngineError>;
    async fn create_volume(&self, name: &str, labels: &Labels) -> Result<(), EngineError>;
    async fn remove_volume(&self, name: &str) -> Result<(), EngineError>;
    /// Creates the container `sandbox` describes (on its platform); returns its id.
    async fn create_container(&self, name: &str, sandbox: &Sandbox) -> Result<String, EngineError>;
    async fn start_container(&self, id: &str) -> Result<(), EngineError>;
    /// Waits until the container stops and returns its exit code. A non-zero exit is an
    /// `Ok`, never an error.
    async fn wait_container(&self, id: &str) -> Result<i64, EngineError>;
    async fn kill_container(&self, id: &str) -> Result<(), EngineError>;
    /// The raw inspection JSON, as the engine sent it.
    async fn inspect_container(&self, id: &str) -> Result<Vec<u8>, EngineError>;
    /// Force-removes the container (not its volumes).
    async fn remove_container(&self, id: &str) -> Result<(), EngineError>;
    /// `GET /containers/{id}/archive?path=…`: an uncompressed tar, refused past `max_bytes`.
    async fn download(&self, id: &str, path: &str, max_bytes: u64) -> Result<Vec<u8>, EngineError>;
    /// Follows stdout and stderr from the start until the container stops.
    fn logs(&self, id: &str) -> LogStream<'_>;
    /// Containers (running or not) and volumes carrying `label` (`key` or `key=value`).
    async fn list(&self, label: &str) -> Result<Vec<Labelled>, EngineError>;
}
