//! A scripted engine for the fault-path tests: it records every call in order, keeps the
//! containers and volumes it "created" (with their labels) so sweeps and leftovers are real,
//! and fails, hangs or exits as told. Test-only; it never touches Docker.

use super::{
    Engine, EngineError, EngineErrorKind, Labelled, Labels, LogStream, ObjectKind, KEEP_LABEL,
    OWNER_LABEL, RUN_LABEL,
};
use crate::sandbox::Sandbox;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// An object as a run leaves it on the engine: labelled with `run` and its `owner` process
/// (`host/pid`), and marked to keep when `keep`.
pub fn run_object(kind: ObjectKind, id: &str, run: &str, owner: &str, keep: bool) -> Labelled {
    let mut labels = Labels::new();
    labels.insert(RUN_LABEL.into(), run.into());
    labels.insert(OWNER_LABEL.into(), owner.into());
    if keep {
        labels.insert(KEEP_LABEL.into(), "1".into());
    }
    Labelled {
        kind,
        id: id.into(),
        labels,
    }
}

/// Steps that can be told to fail or hang (the wait has its own `WaitBehaviour`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Ping,
    LoadImage,
    InspectImage,
    CreateVolume,
    CreateContainer,
    Start,
    Kill,
    Download,
    InspectContainer,
    RemoveContainer,
    RemoveVolume,
    List,
}

/// How `wait_container` behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitBehaviour {
    Exit(i64),
    /// The engine errors while waiting.
    Error,
    /// Never returns until the container is killed (then reports 137).
    Hang,
}

#[derive(Default)]
struct State {
    calls: Vec<String>,
    objects: Vec<Labelled>,
    killed: bool,
    next_id: u32,
    image_absent: bool,
}

pub struct Fake {
    state: Mutex<State>,
    failing: BTreeSet<Step>,
    hanging: BTreeSet<Step>,
    wait: WaitBehaviour,
    logs: Vec<Vec<u8>>,
    /// How many `logs` calls answer with nothing before the output is there (an engine whose
    /// log lags the container's exit).
    logs_late_by: std::sync::atomic::AtomicU32,
    evidence: Vec<u8>,
    /// The image ID the engine reports; `None` echoes the one asked for.
    reported_image_id: Option<String>,
}

impl Default for Fake {
    fn default() -> Self {
        Self::new()
    }
}

impl Fake {
    pub fn new() -> Fake {
        Fake {
            state: Mutex::new(State::default()),
            failing: BTreeSet::new(),
            hanging: BTreeSet::new(),
            wait: WaitBehaviour::Exit(0),
            logs: Vec::new(),
            logs_late_by: Default::default(),
            evidence: crate::evidence::tests::evidence_tar(&[]),
            reported_image_id: None,
        }
    }

    /// The engine has no image until one is loaded.
    pub fn without_image(self) -> Fake {
        self.state.lock().unwrap().image_absent = true;
        self
    }

    /// The engine reports this ID for any image it has.
    pub fn reporting_image_id(mut self, id: &str) -> Fake {
        self.reported_image_id = Some(id.to_string());
        self
    }

    pub fn failing(mut self, step: Step) -> Fake {
        self.failing.insert(step);
        self
    }

    pub fn hanging(mut self, step: Step) -> Fake {
        self.hanging.insert(step);
        self
    }

    pub fn with_wait(mut self, wait: WaitBehaviour) -> Fake {
        self.wait = wait;
        self
    }

    pub fn with_logs(mut self, chunks: &[&[u8]]) -> Fake {
        self.logs = chunks.iter().map(|c| c.to_vec()).collect();
        self
    }

    /// The first `calls` reads of the logs find them still empty.
    pub fn with_logs_late_by(self, calls: u32) -> Fake {
        self.logs_late_by
            .store(calls, std::sync::atomic::Ordering::SeqCst);
        self
    }

    pub fn with_evidence(mut self, tar: Vec<u8>) -> Fake {
        self.evidence = tar;
        self
    }

    /// Pretend an object already exists (a leftover of an earlier run).
    pub fn add(&self, object: Labelled) {
        self.state.lock().unwrap().objects.push(object);
    }

    pub fn calls(&self) -> Vec<String> {
        self.state.lock().unwrap().calls.clone()
    }

    pub fn objects(&self) -> Vec<Labelled> {
        self.state.lock().unwrap().objects.clone()
    }

    fn call(&self, text: String) {
        self.state.lock().unwrap().calls.push(text);
    }

    async fn gate(&self, step: Step, op: String) -> Result<(), EngineError> {
        if self.hanging.contains(&step) {
            std::future::pending::<()>().await;
        }
        if self.failing.contains(&step) {
            return Err(EngineError::new(op, EngineErrorKind::Other)
                .with_source(std::io::Error::other("scripted failure")));
        }
        Ok(())
    }

    fn remove(&self, kind: ObjectKind, id: &str, op: String) -> Result<(), EngineError> {
        let mut state = self.state.lock().unwrap();
        let before = state.objects.len();
        state.objects.retain(|o| !(o.kind == kind && o.id == id));
        if state.objects.len() == before {
            return Err(EngineError::new(op, EngineErrorKind::NotFound));
        }
        Ok(())
    }
}

impl Engine for Fake {
    fn host(&self) -> &str {
        "fake://"
    }

    async fn ping(&self) -> Result<(), EngineError> {
        self.call("ping".into());
        self.gate(Step::Ping, "reach the engine".into()).await
    }

    async fn info(&self) -> Result<super::EngineInfo, EngineError> {
        self.call("info".into());
        Ok(super::EngineInfo {
            name: super::EngineName::Docker,
            architecture: "x86_64".into(),
            os_type: "linux".into(),
            server_version: "fake".into(),
            operating_system: "fake".into(),
        })
    }

    async fn remove_image(&self, id: &str) -> Result<(), EngineError> {
        self.call(format!("remove_image {id}"));
        Ok(())
    }

    async fn load_image(&self, _archive: Vec<u8>) -> Result<(), EngineError> {
        self.call("load_image".into());
        self.gate(Step::LoadImage, "load the image archive".into())
            .await?;
        self.state.lock().unwrap().image_absent = false;
        Ok(())
    }

    async fn inspect_image(&self, id: &str) -> Result<Option<Vec<u8>>, EngineError> {
        self.call(format!("inspect_image {id}"));
        self.gate(Step::InspectImage, format!("inspect image {id}"))
            .await?;
        if self.state.lock().unwrap().image_absent {
            return Ok(None);
        }
        let reported = self.reported_image_id.as_deref().unwrap_or(id);
        Ok(Some(
            serde_json::to_vec(&serde_json::json!({"Id": reported})).expect("json"),
        ))
    }

    async fn create_volume(&self, name: &str, labels: &Labels) -> Result<(), EngineError> {
        self.call(format!("create_volume {name}"));
        self.gate(Step::CreateVolume, format!("create volume {name}"))
            .await?;
        self.state.lock().unwrap().objects.push(Labelled {
            kind: ObjectKind::Volume,
            id: name.to_string(),
            labels: labels.clone(),
        });
        Ok(())
    }

    async fn remove_volume(&self, name: &str) -> Result<(), EngineError> {
        self.call(format!("remove_volume {name}"));
        self.gate(Step::RemoveVolume, format!("remove volume {name}"))
            .await?;
        self.remove(ObjectKind::Volume, name, format!("remove volume {name}"))
    }

    async fn create_container(&self, name: &str, sandbox: &Sandbox) -> Result<String, EngineError> {
        self.call(format!("create_container {name}"));
        if self.failing.contains(&Step::CreateContainer) {
            return self
                .gate(Step::CreateContainer, format!("create container {name}"))
                .await
                .map(|()| String::new());
        }
        let id = {
            let mut state = self.state.lock().unwrap();
            state.next_id += 1;
            let id = format!("c{}", state.next_id);
            state.objects.push(Labelled {
                kind: ObjectKind::Container,
                id: id.clone(),
                labels: sandbox.labels.clone(),
            });
            id
        };
        // Hanging here models a request whose container exists but whose answer never came.
        self.gate(Step::CreateContainer, format!("create container {name}"))
            .await?;
        Ok(id)
    }

    async fn start_container(&self, id: &str) -> Result<(), EngineError> {
        self.call(format!("start {id}"));
        self.gate(Step::Start, format!("start container {id}"))
            .await
    }

    async fn wait_container(&self, id: &str) -> Result<i64, EngineError> {
        self.call(format!("wait {id}"));
        match self.wait {
            WaitBehaviour::Exit(code) => Ok(code),
            WaitBehaviour::Error => Err(EngineError::new(
                format!("wait for container {id}"),
                EngineErrorKind::Other,
            )
            .with_source(std::io::Error::other("connection reset"))),
            WaitBehaviour::Hang => {
                if self.state.lock().unwrap().killed {
                    Ok(137)
                } else {
                    std::future::pending().await
                }
            }
        }
    }

    async fn kill_container(&self, id: &str) -> Result<(), EngineError> {
        self.call(format!("kill {id}"));
        // Hanging here models a kill the engine never confirmed: the container keeps running.
        self.gate(Step::Kill, format!("kill container {id}"))
            .await?;
        self.state.lock().unwrap().killed = true;
        Ok(())
    }

    async fn inspect_container(&self, id: &str) -> Result<Vec<u8>, EngineError> {
        self.call(format!("inspect_container {id}"));
        self.gate(Step::InspectContainer, format!("inspect container {id}"))
            .await?;
        Ok(br#"{"State":{"OOMKilled":false}}"#.to_vec())
    }

    async fn remove_container(&self, id: &str) -> Result<(), EngineError> {
        self.call(format!("remove_container {id}"));
        self.gate(Step::RemoveContainer, format!("remove container {id}"))
            .await?;
        self.remove(ObjectKind::Container, id, format!("remove container {id}"))
    }

    async fn download(
        &self,
        id: &str,
        path: &str,
        _max_bytes: u64,
    ) -> Result<Vec<u8>, EngineError> {
        self.call(format!("download {id} {path}"));
        self.gate(Step::Download, format!("copy {path} out of container {id}"))
            .await?;
        Ok(self.evidence.clone())
    }

    fn logs(&self, id: &str) -> LogStream<'_> {
        self.call(format!("logs {id}"));
        let late = self
            .logs_late_by
            .fetch_update(
                std::sync::atomic::Ordering::SeqCst,
                std::sync::atomic::Ordering::SeqCst,
                |n| n.checked_sub(1),
            )
            .is_ok();
        let chunks: Vec<Result<Vec<u8>, EngineError>> = if late {
            Vec::new()
        } else {
            self.logs.iter().cloned().map(Ok).collect()
        };
        Box::pin(futures_util::stream::iter(chunks))
    }

    async fn list(&self, label: &str) -> Result<Vec<Labelled>, EngineError> {
        self.call(format!("list {label}"));
        self.gate(Step::List, format!("list what carries {label}"))
            .await?;
        let (key, value) = match label.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (label, None),
        };
        Ok(self
            .state
            .lock()
            .unwrap()
            .objects
            .iter()
            .filter(|o| match (o.labels.get(key), value) {
                (Some(v), Some(want)) => v == want,
                (Some(_), None) => true,
                (None, _) => false,
            })
            .cloned()
            .collect())
    }
}
