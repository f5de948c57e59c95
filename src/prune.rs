//! `scopebox prune`: remove the evidence images (`scopebox-evidence:<id12>`, the recipe's
//! repository) that no kept bundle uses. A bundle is kept when it is named with `--keep`, or
//! lies directly below a `--keep` directory (default: `out/runs` in the current directory, when
//! it exists); the images it uses are the `imageId`s of its receipt's platforms. Images are
//! content-addressed: a removed one is rebuilt, byte for byte, by the next run that needs it.
//! It decides from receipts and the engine's list only; it never touches a bundle.

use crate::exit::{CommandError, Outcome};
use crate::run::DEFAULT_RUNS_DIR;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct PruneArgs {
    /// A bundle directory whose images stay, or a directory of bundles (repeatable)
    /// [default: out/runs in the current directory]
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

/// `platforms[].inputs.imageId` of a bundle's receipt (read loosely: any schema version that
/// names image IDs keeps them).
fn image_ids_of(bundle: &Path) -> Result<Vec<String>, CommandError> {
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
        let default = PathBuf::from(DEFAULT_RUNS_DIR);
        if default.is_dir() {
            vec![default]
        } else {
            Vec::new()
        }
    } else {
        args.keep.clone()
    };
    let (kept, bundles) = kept_images(&keep)?;
    let (recipe, _) = crate::shipped::recipe()?;
    let engine = crate::run::reach_engine().await?;
    let listed = engine.list_images(&recipe.repository).await?;
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
        recipe.repository,
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
    fn a_keep_path_that_is_no_directory_is_refused_rather_than_pruning_everything() {
        let err = kept_images(&[PathBuf::from("/nonexistent/runs")]).unwrap_err();
        assert_eq!(err.code(), crate::exit::USAGE);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("receipt.json"), b"{not json").unwrap();
        let err = kept_images(&[dir.path().to_path_buf()]).unwrap_err();
        assert!(err.to_string().contains("pass only bundles"), "{err}");
    }
}
