//! What this binary is: its version and the commit it was built from (recorded at build time by
//! `build.rs`). Results, lock files and the policy protocol's hello name it.

/// The build that writes results: version and the commit it was built from (recorded at build
/// time, so it does not depend on the folder a run starts in).
pub fn program() -> String {
    format!(
        "banditbench {} (commit {})",
        env!("CARGO_PKG_VERSION"),
        env!("BANDITBENCH_COMMIT")
    )
}

/// The commit this binary was built from, or "unknown".
pub fn build_commit() -> &'static str {
    env!("BANDITBENCH_COMMIT")
}
