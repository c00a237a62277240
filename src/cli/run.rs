use std::path::PathBuf;
use std::process::ExitCode;

use crate::experiment::{self, RunOptions};
use crate::report::{self};
use anyhow::Result;
use clap::builder::TypedValueParser as _;

#[derive(clap::Args)]
pub struct Args {
    /// The experiment file (TOML), e.g. experiments/quickstart.toml
    experiment: PathBuf,
    /// Results folder [default: results/<experiment name>]
    #[arg(long)]
    out: Option<PathBuf>,
    /// Worker threads, at least 1 [default: all cores]
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096).map(|v| v as usize))]
    threads: Option<usize>,
    /// Cells per results part written to disk, at least 1 (smaller loses less on a kill);
    /// after the first, parts are written at most ten times a second
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..).map(|v| v as usize))]
    batch_size: Option<usize>,
    /// Run one deterministic share of the cells, I/N with 0 <= I < N (cells whose index is I
    /// modulo N), into its own folder [default: results/<name>-shards/I-of-N]; combine the
    /// shards with `banditbench merge`
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<experiment::Shard>,
    /// Do not draw the progress bar
    #[arg(long)]
    quiet: bool,
    /// Delete the folder's finished results first (runs, trajectories, parts and lock file)
    /// and run every cell again, e.g. after an external policy's code changed
    #[arg(long)]
    fresh: bool,
    /// Reuse finished cells from a cell cache, from any earlier experiment, and store the cells
    /// this run replays in it (a cell's key is its content: data, world, policy identity, task,
    /// budget, repetition and seed). Without DIR: $BANDITBENCH_CACHE, else
    /// ~/.cache/banditbench. See `banditbench cache`
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    cache: Option<Option<PathBuf>>,
    /// With --cache: store only cells whose replay took at least this many milliseconds (a
    /// quicker cell is replayed faster than its entry is read back) [default: 1]
    #[arg(long, value_name = "MS", requires = "cache")]
    cache_min_ms: Option<f64>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let cache = match args.cache {
        Some(None) => Some(experiment::cache::default_cache_dir()?),
        Some(Some(d)) => Some(d),
        None => None,
    };
    let opts = RunOptions {
        out: args.out,
        threads: args.threads,
        batch_size: args.batch_size,
        shard: args.shard,
        fresh: args.fresh,
        cache,
        cache_min_s: args.cache_min_ms.map(|ms| ms / 1000.0),
    };
    let (exp, data) = experiment::prepare(&args.experiment)?;
    for (warning, text) in data.notices(&exp) {
        say!("{}: {text}", if warning { "warning" } else { "note" });
    }
    let summary = experiment::run_experiment(
        &exp,
        &data,
        &opts,
        &super::progress::Terminal::new(args.quiet),
    )?;
    let what = data.what();
    if let Some(s) = opts.shard {
        // A shard's ranking would rest on a share of the cells: say how to combine them instead.
        println!(
            "shard {} finished: {} cells in {}; when all {} shards have finished, combine them with: banditbench merge {}/*-of-{} --out DIR",
            s.label(),
            summary.total_cells,
            summary.out.display(),
            s.count,
            summary
                .out
                .parent()
                .map_or_else(|| ".".into(), |p| p.display().to_string()),
            s.count
        );
        return Ok(ExitCode::SUCCESS);
    }
    print_ranking(&summary.out, &what)
}

fn print_ranking(out: &std::path::Path, what: &str) -> Result<ExitCode> {
    let (ranks, units) = report::ranking(out)?;
    if let Some(w) = &units.exhausted {
        say!("warning: {w}");
    }
    println!(
        "\nMean rank of the {what} (1 = best). {}\n",
        units.table.describe()
    );
    let width = ranks
        .iter()
        .map(|r| r.policy.len())
        .max()
        .unwrap_or(6)
        .max(6);
    println!(
        "{:>4}  {:<width$}  {:>9}  {:>10}",
        "#", "policy", "mean rank", "mean score"
    );
    for (i, r) in ranks.iter().enumerate() {
        println!(
            "{:>4}  {:<width$}  {:>9.3}  {:>10.4}",
            i + 1,
            r.policy,
            r.mean_rank,
            r.mean_score
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_shard(s: &str) -> Result<experiment::Shard, String> {
    experiment::Shard::parse(s).map_err(|e| {
        e.to_string()
            .trim_start_matches(&format!("--shard '{s}': "))
            .to_string()
    })
}

impl Args {
    /// `--threads`, which `cli::main` also gives polars' own pool.
    pub(super) fn threads(&self) -> Option<usize> {
        self.threads
    }
}
