//! Decisions per second of built-in policies against the same rules in Python through the policy
//! protocol.

use super::*;
use crate::experiment::{BudgetUnit, Cell, Source, WorldOptions, WorldSetup, run_cell};
use crate::policy::default_config;
use crate::replay::Overhead;
use crate::trace::TraceSet;
use anyhow::Result;
use std::path::Path;
use std::time::Instant;

/// One policy's throughput through `measure_protocol`.
pub struct ProtocolTiming {
    pub policy: String,
    pub cells: usize,
    pub decisions: u64,
    pub seconds: f64,
}

impl ProtocolTiming {
    pub fn decisions_per_second(&self) -> f64 {
        self.decisions as f64 / self.seconds.max(1e-12)
    }
}

/// Decisions per second on one thread for built-in policies and the same rules written in Python
/// and run through the policy protocol (`python/examples/`, with `python` as the interpreter):
/// the quickstart's world (time-sliced, budget 0.25 of a task in slices of 0.002, so 125
/// decisions a cell) over the trace set's tasks, for at least `min_seconds` per policy. The
/// Python processes start before the clock does (one cell warms each up). Run from the Python
/// package's `banditbench` command, UCB1 is also measured in-process (`family = "python"`).
pub fn measure_protocol(
    ts: &TraceSet,
    python: &str,
    min_seconds: f64,
) -> Result<Vec<ProtocolTiming>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let world = WorldSetup {
        objectives: None,
        workers: 1,
        budgets: vec![0.25],
        unit: BudgetUnit::Task,
        options: WorldOptions::TimeSliced {
            slice: 0.002,
            overhead: Overhead::None,
        },
    };
    let external = |name: &str, script: &str| -> Result<crate::policy::PolicyConfig> {
        let t: toml::Table = format!(
            "name = \"{name}\"\ncommand = [{:?}, {:?}]\nenv = {{ PYTHONPATH = {:?} }}",
            python,
            root.join("python/examples")
                .join(script)
                .display()
                .to_string(),
            root.join("python").display().to_string()
        )
        .parse()?;
        Ok(crate::policy::expand_external(&t.into_iter().collect())?.remove(0))
    };
    let mut policies = vec![
        default_config("round-robin")?,
        external("python-round-robin", "round_robin.py")?,
        default_config("ucb1")?,
        external("python-ucb1", "ucb1.py")?,
    ];
    // Inside the Python package (its `banditbench` command), the same rules also run in-process.
    if crate::policy::hosted::host("in-process").is_ok() {
        for (builtin, name, file, class) in [
            (
                "round-robin",
                "python-round-robin-in-process",
                "round_robin.py",
                "RoundRobin",
            ),
            ("ucb1", "python-ucb1-in-process", "ucb1.py", "UCB1"),
        ] {
            let t: toml::Table = format!(
                "name = {name:?}\nclass = {:?}",
                format!(
                    "{}:{class}",
                    root.join("python/examples").join(file).display()
                )
            )
            .parse()?;
            policies.push(default_config(builtin)?);
            policies.push(crate::policy::expand_in_process(&t.into_iter().collect())?.remove(0));
        }
    }
    let mut exp = bench_experiment(ts, world)?;
    exp.policies = policies;
    let mut out = Vec::new();
    for p in 0..exp.policies.len() {
        let cell = |task: usize, round: u64| Cell {
            index: round * ts.tasks.len() as u64 + task as u64,
            task,
            budget: 0,
            policy: p,
            repetition: 0,
            seed: round * 1_000_003 + task as u64,
        };
        run_cell(&cell(0, 0), &exp, Source::Traces(ts, None), false)?;
        let t0 = Instant::now();
        let (mut cells, mut decisions, mut round) = (0usize, 0u64, 1u64);
        while t0.elapsed().as_secs_f64() < min_seconds {
            for task in 0..ts.tasks.len() {
                decisions +=
                    run_cell(&cell(task, round), &exp, Source::Traces(ts, None), false)?.decisions;
                cells += 1;
                if t0.elapsed().as_secs_f64() >= min_seconds {
                    break;
                }
            }
            round += 1;
        }
        out.push(ProtocolTiming {
            policy: exp.policies[p].id(),
            cells,
            decisions,
            seconds: t0.elapsed().as_secs_f64(),
        });
    }
    Ok(out)
}
