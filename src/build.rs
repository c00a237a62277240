//! What this binary is: its version and the commit it was built from (recorded at build time by
//! `build.rs`). Results, lock files and the policy protocol's hello name it.

/// The build that writes results: version and the commit it was built from (recorded at build
/// time, so it does not depend on the folder a run starts in). A build from Rust sources that
/// differed from that commit says so: its results were not made by the commit alone.
pub fn program() -> String {
    // BANDITBENCH_DIRTY: whether `src/`, `build.rs` or `Cargo.*` differed from the commit.
    let edited = if env!("BANDITBENCH_DIRTY") == "1" {
        ", with uncommitted changes"
    } else {
        ""
    };
    format!(
        "banditbench {} (commit {}{edited})",
        env!("CARGO_PKG_VERSION"),
        env!("BANDITBENCH_COMMIT")
    )
}

/// The commit this binary was built from, or "unknown".
pub fn build_commit() -> &'static str {
    env!("BANDITBENCH_COMMIT")
}
