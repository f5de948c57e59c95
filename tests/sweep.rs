//! Sweeps against the real engine. Leftovers whose owner process is gone are removed; objects
//! of a live run are not; `--keep-on-failure` objects survive ordinary sweeps until
//! `scopebox sweep` removes them.

use crate::support::{
    assert_no_reaper_remains, labelled, run_id, run_matrix, scopebox, sweeping, tempdir,
    with_engine, workspace,
};
use scopebox::boundary;
use scopebox::engine::{Engine, Labels, KEEP_LABEL, OWNER_LABEL, RUN_LABEL};
use scopebox::image::{self, Contents};
use scopebox_schema::platform::Platform;

fn labels(run: &str, owner: String) -> Labels {
    let mut l = Labels::new();
    l.insert(RUN_LABEL.into(), run.into());
    l.insert(OWNER_LABEL.into(), owner);
    l
}

pub fn leftovers_of_dead_runs_are_swept_and_live_ones_stay() {
    sweeping(dead_leftovers_go_and_live_ones_stay)
}

fn dead_leftovers_go_and_live_ones_stay() {
    let host = boundary::hostname();
    let dead_run = format!("e2e-dead-{}", std::process::id());
    let live_run = format!("e2e-live-{}", std::process::id());
    // An image for a container that is created but never started.
    let root = workspace();
    let (recipe, recipe_bytes) = image::load_recipe(&root).unwrap();
    let (policy, _) = boundary::load_policy(&root).unwrap();
    let candidate = vec![scopebox_receipts::archive::ArchiveFile {
        path: "bin/mcpscope".into(),
        mode: 0o755,
        bytes: b"never run".to_vec(),
    }];
    let img = image::build(
        &recipe,
        &recipe_bytes,
        &Contents {
            platform: Platform::LinuxAmd64,
            candidate: &candidate,
            runner: b"never run",
            sentinel: b"never run",
            matrix: b"{}",
            witnesses: &[],
        },
    )
    .unwrap();
    let dead = labels(&dead_run, format!("{host}/4294967295"));
    let live = labels(&live_run, format!("{host}/{}", std::process::id()));
    with_engine(async |e| {
        e.load_image(image::docker_archive(&img)).await.unwrap();
        let names = boundary::Names::for_run(&dead_run);
        e.create_volume(&names.volume, &dead).await.unwrap();
        e.create_container(
            &names.container,
            &boundary::sandbox(
                &policy,
                &img.id,
                scopebox_schema::platform::Platform::LinuxAmd64,
                &names.volume,
                &dead,
                None,
            ),
        )
        .await
        .unwrap();
        e.create_volume(&boundary::Names::for_run(&live_run).volume, &live)
            .await
            .unwrap();
    });
    assert_eq!(labelled(&format!("{RUN_LABEL}={dead_run}")).len(), 2);

    let out = scopebox(&["sweep", "--json"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(labelled(&format!("{RUN_LABEL}={dead_run}")).is_empty());
    let still = labelled(&format!("{RUN_LABEL}={live_run}"));
    assert_eq!(still.len(), 1, "the live run's volume must stay");
    with_engine(async |e| e.remove_volume(&still[0].id).await.unwrap());
}

pub fn keep_on_failure_keeps_the_objects_until_scopebox_sweep() {
    sweeping(kept_objects_stay_until_scopebox_sweep)
}

fn kept_objects_stay_until_scopebox_sweep() {
    let dir = tempdir();
    let out = run_matrix(
        &dir.path().join("b"),
        &workspace().join("harness/matrix/faults/stall.json"),
        // One container: with shards, whether the stall's sibling finished before the deadline
        // (removed) or not (kept too) would be a matter of timing.
        &[
            "--deadline",
            "3",
            "--keep-on-failure",
            "--platform",
            "linux/amd64",
            "--shards",
            "1",
        ],
    );
    assert_eq!(out.code, 124, "{}", out.stderr);
    assert!(
        out.stderr.contains("remove them with: scopebox sweep"),
        "{}",
        out.stderr
    );
    let run = run_id(&out.stdout);
    // The run told its reaper it was done, keeping its objects on purpose: once the reaper is
    // gone, they are still there.
    assert_no_reaper_remains(&run);
    let label = format!("{RUN_LABEL}={run}");
    let kept = labelled(&label);
    assert_eq!(kept.len(), 2, "container and volume kept: {kept:?}");
    assert!(kept.iter().all(|o| o.labels.contains_key(KEEP_LABEL)));
    // An ordinary (start-of-run) sweep leaves kept objects alone…
    let report = with_engine(async |e| {
        scopebox::run::sweep_stale(e, false, scopebox::run::owner_is_live)
            .await
            .unwrap()
    });
    assert!(kept.iter().all(|o| !report.removed.contains(&o.id)));
    assert_eq!(labelled(&label).len(), 2);
    // …and `scopebox sweep` removes them.
    let out = scopebox(&["sweep"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(labelled(&label).is_empty());
}
