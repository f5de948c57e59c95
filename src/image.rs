//! The evidence image, generated in Rust from data: one deterministic layer tar (candidate,
//! runner, sentinel, matrix, an empty `/evidence` owned by the container user, mount points for
//! the tmpfs fixture roots), an image config JSON with a fixed `created`, and a docker-archive
//! to load through the Engine API. The image ID is `sha256:` + sha256 of the exact config bytes,
//! so identical inputs give an identical ID, and it is checked against what the engine reports.
//! The recipe (paths, modes, owners, entrypoint, env) is `images/recipe.json`. This module never
//! talks to the engine itself and never reads anything but the recipe.

use crate::pack::ArchiveFile;
use scopebox_schema::digest::sha256_hex;
use scopebox_schema::layout;
use scopebox_schema::receipt::{LayerEntry, LayerManifest};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const RECIPE_FILE: &str = "images/recipe.json";
pub const POLICY_FILE: &str = "images/boundary-policy.json";

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("read image recipe {path}")]
    ReadRecipe {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("parse image recipe {path}")]
    ParseRecipe {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("accept image recipe: {0}")]
    Recipe(String),
    #[error("build the image layer: {0}")]
    Layer(String),
    #[error(
        "accept the loaded image: the engine reports {reported}, expected {computed} (sha256 of the config)"
    )]
    IdMismatch { computed: String, reported: String },
    #[error("accept the loaded image: the engine's inspection is not understood ({0})")]
    Inspect(String),
}

/// `images/recipe.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Recipe {
    pub schema_version: u32,
    /// Repository part of the tag the image is loaded under.
    pub repository: String,
    pub architecture: String,
    pub os: String,
    /// The fixed `created` of the config and its history.
    pub created: String,
    pub user: String,
    pub working_dir: String,
    pub env: Vec<String>,
    pub entrypoint: Vec<String>,
    #[serde(default)]
    pub cmd: Vec<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    pub directories: Vec<Node>,
    pub files: RecipeFiles,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RecipeFiles {
    pub runner: Node,
    pub sentinel: Node,
    pub matrix: Node,
    /// Where the candidate archive is unpacked; `mode` applies to directories created below it.
    pub candidate_dir: Node,
}

/// A path in the image with its metadata. Modes are octal strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Node {
    pub path: String,
    pub mode: String,
    pub uid: u32,
    pub gid: u32,
}

impl Recipe {
    /// Read and check `images/recipe.json` below the workspace root.
    pub fn load(root: &Path) -> Result<(Recipe, Vec<u8>), ImageError> {
        let path = root.join(RECIPE_FILE);
        let bytes = std::fs::read(&path).map_err(|source| ImageError::ReadRecipe {
            path: path.clone(),
            source,
        })?;
        let recipe: Recipe =
            serde_json::from_slice(&bytes).map_err(|source| ImageError::ParseRecipe {
                path: path.clone(),
                source,
            })?;
        recipe.check()?;
        Ok((recipe, bytes))
    }

    /// The recipe must put things where the runner and verifier look for them.
    pub fn check(&self) -> Result<(), ImageError> {
        let want = [
            ("runner", &self.files.runner.path, layout::RUNNER_BIN),
            ("sentinel", &self.files.sentinel.path, layout::SENTINEL_BIN),
            ("matrix", &self.files.matrix.path, layout::MATRIX_PATH),
            (
                "candidateDir",
                &self.files.candidate_dir.path,
                layout::CANDIDATE_DIR,
            ),
        ];
        for (what, got, expected) in want {
            if got != expected {
                return Err(ImageError::Recipe(format!(
                    "files.{what} is {got}, the layout requires {expected}"
                )));
            }
        }
        if !self
            .directories
            .iter()
            .any(|d| d.path == layout::EVIDENCE_DIR)
        {
            return Err(ImageError::Recipe(format!(
                "no directory {} (the evidence volume's mount point)",
                layout::EVIDENCE_DIR
            )));
        }
        for node in self.all_nodes() {
            parse_mode(&node.mode).map_err(ImageError::Recipe)?;
            if !node.path.starts_with('/') || node.path.contains("/../") || node.path.ends_with('/')
            {
                return Err(ImageError::Recipe(format!(
                    "path {:?} is not a clean absolute path",
                    node.path
                )));
            }
        }
        Ok(())
    }

    fn all_nodes(&self) -> impl Iterator<Item = &Node> {
        self.directories.iter().chain([
            &self.files.runner,
            &self.files.sentinel,
            &self.files.matrix,
            &self.files.candidate_dir,
        ])
    }
}

fn parse_mode(text: &str) -> Result<u32, String> {
    u32::from_str_radix(text, 8)
        .ok()
        .filter(|m| *m <= 0o7777)
        .ok_or_else(|| format!("mode {text:?} is not octal permission bits"))
}

/// What goes into the image besides the recipe's directories.
pub struct Contents<'a> {
    pub candidate: &'a [ArchiveFile],
    pub runner: &'a [u8],
    pub sentinel: &'a [u8],
    pub matrix: &'a [u8],
}

/// A generated image: its layer, config and identity.
#[derive(Debug, Clone)]
pub struct Image {
    pub layer: Vec<u8>,
    /// "sha256:<hex>" of `layer`.
    pub diff_id: String,
    pub layer_manifest: LayerManifest,
    /// The exact config bytes; the image ID is their digest.
    pub config: Vec<u8>,
    /// "sha256:<hex>".
    pub id: String,
    /// "<repository>:<first 12 hex of the id>".
    pub tag: String,
}

enum Payload<'a> {
    Dir,
    File(&'a [u8]),
}

struct LayerNode<'a> {
    mode: u32,
    uid: u32,
    gid: u32,
    payload: Payload<'a>,
}

/// Generate the layer and config. Pure: the same recipe and contents give the same bytes.
pub fn build(
    recipe: &Recipe,
    recipe_bytes: &[u8],
    contents: &Contents,
) -> Result<Image, ImageError> {
    let mut nodes: BTreeMap<String, LayerNode> = BTreeMap::new();
    // Safe: `check` validated every mode.
    let mode = |n: &Node| parse_mode(&n.mode).unwrap_or(0o755);
    for dir in &recipe.directories {
        insert(
            &mut nodes,
            dir.path.clone(),
            LayerNode {
                mode: mode(dir),
                uid: dir.uid,
                gid: dir.gid,
                payload: Payload::Dir,
            },
        )?;
    }
    for (node, bytes) in [
        (&recipe.files.runner, contents.runner),
        (&recipe.files.sentinel, contents.sentinel),
        (&recipe.files.matrix, contents.matrix),
    ] {
        insert(
            &mut nodes,
            node.path.clone(),
            LayerNode {
                mode: mode(node),
                uid: node.uid,
                gid: node.gid,
                payload: Payload::File(bytes),
            },
        )?;
    }
    let cdir = &recipe.files.candidate_dir;
    let mut candidate_dirs: Vec<String> = Vec::new();
    for file in contents.candidate {
        let full = format!("{}/{}", cdir.path, file.path);
        let parts: Vec<&str> = file.path.split('/').collect();
        for depth in 1..parts.len() {
            let dir = format!("{}/{}", cdir.path, parts[..depth].join("/"));
            if !candidate_dirs.contains(&dir) {
                candidate_dirs.push(dir);
            }
        }
        insert(
            &mut nodes,
            full,
            LayerNode {
                mode: file.mode,
                uid: cdir.uid,
                gid: cdir.gid,
                payload: Payload::File(&file.bytes),
            },
        )?;
    }
    for dir in candidate_dirs {
        insert(
            &mut nodes,
            dir,
            LayerNode {
                mode: mode(cdir),
                uid: cdir.uid,
                gid: cdir.gid,
                payload: Payload::Dir,
            },
        )?;
    }
    // Every parent must be in the layer (or be the root).
    for path in nodes.keys() {
        let parent = Path::new(path)
            .parent()
            .map(|p| p.to_string_lossy().into_owned());
        match parent.as_deref() {
            Some("/") | None => {}
            Some(p) if matches!(nodes.get(p).map(|n| &n.payload), Some(Payload::Dir)) => {}
            Some(p) => {
                return Err(ImageError::Layer(format!(
                    "{path} has no parent directory {p} in the recipe"
                )))
            }
        }
    }

    let mut tar = tar::Builder::new(Vec::new());
    let mut entries = Vec::with_capacity(nodes.len());
    for (path, node) in &nodes {
        let mut header = tar::Header::new_ustar();
        header.set_mtime(0);
        header.set_uid(node.uid.into());
        header.set_gid(node.gid.into());
        header.set_mode(node.mode);
        let rel = path.trim_start_matches('/');
        let (kind, size, sha256) = match node.payload {
            Payload::Dir => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_size(0);
                tar.append_data(&mut header, format!("{rel}/"), std::io::empty())
                    .map_err(|e| ImageError::Layer(format!("{path}: {e}")))?;
                ("dir", 0, None)
            }
            Payload::File(bytes) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_size(bytes.len() as u64);
                tar.append_data(&mut header, rel, bytes)
                    .map_err(|e| ImageError::Layer(format!("{path}: {e}")))?;
                ("file", bytes.len() as u64, Some(sha256_hex(bytes)))
            }
        };
        entries.push(LayerEntry {
            path: path.clone(),
            kind: kind.to_string(),
            mode: format!("{:04o}", node.mode),
            uid: node.uid,
            gid: node.gid,
            size,
            sha256,
        });
    }
    let layer = tar
        .into_inner()
        .map_err(|e| ImageError::Layer(e.to_string()))?;
    let diff_id = format!("sha256:{}", sha256_hex(&layer));

    let config = config_json(recipe, recipe_bytes, &diff_id);
    let hex = sha256_hex(&config);
    Ok(Image {
        layer,
        layer_manifest: LayerManifest {
            diff_id: diff_id.clone(),
            entries,
        },
        diff_id,
        tag: format!("{}:{}", recipe.repository, &hex[..12]),
        id: format!("sha256:{hex}"),
        config,
    })
}

fn insert<'a>(
    nodes: &mut BTreeMap<String, LayerNode<'a>>,
    path: String,
    node: LayerNode<'a>,
) -> Result<(), ImageError> {
    if nodes.contains_key(&path) {
        return Err(ImageError::Layer(format!("{path} appears twice")));
    }
    nodes.insert(path, node);
    Ok(())
}

/// The image config, keys in a fixed (alphabetical) order, compact.
#[derive(Serialize)]
struct ConfigDoc<'a> {
    architecture: &'a str,
    config: RunConfig<'a>,
    created: &'a str,
    history: [History<'a>; 1],
    os: &'a str,
    rootfs: RootFs<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct RunConfig<'a> {
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    cmd: &'a [String],
    entrypoint: &'a [String],
    env: &'a [String],
    labels: &'a BTreeMap<String, String>,
    user: &'a str,
    working_dir: &'a str,
}

#[derive(Serialize)]
struct History<'a> {
    comment: String,
    created: &'a str,
    created_by: &'a str,
}

#[derive(Serialize)]
struct RootFs<'a> {
    diff_ids: [&'a str; 1],
    #[serde(rename = "type")]
    kind: &'a str,
}

fn config_json(recipe: &Recipe, recipe_bytes: &[u8], diff_id: &str) -> Vec<u8> {
    let doc = ConfigDoc {
        architecture: &recipe.architecture,
        config: RunConfig {
            cmd: &recipe.cmd,
            entrypoint: &recipe.entrypoint,
            env: &recipe.env,
            labels: &recipe.labels,
            user: &recipe.user,
            working_dir: &recipe.working_dir,
        },
        created: &recipe.created,
        history: [History {
            comment: format!("images/recipe.json sha256:{}", sha256_hex(recipe_bytes)),
            created: &recipe.created,
            created_by: "scopebox (generated layer, no base image)",
        }],
        os: &recipe.os,
        rootfs: RootFs {
            diff_ids: [diff_id],
            kind: "layers",
        },
    };
    serde_json::to_vec(&doc).expect("an image config always serializes")
}

/// The docker-archive (`docker save` format) for `POST /images/load`: `manifest.json`, the
/// config as `<hex>.json`, the layer as `<hex>/layer.tar`. Deterministic like the layer.
pub fn docker_archive(image: &Image) -> Vec<u8> {
    let config_name = format!("{}.json", image.id.trim_start_matches("sha256:"));
    let layer_name = format!("{}/layer.tar", image.diff_id.trim_start_matches("sha256:"));
    let manifest = serde_json::json!([{
        "Config": config_name,
        "RepoTags": [image.tag],
        "Layers": [layer_name],
    }]);
    let manifest = serde_json::to_vec(&manifest).expect("a manifest always serializes");
    let layer_dir = format!("{}/", image.diff_id.trim_start_matches("sha256:"));
    let mut files: Vec<(String, Option<&[u8]>)> = vec![
        (config_name.clone(), Some(&image.config)),
        (layer_dir, None),
        (layer_name, Some(&image.layer)),
        ("manifest.json".to_string(), Some(&manifest)),
    ];
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut tar = tar::Builder::new(Vec::new());
    for (name, bytes) in files {
        let mut header = tar::Header::new_ustar();
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        match bytes {
            None => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_size(0);
                tar.append_data(&mut header, &name, std::io::empty())
            }
            Some(bytes) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(0o644);
                header.set_size(bytes.len() as u64);
                tar.append_data(&mut header, &name, bytes)
            }
        }
        .expect("writing a tar into memory cannot fail");
    }
    tar.into_inner()
        .expect("finishing an in-memory tar cannot fail")
}

/// How the engine's inspection matched the computed identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdMatch {
    /// `Id` is sha256 of our config (the classic image store).
    ConfigDigest,
    /// `Id` is a manifest digest (the containerd image store): accepted when the image carries
    /// our tag and exactly our layer.
    ManifestDigest,
}

/// Check an image inspection against the computed identity.
pub fn check_loaded(image: &Image, inspect: &serde_json::Value) -> Result<IdMatch, ImageError> {
    let reported = inspect
        .get("Id")
        .and_then(|v| v.as_str())
        .ok_or_else(|| ImageError::Inspect("no Id".into()))?;
    if reported == image.id {
        return Ok(IdMatch::ConfigDigest);
    }
    let layers: Vec<&str> = inspect
        .pointer("/RootFS/Layers")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|l| l.as_str()).collect())
        .unwrap_or_default();
    let tagged = inspect
        .get("RepoTags")
        .and_then(|v| v.as_array())
        .is_some_and(|tags| tags.iter().any(|t| t.as_str() == Some(&image.tag)));
    if tagged && layers == [image.diff_id.as_str()] {
        return Ok(IdMatch::ManifestDigest);
    }
    Err(ImageError::IdMismatch {
        computed: image.id.clone(),
        reported: reported.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::workspace_root;

    fn inputs() -> (Recipe, Vec<u8>, Vec<ArchiveFile>) {
        let (recipe, bytes) = Recipe::load(&workspace_root()).unwrap();
        let candidate = vec![ArchiveFile {
            path: "bin/mcpscope".into(),
            mode: 0o755,
            bytes: b"candidate".to_vec(),
        }];
        (recipe, bytes, candidate)
    }

    fn contents(candidate: &[ArchiveFile]) -> Contents<'_> {
        Contents {
            candidate,
            runner: b"runner",
            sentinel: b"sentinel",
            matrix: b"{}",
        }
    }

    #[test]
    fn identical_inputs_give_an_identical_image_id() {
        let (recipe, bytes, candidate) = inputs();
        let a = build(&recipe, &bytes, &contents(&candidate)).unwrap();
        let b = build(&recipe, &bytes, &contents(&candidate)).unwrap();
        assert_eq!(a.layer, b.layer);
        assert_eq!(a.config, b.config);
        assert_eq!(a.id, b.id);
        assert_eq!(docker_archive(&a), docker_archive(&b));
        assert_eq!(a.id, format!("sha256:{}", sha256_hex(&a.config)));
        assert_eq!(a.diff_id, format!("sha256:{}", sha256_hex(&a.layer)));
        // A different candidate gives a different image.
        let other = vec![ArchiveFile {
            bytes: b"other".to_vec(),
            ..candidate[0].clone()
        }];
        let c = build(&recipe, &bytes, &contents(&other)).unwrap();
        assert_ne!(a.id, c.id);
    }

    #[test]
    fn the_config_names_the_layer_and_the_fixed_creation_time() {
        let (recipe, bytes, candidate) = inputs();
        let image = build(&recipe, &bytes, &contents(&candidate)).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&image.config).unwrap();
        assert_eq!(doc["created"], "1970-01-01T00:00:00Z");
        assert_eq!(doc["rootfs"]["diff_ids"][0], image.diff_id.as_str());
        assert_eq!(doc["config"]["User"], "1000:1000");
        assert_eq!(doc["config"]["Entrypoint"][0], layout::RUNNER_BIN);
        assert_eq!(doc["architecture"], "amd64");
    }

    #[test]
    fn the_layer_holds_evidence_owned_by_the_container_user_and_every_file() {
        let (recipe, bytes, candidate) = inputs();
        let image = build(&recipe, &bytes, &contents(&candidate)).unwrap();
        let find = |p: &str| {
            image
                .layer_manifest
                .entries
                .iter()
                .find(|e| e.path == p)
                .unwrap_or_else(|| panic!("{p} missing"))
                .clone()
        };
        let evidence = find("/evidence");
        assert_eq!(
            (evidence.uid, evidence.gid, evidence.kind.as_str()),
            (1000, 1000, "dir")
        );
        let bin = find(layout::CANDIDATE_BIN);
        assert_eq!(
            bin.sha256.as_deref(),
            Some(sha256_hex(b"candidate").as_str())
        );
        assert_eq!(bin.mode, "0755");
        assert_eq!(find("/scopebox/candidate/bin").kind, "dir");
        assert_eq!(find(layout::RUNNER_BIN).sha256, Some(sha256_hex(b"runner")));
        assert_eq!(find(layout::MATRIX_PATH).sha256, Some(sha256_hex(b"{}")));
        // Entries come sorted, and the tar agrees with the manifest.
        let paths: Vec<_> = image
            .layer_manifest
            .entries
            .iter()
            .map(|e| &e.path)
            .collect();
        let mut sorted = paths.clone();
        sorted.sort();
        assert_eq!(paths, sorted);
        let mut tar = tar::Archive::new(image.layer.as_slice());
        let count = tar.entries().unwrap().count();
        assert_eq!(count, image.layer_manifest.entries.len());
    }

    #[test]
    fn a_recipe_that_moves_the_runner_is_refused() {
        let (mut recipe, _, _) = inputs();
        recipe.files.runner.path = "/bin/runner".into();
        let err = recipe.check().unwrap_err();
        assert!(err.to_string().contains("the layout requires"), "{err}");
    }

    #[test]
    fn a_reported_id_other_than_the_config_digest_is_refused() {
        let (recipe, bytes, candidate) = inputs();
        let image = build(&recipe, &bytes, &contents(&candidate)).unwrap();
        let ok = serde_json::json!({"Id": image.id});
        assert_eq!(check_loaded(&image, &ok).unwrap(), IdMatch::ConfigDigest);
        let other = serde_json::json!({"Id": format!("sha256:{}", "1".repeat(64))});
        assert!(matches!(
            check_loaded(&image, &other),
            Err(ImageError::IdMismatch { .. })
        ));
        let manifest = serde_json::json!({
            "Id": format!("sha256:{}", "2".repeat(64)),
            "RepoTags": [image.tag],
            "RootFS": {"Layers": [image.diff_id]},
        });
        assert_eq!(
            check_loaded(&image, &manifest).unwrap(),
            IdMatch::ManifestDigest
        );
    }
}
