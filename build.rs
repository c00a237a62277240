//! Records the commit the binary is built from, so results name the build that made them
//! (`BANDITBENCH_COMMIT`, "unknown" outside a git checkout).

use std::path::Path;
use std::process::Command;

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let git = Path::new(&root).join(".git");
    // Rebuild when HEAD moves: HEAD itself, the branch it names, and packed refs.
    println!("cargo:rerun-if-changed=build.rs");
    if git.is_dir() {
        println!("cargo:rerun-if-changed={}", git.join("HEAD").display());
        println!(
            "cargo:rerun-if-changed={}",
            git.join("packed-refs").display()
        );
        if let Ok(head) = std::fs::read_to_string(git.join("HEAD"))
            && let Some(r) = head.trim().strip_prefix("ref: ")
        {
            println!("cargo:rerun-if-changed={}", git.join(r).display());
        }
    }
    let commit = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(&root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BANDITBENCH_COMMIT={commit}");
}
