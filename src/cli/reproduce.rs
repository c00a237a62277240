use std::process::ExitCode;

use anyhow::Result;
use clap::ValueEnum;
use clap::builder::TypedValueParser as _;

#[derive(clap::Args)]
pub struct Args {
    /// The paper: erucb (Hu, Yu & Liao 2019: Table 1, Figure 1, Table 2), hamlet (Schmidt et
    /// al. 2020: Table II grid, Figs. 2-8, the Variant 3 claim) or shang (Shang, Kaufmann &
    /// Valko 2019: D-TTTS against TTTS, T3C, SH, Hyperband, random search on recorded pools,
    /// and the timing table), mutant-ucb (Brégère & Keisler 2024: Tables 1 and 2 in shape
    /// on sklearn-grid, beside the paper's numbers) or auto-weka (Thornton et al. 2013:
    /// Ex-Def, grid and random search, TPE and SMAC on the CASH pools)
    #[arg(value_enum)]
    paper: Paper,
    /// Worker threads, at least 1 [default: all cores]
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096).map(|v| v as usize))]
    threads: Option<usize>,
    /// Do not draw progress bars
    #[arg(long)]
    quiet: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Args {
        paper,
        threads,
        quiet,
    } = args;
    let opts = banditbench::reproduce::ReproduceOptions {
        threads,
        progress: std::sync::Arc::new(super::progress::Terminal::new(quiet)),
        ..Default::default()
    };
    let t0 = std::time::Instant::now();
    let files = match paper {
        Paper::Erucb => banditbench::reproduce::erucb::reproduce(&opts)?,
        Paper::Hamlet => banditbench::reproduce::hamlet::reproduce(&opts)?,
        Paper::Shang => banditbench::reproduce::shang::reproduce(&opts)?,
        Paper::MutantUcb => banditbench::reproduce::mutant_ucb::reproduce(&opts)?,
        Paper::AutoWeka => banditbench::reproduce::auto_weka::reproduce(&opts)?,
    };
    for f in &files {
        if f.extension().is_some_and(|e| e == "md") {
            println!("{}", f.display());
        }
    }
    eprintln!(
        "reproduced {}: {} files in {:.1} s",
        paper
            .to_possible_value()
            .map_or(String::new(), |v| v.get_name().to_string()),
        files.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Paper {
    Erucb,
    Hamlet,
    Shang,
    /// Brégère & Keisler 2024: Mutant-UCB's Tables 1 and 2 in shape on sklearn-grid
    MutantUcb,
    /// Thornton et al. 2013: Auto-WEKA's CASH comparison on sklearn-random and sklearn-grid
    AutoWeka,
}
