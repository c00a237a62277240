//! Records the commit the binary is built from, so results name the build that made them
//! (`BANDITBENCH_COMMIT`, "unknown" outside a git checkout), and whether the Rust sources differed
//! from that commit (`BANDITBENCH_DIRTY`, "1" or "0"): a development build says so in `program`.

use std::path::Path;
use std::process::Command;

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let git = Path::new(&root).join(".git");
    // Rebuild when HEAD moves: HEAD itself, the branch it names, and packed refs.
    println!("cargo:rerun-if-changed=build.rs");
    // ... and when the sources change, so a build from edited sources knows it (these changes
    // recompile the crate anyway).
    for path in ["src", "Cargo.toml", "Cargo.lock"] {
        println!(
            "cargo:rerun-if-changed={}",
            Path::new(&root).join(path).display()
        );
    }
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
    let dirty = Command::new("git")
        .args([
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            "src",
            "build.rs",
            "Cargo.toml",
            "Cargo.lock",
        ])
        .current_dir(&root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| !o.stdout.is_empty());
    println!(
        "cargo:rustc-env=BANDITBENCH_DIRTY={}",
        if dirty { "1" } else { "0" }
    );
}
