//! The controls: the sentinel positive control proved detection works inside this boundary
//! (marker absent, sentinel ran, marker appeared, marker removed), and the executing negative
//! control was caught by the same check. The runner's `controls.json` is the source; the
//! receipt's copy must equal it. It never accepts a control the record does not show behaving.

use super::{Checks, Context};
use crate::evidence::{Controls, CONTROLS_FILE};
use crate::receipt::EVIDENCE_DIR;

pub(crate) fn controls_path() -> String {
    format!("{EVIDENCE_DIR}/{CONTROLS_FILE}")
}

pub(crate) fn check(ctx: &Context, checks: &mut Checks) {
    let path = controls_path();
    let controls = ctx.parse::<Controls>(&path);
    let (mut positive, mut negative, mut recorded) = (Vec::new(), Vec::new(), Vec::new());
    match &controls {
        Err(e) => {
            positive.push(e.clone());
            negative.push(e.clone());
            recorded.push(e.clone());
        }
        Ok(c) => {
            let p = &c.positive;
            if p.marker_present_before {
                positive.push("the marker was present before the sentinel ran".into());
            }
            if p.sentinel_exit_code != Some(0) {
                positive.push(format!(
                    "the sentinel exited {:?}, expected Some(0)",
                    p.sentinel_exit_code
                ));
            }
            if !p.marker_appeared {
                positive.push("the marker did not appear when the sentinel ran".into());
            }
            if !p.marker_removed {
                positive.push("the marker was not removed after the control".into());
            }
            let n = &c.negative;
            if n.commands_executed == 0 {
                negative.push("the reference host executed no configured command".into());
            }
            if !n.marker_appeared {
                negative.push("the marker did not appear under the reference host".into());
            }
            if !n.caught {
                negative.push("the invariant check did not catch the reference host".into());
            }
            if !n.marker_removed {
                negative.push("the marker was not removed after the negative control".into());
            }
            if *c != ctx.receipt.controls {
                recorded.push(format!("receipt controls differ from {path}"));
            }
        }
    }
    checks.record(
        "controls.positive",
        "the sentinel positive control fired and was cleaned up",
        positive,
    );
    checks.record(
        "controls.negative",
        "the executing reference host was caught",
        negative,
    );
    checks.record(
        "controls.record",
        "the receipt's controls are the runner's",
        recorded,
    );
}
