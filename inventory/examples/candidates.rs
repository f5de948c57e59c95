//! Prints every profile's fixed candidates per OS (a maintainer's aid for `CLIENTS.md`).

use mcpscope::profile::REGISTRY;
use mcpscope::Os;

fn main() {
    for p in REGISTRY {
        println!("## {} ({})", p.title(), p.id());
        for os in [Os::Linux, Os::MacOs, Os::Windows] {
            for c in p.candidates(os) {
                println!(
                    "{os:?}\t{}\t{}\t{}\t{}",
                    c.scope, c.path, c.parser, c.container
                );
            }
        }
    }
}
