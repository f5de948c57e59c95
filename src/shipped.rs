//! What scopebox ships inside its own binary, so a copied or installed `scopebox` works from
//! any directory: the shipped matrix files (the list in `harness/matrix/shipped.json`), the
//! image recipe and the boundary policy, compiled in with `include_bytes!`; and where the
//! sources of the static binaries are found (the checkout it was built from, else one found
//! from the current directory upward). Relative default paths (`out/runs`, `out/pack`) are
//! always relative to the current directory, never to the build checkout.

use crate::boundary::BoundaryError;
use crate::exit::CommandError;
use crate::image::ImageError;
use crate::image::Recipe;
use scopebox_schema::policy::BoundaryPolicy;
use std::path::{Path, PathBuf};

/// The shipped matrix files, by name, in the order `harness/matrix/shipped.json` lists them
/// (a unit test holds the two lists, and these bytes, equal to the checkout's files).
pub const MATRICES: [(&str, &[u8]); 4] = [
    (
        "claude-code.json",
        include_bytes!("../harness/matrix/claude-code.json"),
    ),
    (
        "vscode.json",
        include_bytes!("../harness/matrix/vscode.json"),
    ),
    ("dsh.json", include_bytes!("../harness/matrix/dsh.json")),
    (
        "clients.json",
        include_bytes!("../harness/matrix/clients.json"),
    ),
];

/// `images/recipe.json`, as built in.
pub const RECIPE: &[u8] = include_bytes!("../images/recipe.json");

/// `images/boundary-policy.json`, as built in.
pub const POLICY: &[u8] = include_bytes!("../images/boundary-policy.json");

/// How a built-in file is named in messages: its checkout path, marked as built in.
fn label(rel: &str) -> PathBuf {
    PathBuf::from(format!("{rel} (built in)"))
}

/// The shipped matrix files as (label, bytes), to be joined as one matrix.
pub fn matrices() -> Vec<(PathBuf, Vec<u8>)> {
    MATRICES
        .iter()
        .map(|(name, bytes)| {
            (
                label(&format!("{}/{name}", scopebox_schema::shipped::MATRIX_DIR)),
                bytes.to_vec(),
            )
        })
        .collect()
}

/// The built-in boundary policy, read strictly; with its exact bytes.
pub fn policy() -> Result<(BoundaryPolicy, Vec<u8>), BoundaryError> {
    let policy = serde_json::from_slice(POLICY).map_err(|source| BoundaryError::Parse {
        path: label(crate::image::POLICY_FILE),
        source,
    })?;
    Ok((policy, POLICY.to_vec()))
}

/// The built-in image recipe, checked; with its exact bytes.
pub fn recipe() -> Result<(Recipe, Vec<u8>), ImageError> {
    Ok((Recipe::parse(RECIPE)?, RECIPE.to_vec()))
}

/// The repository the native reference's images are tagged in (`images/native-recipe.json`).
pub fn native_repository() -> Result<String, ImageError> {
    Ok(Recipe::parse(crate::native::run::NATIVE_RECIPE)?.repository)
}

/// Whether `dir` is a scopebox checkout: the workspace manifest with the packages the static
/// builds need.
fn is_checkout(dir: &Path) -> bool {
    dir.join("Cargo.toml").is_file()
        && dir.join("inventory/Cargo.toml").is_file()
        && dir.join("harness/Cargo.toml").is_file()
        && std::fs::read_to_string(dir.join("Cargo.toml"))
            .is_ok_and(|text| text.contains("name = \"scopebox\""))
}

/// The sources the static binaries are built from: the checkout this binary was built from
/// while it exists, else the nearest checkout at or above `cwd`.
pub fn source_root_from(built_from: &Path, cwd: &Path) -> Option<PathBuf> {
    if is_checkout(built_from) {
        return Some(built_from.to_path_buf());
    }
    cwd.ancestors()
        .find(|d| is_checkout(d))
        .map(Path::to_path_buf)
}

/// [`source_root_from`] for this binary and the current directory; a clear usage error when
/// there is none.
pub fn source_root() -> Result<PathBuf, CommandError> {
    let built_from = crate::toolchain::workspace_root();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    source_root_from(&built_from, &cwd).ok_or_else(|| {
        CommandError::Usage(format!(
            "no scopebox checkout to build the static binaries from: {} is gone and none is at or above {}; run scopebox from a checkout (cargo builds mcpscope and the harness from source)",
            built_from.display(),
            cwd.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::workspace_root;

    #[test]
    fn the_built_in_files_are_the_checkouts_and_the_manifests_list() {
        let root = workspace_root();
        let names: Vec<&str> = MATRICES.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, scopebox_schema::shipped::manifest().matrices);
        for (name, bytes) in MATRICES {
            let on_disk =
                std::fs::read(root.join(scopebox_schema::shipped::MATRIX_DIR).join(name)).unwrap();
            assert!(on_disk == bytes, "{name} differs from the checkout's");
        }
        assert_eq!(
            std::fs::read(root.join(crate::image::RECIPE_FILE)).unwrap(),
            RECIPE
        );
        assert_eq!(
            std::fs::read(root.join(crate::image::POLICY_FILE)).unwrap(),
            POLICY
        );
        assert_eq!(
            policy().unwrap().0,
            crate::boundary::load_policy(&root).unwrap().0
        );
        recipe().unwrap();
    }

    #[test]
    fn the_sources_are_the_build_checkout_else_the_nearest_one_above_the_current_directory() {
        let root = workspace_root();
        let gone = Path::new("/nonexistent/scopebox");
        let below = root.join("harness/matrix");
        assert_eq!(source_root_from(&root, Path::new("/")), Some(root.clone()));
        assert_eq!(source_root_from(gone, &below), Some(root.clone()));
        assert_eq!(source_root_from(gone, Path::new("/")), None);
    }
}
