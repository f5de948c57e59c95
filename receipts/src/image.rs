//! The evidence image as a pure function of its inputs, shared by the orchestrator (which loads
//! it) and the verifier (which regenerates it from the bundle and trusts nothing recorded): one
//! deterministic layer tar (candidate files unpacked from the archive, runner, sentinel, the
//! witness binaries for every machine, the matrix, an empty `/evidence` owned by the container
//! user, mount points for the tmpfs fixture roots), and an image config JSON with a fixed
//! `created`, the platform's `architecture`/`variant` and the recipe's sha256 in its history.
//! The image ID is `sha256:` + sha256 of the exact config bytes. The recipe (paths, modes,
//! owners, entrypoint, env) is `images/recipe.json`. Pure: no I/O, no engine.

use crate::archive::ArchiveFile;
use crate::digest::sha256_hex;
use crate::layout;
use crate::platform::Platform;
use crate::receipt::{LayerEntry, LayerManifest};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The recipe schema this code generates from.
pub const RECIPE_SCHEMA_VERSION: u32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("parse the image recipe: {0}")]
    ParseRecipe(#[source] crate::strict_json::StrictJsonError),
    #[error("accept image recipe: {0}")]
    Recipe(String),
    #[error("build the image layer: {0}")]
    Layer(String),
}

/// `images/recipe.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Recipe {
    /// `RECIPE_SCHEMA_VERSION`.
    pub schema_version: u32,
    /// Repository part of the tag the image is loaded under.
    pub repository: String,
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
    /// Where the witness binaries go, one per machine: `<path>/<machine>/scopebox-witness`;
    /// `mode` applies to the per-machine directories and the binaries.
    pub witness_dir: Node,
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
    /// Parse and check recipe bytes (strictly: unknown fields are refused).
    pub fn parse(bytes: &[u8]) -> Result<Recipe, ImageError> {
        let recipe: Recipe =
            crate::strict_json::from_slice(bytes).map_err(ImageError::ParseRecipe)?;
        recipe.check()?;
        Ok(recipe)
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
            (
                "witnessDir",
                &self.files.witness_dir.path,
                layout::WITNESS_DIR,
            ),
        ];
        if self.schema_version != RECIPE_SCHEMA_VERSION {
            return Err(ImageError::Recipe(format!(
                "schemaVersion {}, expected {RECIPE_SCHEMA_VERSION}",
                self.schema_version
            )));
        }
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
            &self.files.witness_dir,
        ])
    }
}

fn parse_mode(text: &str) -> Result<u32, String> {
    u32::from_str_radix(text, 8)
        .ok()
        .filter(|m| *m <= 0o7777)
        .ok_or_else(|| format!("mode {text:?} is not octal permission bits"))
}

/// A witness binary for one machine (`x86_64`, `aarch64`).
#[derive(Debug, Clone, Copy)]
pub struct WitnessBinary<'a> {
    pub machine: &'a str,
    pub bytes: &'a [u8],
}

/// What goes into the image besides the recipe's directories.
pub struct Contents<'a> {
    /// Whose image this is: its config's `architecture`/`variant`.
    pub platform: Platform,
    /// The candidate archive's files, unpacked.
    pub candidate: &'a [ArchiveFile],
    pub runner: &'a [u8],
    pub sentinel: &'a [u8],
    pub matrix: &'a [u8],
    /// Every machine's witness binary (empty while none is built).
    pub witnesses: &'a [WitnessBinary<'a>],
}

/// A generated image: its layer, config and identity.
#[derive(Debug, Clone)]
pub struct Image {
    pub layer: Vec<u8>,
    /// `"sha256:<hex>"` of `layer`.
    pub diff_id: String,
    pub layer_manifest: LayerManifest,
    /// The exact config bytes; the image ID is their digest.
    pub config: Vec<u8>,
    /// `"sha256:<hex>"`.
    pub id: String,
    /// `"<repository>:<first 12 hex of the id>"`.
    pub tag: String,
}

enum Payload<'a> {
    Dir,
    File(&'a [u8]),
    Symlink(&'a str),
}

/// A node added beside the recipe's (the native image's client binary, C runtime files and
/// links): owned by root, its parents created (0755, root) when the recipe lacks them. A
/// symlink's layer-manifest entry has kind `symlink`, `size` the target's length and `sha256`
/// the target's digest (the target itself is in the layer).
#[derive(Debug, Clone, Copy)]
pub struct Extra<'a> {
    pub path: &'a str,
    pub mode: u32,
    pub payload: ExtraPayload<'a>,
}

#[derive(Debug, Clone, Copy)]
pub enum ExtraPayload<'a> {
    File(&'a [u8]),
    Symlink(&'a str),
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
    build_with(recipe, recipe_bytes, contents, &[])
}

/// `build` with `extra` nodes beside the recipe's (see `Extra`). Pure as well.
pub fn build_with(
    recipe: &Recipe,
    recipe_bytes: &[u8],
    contents: &Contents,
    extra: &[Extra],
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
    let wdir = &recipe.files.witness_dir;
    for witness in contents.witnesses {
        if !witness
            .machine
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
            || witness.machine.is_empty()
        {
            return Err(ImageError::Layer(format!(
                "witness machine {:?} is not a machine name",
                witness.machine
            )));
        }
        insert(
            &mut nodes,
            format!("{}/{}", wdir.path, witness.machine),
            LayerNode {
                mode: mode(wdir),
                uid: wdir.uid,
                gid: wdir.gid,
                payload: Payload::Dir,
            },
        )?;
        insert(
            &mut nodes,
            format!("{}/{}/{}", wdir.path, witness.machine, layout::WITNESS_NAME),
            LayerNode {
                mode: mode(wdir),
                uid: wdir.uid,
                gid: wdir.gid,
                payload: Payload::File(witness.bytes),
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
    for e in extra {
        if !e.path.starts_with('/')
            || e.path.ends_with('/')
            || e.path
                .split('/')
                .skip(1)
                .any(|c| c.is_empty() || c == "." || c == "..")
        {
            return Err(ImageError::Layer(format!(
                "extra path {:?} is not absolute and normalized",
                e.path
            )));
        }
        let parts: Vec<&str> = e.path.split('/').collect();
        for depth in 2..parts.len() {
            let dir = parts[..depth].join("/");
            nodes.entry(dir).or_insert(LayerNode {
                mode: 0o755,
                uid: 0,
                gid: 0,
                payload: Payload::Dir,
            });
        }
        insert(
            &mut nodes,
            e.path.to_string(),
            LayerNode {
                mode: e.mode,
                uid: 0,
                gid: 0,
                payload: match e.payload {
                    ExtraPayload::File(bytes) => Payload::File(bytes),
                    ExtraPayload::Symlink(target) => Payload::Symlink(target),
                },
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
            Payload::Symlink(target) => {
                header.set_entry_type(tar::EntryType::Symlink);
                header.set_size(0);
                tar.append_link(&mut header, rel, target)
                    .map_err(|e| ImageError::Layer(format!("{path}: {e}")))?;
                (
                    "symlink",
                    target.len() as u64,
                    Some(sha256_hex(target.as_bytes())),
                )
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

    let config = config_json(recipe, recipe_bytes, contents.platform, &diff_id);
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
    #[serde(skip_serializing_if = "Option::is_none")]
    variant: Option<&'a str>,
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

/// The comment the config's history carries: it binds the recipe's exact bytes.
pub fn recipe_comment(recipe_bytes: &[u8]) -> String {
    format!("images/recipe.json sha256:{}", sha256_hex(recipe_bytes))
}

fn config_json(recipe: &Recipe, recipe_bytes: &[u8], platform: Platform, diff_id: &str) -> Vec<u8> {
    let doc = ConfigDoc {
        architecture: platform.oci_architecture(),
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
            comment: recipe_comment(recipe_bytes),
            created: &recipe.created,
            created_by: "scopebox (generated layer, no base image)",
        }],
        os: platform.os(),
        rootfs: RootFs {
            diff_ids: [diff_id],
            kind: "layers",
        },
        variant: platform.oci_variant(),
    };
    serde_json::to_vec(&doc).expect("an image config always serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECIPE: &[u8] = include_bytes!("../../images/recipe.json");

    fn candidate() -> Vec<ArchiveFile> {
        vec![ArchiveFile {
            path: "bin/mcpscope".into(),
            mode: 0o755,
            bytes: b"candidate".to_vec(),
        }]
    }

    fn contents<'a>(
        platform: Platform,
        candidate: &'a [ArchiveFile],
        witnesses: &'a [WitnessBinary<'a>],
    ) -> Contents<'a> {
        Contents {
            platform,
            candidate,
            runner: b"runner",
            sentinel: b"sentinel",
            matrix: b"{}",
            witnesses,
        }
    }

    #[test]
    fn identical_inputs_give_an_identical_image_id_per_platform() {
        let recipe = Recipe::parse(RECIPE).unwrap();
        let files = candidate();
        let mut ids = Vec::new();
        for platform in Platform::ALL {
            let a = build(&recipe, RECIPE, &contents(platform, &files, &[])).unwrap();
            let b = build(&recipe, RECIPE, &contents(platform, &files, &[])).unwrap();
            assert_eq!(a.layer, b.layer);
            assert_eq!(a.config, b.config);
            assert_eq!(a.id, b.id);
            assert_eq!(a.id, format!("sha256:{}", sha256_hex(&a.config)));
            assert_eq!(a.diff_id, format!("sha256:{}", sha256_hex(&a.layer)));
            ids.push(a.id);
        }
        // Same layer, other architecture: another image.
        assert_ne!(ids[0], ids[1]);
        let other = vec![ArchiveFile {
            bytes: b"other".to_vec(),
            ..files[0].clone()
        }];
        let c = build(
            &recipe,
            RECIPE,
            &contents(Platform::LinuxAmd64, &other, &[]),
        )
        .unwrap();
        assert_ne!(ids[0], c.id);
    }

    #[test]
    fn the_config_names_the_platform_the_layer_and_the_recipe() {
        let recipe = Recipe::parse(RECIPE).unwrap();
        let files = candidate();
        let arm = build(
            &recipe,
            RECIPE,
            &contents(Platform::LinuxArm64, &files, &[]),
        )
        .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&arm.config).unwrap();
        assert_eq!(doc["architecture"], "arm64");
        assert_eq!(doc["variant"], "v8");
        assert_eq!(doc["os"], "linux");
        assert_eq!(doc["created"], "1970-01-01T00:00:00Z");
        assert_eq!(doc["rootfs"]["diff_ids"][0], arm.diff_id.as_str());
        assert_eq!(doc["config"]["User"], "1000:1000");
        assert_eq!(doc["config"]["Entrypoint"][0], layout::RUNNER_BIN);
        assert_eq!(
            doc["history"][0]["comment"],
            recipe_comment(RECIPE).as_str()
        );
        let amd = build(
            &recipe,
            RECIPE,
            &contents(Platform::LinuxAmd64, &files, &[]),
        )
        .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&amd.config).unwrap();
        assert_eq!(doc["architecture"], "amd64");
        assert!(doc.get("variant").is_none());
    }

    #[test]
    fn the_layer_holds_evidence_owned_by_the_container_user_every_file_and_each_witness() {
        let recipe = Recipe::parse(RECIPE).unwrap();
        let files = candidate();
        let witnesses = [
            WitnessBinary {
                machine: "x86_64",
                bytes: b"wx",
            },
            WitnessBinary {
                machine: "aarch64",
                bytes: b"wa",
            },
        ];
        let image = build(
            &recipe,
            RECIPE,
            &contents(Platform::LinuxAmd64, &files, &witnesses),
        )
        .unwrap();
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
        assert_eq!(
            find(&layout::witness_bin("aarch64")).sha256,
            Some(sha256_hex(b"wa"))
        );
        assert_eq!(find("/scopebox/witness/x86_64").kind, "dir");
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
        assert_eq!(
            tar.entries().unwrap().count(),
            image.layer_manifest.entries.len()
        );
    }

    #[test]
    fn a_recipe_that_moves_the_runner_or_is_of_another_version_is_refused() {
        let mut recipe = Recipe::parse(RECIPE).unwrap();
        recipe.files.runner.path = "/bin/runner".into();
        let err = recipe.check().unwrap_err();
        assert!(err.to_string().contains("the layout requires"), "{err}");
        let mut recipe = Recipe::parse(RECIPE).unwrap();
        recipe.schema_version = 1;
        assert!(recipe.check().is_err());
    }
}
