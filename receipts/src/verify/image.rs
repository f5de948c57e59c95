//! The image: its ID recomputed from the config bytes carried in the bundle, its layer
//! diff_id(s) agreeing across the config, the receipt, the layer manifest and the engine's
//! inspections, and the layer's contents tying the candidate, runner, sentinel and matrix
//! digests to what ran. It never trusts a recorded ID.

use super::{Checks, Context};
use crate::digest::{is_sha256_hex, sha256_hex};
use crate::layout;
use crate::receipt::{
    LayerManifest, PackManifest, CONTAINER_INSPECT_FILE, IMAGE_CONFIG_FILE, IMAGE_INSPECT_FILE,
    LAYER_MANIFEST_FILE, PACK_MANIFEST_FILE,
};
use serde_json::Value;
use std::collections::BTreeMap;

pub(crate) fn check(ctx: &Context, checks: &mut Checks) {
    let inputs = &ctx.receipt.inputs;

    // image.id: sha256 of the exact config bytes.
    let mut id_failures = Vec::new();
    let config_bytes = ctx.bytes(IMAGE_CONFIG_FILE);
    match &config_bytes {
        Err(e) => id_failures.push(e.clone()),
        Ok(bytes) => {
            let hex = sha256_hex(bytes);
            let id = format!("sha256:{hex}");
            if inputs.image_id != id {
                id_failures.push(format!(
                    "inputs.imageId is {}, the config's sha256 gives {id}",
                    inputs.image_id
                ));
            }
            if inputs.image_config_sha256 != hex {
                id_failures.push(format!(
                    "inputs.imageConfigSha256 is {}, the config's sha256 is {hex}",
                    inputs.image_config_sha256
                ));
            }
        }
    }
    checks.record(
        "image.id",
        "the image ID is the sha256 of the bundled image config",
        id_failures,
    );

    // image.layers: diff_ids agree everywhere; the config runs the runner as the policy user.
    let mut layer_failures = Vec::new();
    let config: Option<Value> = config_bytes
        .ok()
        .and_then(|b| serde_json::from_slice(b).ok());
    let layer_manifest = ctx.parse::<LayerManifest>(LAYER_MANIFEST_FILE);
    match &config {
        None => layer_failures.push(format!("{IMAGE_CONFIG_FILE} is not a JSON document")),
        Some(config) => {
            let diff_ids = string_list(config.pointer("/rootfs/diff_ids"));
            if diff_ids.as_ref() != Some(&inputs.layer_diff_ids) {
                layer_failures.push(format!(
                    "config rootfs.diff_ids {diff_ids:?} differ from inputs.layerDiffIds {:?}",
                    inputs.layer_diff_ids
                ));
            }
            let platform = format!(
                "{}/{}",
                config.get("os").and_then(Value::as_str).unwrap_or("?"),
                config
                    .get("architecture")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
            );
            if platform != inputs.platform {
                layer_failures.push(format!(
                    "config platform {platform}, inputs.platform {}",
                    inputs.platform
                ));
            }
            let entrypoint = string_list(config.pointer("/config/Entrypoint")).unwrap_or_default();
            if entrypoint.first().map(String::as_str) != Some(layout::RUNNER_BIN) {
                layer_failures.push(format!(
                    "config entrypoint {entrypoint:?} does not start {}",
                    layout::RUNNER_BIN
                ));
            }
            let user = config.pointer("/config/User").and_then(Value::as_str);
            if user != Some(ctx.policy.user.as_str()) {
                layer_failures.push(format!(
                    "config user {}, policy user {}",
                    user.unwrap_or("none"),
                    ctx.policy.user
                ));
            }
        }
    }
    match &layer_manifest {
        Err(e) => layer_failures.push(e.clone()),
        Ok(m) => {
            if inputs.layer_diff_ids != [m.diff_id.clone()] {
                layer_failures.push(format!(
                    "{LAYER_MANIFEST_FILE} diff_id {} is not the one layer of inputs.layerDiffIds {:?}",
                    m.diff_id, inputs.layer_diff_ids
                ));
            }
        }
    }
    for id in &inputs.layer_diff_ids {
        if !id.strip_prefix("sha256:").is_some_and(is_sha256_hex) {
            layer_failures.push(format!("layer diff_id {id:?} is not sha256:<hex>"));
        }
    }
    checks.record(
        "image.layers",
        "the layer diff_ids agree across config, receipt and layer manifest",
        layer_failures,
    );

    // image.inspect: what the engine says about the image and the container's image.
    let mut inspect_failures = Vec::new();
    match ctx.parse::<Value>(IMAGE_INSPECT_FILE) {
        Err(e) => inspect_failures.push(e),
        Ok(doc) => {
            let doc = single(&doc);
            let id = doc.get("Id").and_then(Value::as_str);
            if id != Some(inputs.image_id.as_str()) {
                inspect_failures.push(format!(
                    "image inspection Id {}, expected {}",
                    id.unwrap_or("none"),
                    inputs.image_id
                ));
            }
            let layers = string_list(doc.pointer("/RootFS/Layers"));
            if layers.as_ref() != Some(&inputs.layer_diff_ids) {
                inspect_failures.push(format!(
                    "image inspection RootFS.Layers {layers:?}, expected {:?}",
                    inputs.layer_diff_ids
                ));
            }
        }
    }
    match ctx.parse::<Value>(CONTAINER_INSPECT_FILE) {
        Err(e) => inspect_failures.push(e),
        Ok(doc) => {
            let doc = single(&doc);
            let image = doc.get("Image").and_then(Value::as_str);
            if image != Some(inputs.image_id.as_str()) {
                inspect_failures.push(format!(
                    "the container ran image {}, expected {}",
                    image.unwrap_or("none"),
                    inputs.image_id
                ));
            }
            let label = doc
                .pointer("/Config/Labels/scopebox.run")
                .and_then(Value::as_str);
            if label != Some(ctx.receipt.run_id.as_str()) {
                inspect_failures.push(format!(
                    "the container's scopebox.run label is {}, the run id {}",
                    label.unwrap_or("none"),
                    ctx.receipt.run_id
                ));
            }
        }
    }
    checks.record(
        "image.inspect",
        "the engine's inspections name this image and its layers",
        inspect_failures,
    );

    // image.contents: the layer holds the named runner, sentinel, matrix and candidate files.
    let mut content_failures = Vec::new();
    match &layer_manifest {
        Err(e) => content_failures.push(e.clone()),
        Ok(m) => {
            let entries: BTreeMap<&str, &crate::receipt::LayerEntry> =
                m.entries.iter().map(|e| (e.path.as_str(), e)).collect();
            if entries.len() != m.entries.len() {
                content_failures.push("the layer manifest lists a path twice".into());
            }
            let mut expect_file = |path: &str, sha: &str, what: &str| match entries.get(path) {
                None => content_failures.push(format!("the layer has no {what} at {path}")),
                Some(e) if e.kind != "file" || e.sha256.as_deref() != Some(sha) => content_failures
                    .push(format!(
                        "the layer's {path} has sha256 {}, the receipt names {sha} for the {what}",
                        e.sha256.as_deref().unwrap_or("none")
                    )),
                Some(_) => {}
            };
            expect_file(layout::RUNNER_BIN, &inputs.runner_sha256, "runner");
            expect_file(layout::SENTINEL_BIN, &inputs.sentinel_sha256, "sentinel");
            expect_file(layout::MATRIX_PATH, &inputs.matrix_sha256, "matrix");
            match ctx.parse::<PackManifest>(PACK_MANIFEST_FILE) {
                Err(e) => content_failures.push(e),
                Ok(pack) => {
                    for file in &pack.runtime {
                        let path = format!("{}/{}", layout::CANDIDATE_DIR, file.path);
                        match entries.get(path.as_str()) {
                            None => content_failures
                                .push(format!("the layer has no candidate file {path}")),
                            Some(e)
                                if e.kind != "file"
                                    || e.sha256.as_deref() != Some(file.sha256.as_str())
                                    || e.size != file.size =>
                            {
                                content_failures.push(format!(
                                    "the layer's {path} differs from the pack manifest"
                                ))
                            }
                            Some(_) => {}
                        }
                    }
                    let candidate_prefix = format!("{}/", layout::CANDIDATE_DIR);
                    for e in &m.entries {
                        if e.kind == "file" {
                            if let Some(rel) = e.path.strip_prefix(&candidate_prefix) {
                                if !pack.runtime.iter().any(|f| f.path == rel) {
                                    content_failures.push(format!(
                                        "the layer's {} is not in the pack manifest",
                                        e.path
                                    ));
                                }
                            }
                        }
                    }
                }
            }
            if let Some((uid, gid)) = ctx.policy.uid_gid() {
                for e in &m.entries {
                    let mode = u32::from_str_radix(&e.mode, 8).unwrap_or(0o7777);
                    if mode & 0o6000 != 0 {
                        content_failures.push(format!("{} is setuid or setgid", e.path));
                    }
                    if e.kind == "file" && (e.uid == uid || e.gid == gid || mode & 0o022 != 0) {
                        content_failures.push(format!(
                            "{} is owned by or writable for the container user",
                            e.path
                        ));
                    }
                }
                match entries.get(ctx.policy.evidence_volume.as_str()) {
                    Some(e) if e.kind == "dir" && e.uid == uid && e.gid == gid => {}
                    _ => content_failures.push(format!(
                        "the layer has no {} directory owned by {uid}:{gid}",
                        ctx.policy.evidence_volume
                    )),
                }
            }
        }
    }
    checks.record(
        "image.contents",
        "the layer carries the named candidate, runner, sentinel and matrix",
        content_failures,
    );
}

/// An inspect document as one object (`docker inspect` wraps it in an array).
fn single(doc: &Value) -> &Value {
    match doc {
        Value::Array(items) if items.len() == 1 => &items[0],
        other => other,
    }
}

fn string_list(value: Option<&Value>) -> Option<Vec<String>> {
    value?
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}
