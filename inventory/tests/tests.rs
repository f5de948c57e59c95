//! Integration tests for mcpscope, in one binary.

#[macro_use]
mod util; // temp trees, running the binary/library, redaction, `snapshot!`
mod fixtures; // the shared full fixture (all four sources, canaries, sentinel)

mod claude_code; // the Claude Code profile: scopes, shadowing, ambiguity, managed exclusivity
mod cli; // arguments, root refusal, client selection, exit codes, stdout/stderr split
mod clients; // the fourteen other clients, --client all, --fail-on, escaped usage errors
mod contract; // real output deserialized into deny_unknown_fields structs
mod crush; // the Crush profile: positions, data directory, levels to .git, grammar, project gate
mod dsh; // the DSH profile: six layers, shadow chain, YAML managed block, --dsh-profile
mod instructions; // instruction candidates at every level, metadata only
mod launch; // Claude Code approval and launch prediction beyond the native matrix
mod native; // the differential judge against the native Claude Code observations
mod registry; // registry ids vs harness/matrix/shipped.json, candidates documented per OS
mod row_bound; // the document's bound on server rows: whole sources withheld, exit 1
mod safety; // canaries, sentinel, no writes, terminal sanitization
mod states; // every file state and every bad input, through the binary
mod vscode; // --client vscode: origins × states, JSONC, bare map/wrapper/mixed, sameNameIn, contract
mod work_bound; // per-file and per-walk bounds: YAML nodes, alias copies, project levels
