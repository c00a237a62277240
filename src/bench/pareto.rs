//! The anytime hypervolume of one long two-objective run: banditbench's incremental archive
//! (`pareto::hypervolume_history`) against the peers, which recompute every prefix (issue #46).
//!
//! The runs are generated, and said to be: no recorded table has 10⁶ multi-objective
//! evaluations. Two orders of difficulty:
//! - `uniform`: both objectives uniform in [0, 1); the front stays small (about ln n points);
//! - `front`: every point on the curve y = (1 − √x)², in random order; no point dominates
//!   another, so the archive grows to every point (the worst case for the archive).

use std::path::Path;

use anyhow::Result;

use crate::pareto::{Archive, hypervolume_history};
use crate::rng::Rng;

/// A generated run of `n` two-objective points (flat, minimised), in arrival order.
pub fn run(kind: &str, n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..n)
        .flat_map(|_| {
            let u = rng.f64();
            match kind {
                "front" => [u, (1.0 - u.sqrt()).powi(2)],
                _ => [u, rng.f64()],
            }
        })
        .collect()
}

/// The reference point of the generated runs, fixed before any point is drawn.
pub const REFERENCE: [f64; 2] = [1.1, 1.1];

/// One measurement of banditbench's history.
pub struct History {
    pub points: usize,
    pub cpu_s: f64,
    pub last: f64,
    /// Points in the final front.
    pub front: usize,
}

/// CPU seconds of the exact hypervolume after every point of `points`: the mean over as many
/// repetitions as fill a quarter of a second (the CPU clock ticks too coarsely for short runs).
pub fn measure_history(points: &[f64]) -> History {
    let t = super::cpu_seconds();
    let mut rounds = 0u32;
    let h = loop {
        let h = hypervolume_history(points, &REFERENCE);
        rounds += 1;
        if super::cpu_seconds() - t >= 0.25 {
            break h;
        }
    };
    let cpu_s = (super::cpu_seconds() - t) / f64::from(rounds);
    let mut archive = Archive::new(&REFERENCE);
    for p in points.chunks_exact(2) {
        archive.insert(p);
    }
    History {
        points: points.len() / 2,
        cpu_s,
        last: h.last().copied().unwrap_or(0.0),
        front: archive.points().len() / 2,
    }
}

/// The peers on the first `n` points of `points`: `scripts/reference/hypervolume_timing.py` run
/// by `python`. Returns (peer, CPU seconds, last hypervolume) for each peer installed.
pub fn measure_peers(
    python: &str,
    points: &[f64],
    n: usize,
    dir: &Path,
) -> Result<Vec<(String, f64, f64)>> {
    use anyhow::Context as _;
    std::fs::create_dir_all(dir)?;
    let file = dir.join("points.f64");
    let bytes: Vec<u8> = points[..2 * n]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    std::fs::write(&file, bytes).with_context(|| format!("writing {}", file.display()))?;
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/reference/hypervolume_timing.py");
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg(&file)
        .arg(n.to_string())
        .arg(REFERENCE[0].to_string())
        .arg(REFERENCE[1].to_string())
        .output()
        .with_context(|| format!("--hypervolume-python {python}: cannot start it"))?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        anyhow::bail!(
            "{}: failed under {python} (pip install -r scripts/reference/requirements-moocore.txt, and syne-tune==0.16.0 --no-deps): {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let field = |key: &str| -> Option<f64> {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .and_then(|v| v.parse().ok())
    };
    let mut peers = Vec::new();
    for (name, key) in [
        ("Syne Tune 0.16.0", "synetune"),
        ("moocore 0.3.2", "moocore"),
    ] {
        if let (Some(s), Some(last)) = (
            field(&format!("{key}_cpu_s")),
            field(&format!("{key}_last")),
        ) {
            peers.push((name.to_string(), s, last));
        }
    }
    Ok(peers)
}
