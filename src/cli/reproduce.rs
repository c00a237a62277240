use std::process::ExitCode;

use anyhow::Result;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};

/// The reproductions' names, with what each reproduces, for clap (from the registry).
fn papers() -> PossibleValuesParser {
    PossibleValuesParser::new(
        crate::reproduce::PAPERS
            .iter()
            .map(|p| PossibleValue::new(p.name).help(p.about)),
    )
}

#[derive(clap::Args)]
pub struct Args {
    /// The paper (`banditbench reproduce --help` lists them with what each reproduces)
    #[arg(value_parser = papers())]
    paper: String,
    /// Worker threads, at least 1 [default: all cores]
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096).map(|v| v as usize))]
    threads: Option<usize>,
    /// Do not draw progress bars
    #[arg(long)]
    quiet: bool,
    /// Reuse finished cells from a cell cache and store the cells replayed in it (as `run
    /// --cache`). Without DIR: $BANDITBENCH_CACHE, else ~/.cache/banditbench
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    cache: Option<Option<std::path::PathBuf>>,
    /// With --cache: store only cells whose replay took at least this many milliseconds (a
    /// quicker cell is replayed faster than its entry is read back) [default: 1]
    #[arg(long, value_name = "MS", requires = "cache")]
    cache_min_ms: Option<f64>,
    /// The Python interpreter library policies run in (a venv's `bin/python` with the wheel and
    /// the adapters' libraries): `reproduce parallel-samplers` needs it; `reproduce mo-tpe`
    /// runs Optuna's MO-TPE and NSGA-II beside its own only when it is given [default: python3]
    #[arg(long, value_name = "PY")]
    python: Option<String>,
    /// The interpreter DEHB's adapter runs in (DEHB pins numpy < 2, so a venv of its own)
    /// [default: --python's]
    #[arg(long, value_name = "PY")]
    python_dehb: Option<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Args {
        paper,
        threads,
        quiet,
        cache,
        cache_min_ms,
        python,
        python_dehb,
    } = args;
    let given = python.is_some();
    let python = python.unwrap_or_else(|| "python3".into());
    let interpreters = crate::reproduce::parallel_samplers::Interpreters {
        dehb: python_dehb.unwrap_or_else(|| python.clone()),
        python,
        given,
    };
    let cache = match cache {
        Some(None) => Some(crate::experiment::cache::default_cache_dir()?),
        Some(Some(d)) => Some(d),
        None => None,
    };
    let paper = crate::reproduce::paper(&paper)?;
    let opts = crate::reproduce::ReproduceOptions {
        threads,
        cache,
        cache_min_s: cache_min_ms.map(|ms| ms / 1000.0),
        interpreters,
        progress: std::sync::Arc::new(super::progress::Terminal::new(quiet)),
        ..Default::default()
    };
    let t0 = std::time::Instant::now();
    let files = (paper.run)(&opts)?;
    for f in &files {
        if f.extension().is_some_and(|e| e == "md") {
            println!("{}", f.display());
        }
    }
    say!(
        "reproduced {}: {} files in {:.1} s",
        paper.name,
        files.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
