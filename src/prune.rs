//! `scopebox prune`: remove the evidence images (`scopebox-evidence:<id12>`, the recipe's
//! repository) and the native reference's images (`scopebox-native:<id12>`, a few hundred MB
//! each: a new one for every change of mcpscope, the matrix or the lock) that no kept bundle
//! uses. A bundle is kept when it is named with `--keep`, or lies directly below a `--keep`
//! directory (default: `out/runs` and `out/native` in the current directory, those that exist);
//! the images it uses are the `imageId`s of its receipt's platforms and the image of every
//! platform directory's `inputs/image-config.json` (an image's ID is its config's sha256: how a
//! native bundle names its image). Images are content-addressed: a removed one is rebuilt, byte
//! for byte, by the next run that needs it. It decides from bundles and the engine's list only;
//! it never touches a bundle.

use crate::exit::{CommandError, Outcome};
use crate::native::run::DEFAULT_NATIVE_RUNS_DIR;
use crate::run::DEFAULT_RUNS_DIR;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct PruneArgs {
    /// A bundle directory whose images stay, or a directory of bundles (repeatable)
    /// [default: out/runs and out/native in the current directory]
    #[arg(long, value_name = "DIR")]
    pub keep: Vec<PathBuf>,
    /// Only say what would be removed
    #[arg(long)]
    pub dry_run: bool,
    /// Print a JSON summary on stdout
    #[arg(long)]
    pub json: bool,
}

/// The image IDs the bundles at (or directly below) `dirs` use, and the bundles read.
/// A directory that is neither a bundle nor holds one is a usage error: a typo must not
/// prune everything.
pub fn kept_images(dirs: &[PathBuf]) -> Result<(BTreeSet<String>, Vec<PathBuf>), CommandError> {
    let mut ids = BTreeSet::new();
    let mut bundles = Vec::new();
    for dir in dirs {
        let found = if dir.join(scopebox_schema::receipt::RECEIPT_FILE).is_file() {
            vec![dir.clone()]
        } else {
            let entries = std::fs::read_dir(dir)
                .map_err(|e| CommandError::Usage(format!("read --keep {}: {e}", dir.display())))?;
            let mut below: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join(scopebox_schema::receipt::RECEIPT_FILE).is_file())
                .collect();
            below.sort();
            below
        };
        for bundle in found {
            ids.extend(image_ids_of(&bundle)?);
            bundles.push(bundle);
        }
    }
    Ok((ids, bundles))
}

/// The largest image config a kept bundle may hold (a real one is a few kB).
const MAX_IMAGE_CONFIG_BYTES: u64 = 1024 * 1024;

/// `platforms[].inputs.imageId` of a bundle's receipt (read loosely: any schema version that
/// names image IDs keeps them), and the ID of every `platforms/*/inputs/image-config.json`.
fn image_ids_of(bundle: &Path) -> Result<Vec<String>, CommandError> {
    let mut ids = receipt_image_ids(bundle)?;
    ids.extend(config_image_ids(bundle)?);
    Ok(ids)
}

/// `sha256:` + the sha256 of each platform directory's image config (not following links: a
/// config that is not a regular file names no image).
fn config_image_ids(bundle: &Path) -> Result<Vec<String>, CommandError> {
    let platforms = bundle.join("platforms");
    let Ok(entries) = std::fs::read_dir(&platforms) else {
        return Ok(Vec::new());
    };
    let mut ids = Vec::new();
    for entry in entries.flatten() {
        let config = entry.path().join("inputs/image-config.json");
        let Ok(meta) = std::fs::symlink_metadata(&config) else {
            continue;
        };
        if !meta.is_file() || meta.len() > MAX_IMAGE_CONFIG_BYTES {
            continue;
        }
        let bytes = std::fs::read(&config).map_err(|e| {
            CommandError::Usage(format!(
                "read the kept bundle's {}: {e}; pass only bundles to --keep",
                config.display()
            ))
        })?;
        ids.push(format!(
            "sha256:{}",
            scopebox_schema::digest::sha256_hex(&bytes)
        ));
    }
    Ok(ids)
}

fn receipt_image_ids(bundle: &Path) -> Result<Vec<String>, CommandError> {
    let path = bundle.join(scopebox_schema::receipt::RECEIPT_FILE);
    let unreadable = |why: String| {
        CommandError::Usage(format!(
            "read the kept bundle {}: {why}; pass only bundles to --keep",
            path.display()
        ))
    };
    let meta = std::fs::metadata(&path).map_err(|e| unreadable(e.to_string()))?;
    if meta.len() > 64 * 1024 * 1024 {
        return Err(unreadable("receipt.json is larger than 64 MiB".into()));
    }
    let bytes = std::fs::read(&path).map_err(|e| unreadable(e.to_string()))?;
    let receipt: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string()))?;
    Ok(receipt["platforms"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| p["inputs"]["imageId"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default())
}

/// The images of `listed` (ID, tags) that no kept bundle uses.
pub fn to_remove(listed: &[(String, Vec<String>)], kept: &BTreeSet<String>) -> Vec<String> {
    listed
        .iter()
        .filter(|(id, _)| !kept.contains(id))
        .map(|(id, _)| id.clone())
        .collect()
}

/// `scopebox prune`.
pub async fn prune(args: PruneArgs) -> Result<Outcome, CommandError> {
    let keep = if args.keep.is_empty() {
        [DEFAULT_RUNS_DIR, DEFAULT_NATIVE_RUNS_DIR]
            .into_iter()
            .map(PathBuf::from)
            .filter(|d| d.is_dir())
            .collect()
    } else {
        args.keep.clone()
    };
    let (kept, bundles) = kept_images(&keep)?;
    let repositories = [
        crate::shipped::recipe()?.0.repository,
        crate::shipped::native_repository()?,
    ];
    let engine = crate::run::reach_engine().await?;
    let mut listed = Vec::new();
    for repository in &repositories {
        listed.extend(engine.list_images(repository).await?);
    }
    let remove = to_remove(&listed, &kept);
    let mut removed = Vec::new();
    let mut errors = Vec::new();
    for id in &remove {
        if args.dry_run {
            say!("scopebox: would remove image {id}");
            continue;
        }
        match crate::engine::Engine::remove_image(&engine, id).await {
            Ok(()) => removed.push(id.clone()),
            Err(e) => errors.push(crate::run::describe(&e)),
        }
    }
    for e in &errors {
        say!("scopebox: {e}");
    }
    say!(
        "scopebox: {} {} of {} {} image(s); {} kept for {} bundle(s)",
        if args.dry_run {
            "would remove"
        } else {
            "removed"
        },
        if args.dry_run {
            remove.len()
        } else {
            removed.len()
        },
        listed.len(),
        repositories.join(" and "),
        listed.len() - remove.len(),
        bundles.len()
    );
    if args.json {
        crate::exit::print_summary(&serde_json::json!({
            "ok": errors.is_empty(),
            "exitCode": if errors.is_empty() { crate::exit::SUCCESS } else { crate::exit::FAILURE },
            "dryRun": args.dry_run,
            "removed": if args.dry_run { &remove } else { &removed },
            "kept": kept,
            "bundles": bundles,
            "errors": errors,
        }));
    }
    Ok(if errors.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(dir: &Path, name: &str, ids: &[&str]) -> PathBuf {
        let b = dir.join(name);
        std::fs::create_dir_all(&b).unwrap();
        let platforms: Vec<serde_json::Value> = ids
            .iter()
            .map(|id| serde_json::json!({"inputs": {"imageId": id}}))
            .collect();
        std::fs::write(
            b.join("receipt.json"),
            serde_json::to_vec(&serde_json::json!({"platforms": platforms})).unwrap(),
        )
        .unwrap();
        b
    }

    #[test]
    fn only_images_no_kept_bundle_uses_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        bundle(&runs, "a", &["sha256:aa", "sha256:bb"]);
        bundle(&runs, "b", &["sha256:cc"]);
        std::fs::create_dir_all(runs.join("not-a-bundle")).unwrap();
        let single = bundle(dir.path(), "single", &["sha256:dd"]);
        let (kept, bundles) = kept_images(&[runs, single]).unwrap();
        assert_eq!(bundles.len(), 3);
        let listed: Vec<(String, Vec<String>)> = ["aa", "bb", "cc", "dd", "ee", "ff"]
            .iter()
            .map(|h| {
                (
                    format!("sha256:{h}"),
                    vec![format!("scopebox-evidence:{h}")],
                )
            })
            .collect();
        assert_eq!(to_remove(&listed, &kept), ["sha256:ee", "sha256:ff"]);
    }

    #[test]
    fn a_native_bundle_keeps_the_image_its_config_names() {
        // A native-only receipt names no platform image; its platform directory's image config
        // does (an image's ID is its config's sha256).
        let dir = tempfile::tempdir().unwrap();
        let native = bundle(dir.path(), "native", &[]);
        let inputs = native.join("platforms/linux-amd64/inputs");
        std::fs::create_dir_all(&inputs).unwrap();
        let config = br#"{"architecture":"amd64"}"#;
        std::fs::write(inputs.join("image-config.json"), config).unwrap();
        let id = format!("sha256:{}", scopebox_schema::digest::sha256_hex(config));
        // A config that is a link names nothing (nothing outside the bundle is read).
        let linked = bundle(dir.path(), "linked", &[]);
        let inputs = linked.join("platforms/linux-arm64/inputs");
        std::fs::create_dir_all(&inputs).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", inputs.join("image-config.json")).unwrap();
        let (kept, bundles) = kept_images(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(bundles.len(), 2);
        assert_eq!(kept, BTreeSet::from([id.clone()]));
        let listed = vec![
            (id.clone(), vec!["scopebox-native:a".to_string()]),
            (
                "sha256:ee".to_string(),
                vec!["scopebox-native:b".to_string()],
            ),
        ];
        assert_eq!(to_remove(&listed, &kept), ["sha256:ee"]);
    }

    #[test]
    fn a_keep_path_that_is_no_directory_is_refused_rather_than_pruning_everything() {
        let err = kept_images(&[PathBuf::from("/nonexistent/runs")]).unwrap_err();
        assert_eq!(err.code(), crate::exit::USAGE);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("receipt.json"), b"{not json").unwrap();
        let err = kept_images(&[dir.path().to_path_buf()]).unwrap_err();
        assert!(err.to_string().contains("pass only bundles"), "{err}");
    }
}
