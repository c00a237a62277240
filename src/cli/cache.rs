use std::path::PathBuf;
use std::process::ExitCode;

use crate::experiment::cache;
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand)]
enum Action {
    /// What the cell cache holds: entries and bytes per results format
    Info {
        /// The cache folder [default: $BANDITBENCH_CACHE, else ~/.cache/banditbench]
        #[arg(long, value_name = "DIR")]
        cache: Option<PathBuf>,
    },
    /// Remove what this build cannot use (other results formats' entries, temporary files of
    /// killed runs); with --max-size, also the least recently used entries until the rest fit;
    /// with --all, every entry
    Prune {
        /// The cache folder [default: $BANDITBENCH_CACHE, else ~/.cache/banditbench]
        #[arg(long, value_name = "DIR")]
        cache: Option<PathBuf>,
        /// Keep at most this much, e.g. 2G (K, M, G, T are powers of 1024)
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        max_size: Option<u64>,
        /// Remove every entry
        #[arg(long, conflicts_with = "max_size")]
        all: bool,
    },
}

fn parse_size(s: &str) -> Result<u64, String> {
    cache::parse_size(s).map_err(|e| e.to_string())
}

fn folder(given: Option<PathBuf>) -> Result<PathBuf> {
    given.map_or_else(cache::default_cache_dir, Ok)
}

/// Bytes for people: 1.2 GiB, 34 MiB, 512 B.
fn size_text(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[i])
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    match args.action {
        Action::Info { cache: dir } => {
            let dir = folder(dir)?;
            let usage = cache::usage(&dir)?;
            if usage.is_empty() {
                println!(
                    "{}: no cell cache here yet (`run --cache` makes one)",
                    dir.display()
                );
            }
            let this = format!("format-{}", crate::results::RESULTS_FORMAT);
            for u in usage {
                println!(
                    "{}/{}: {} cells, {}{}{}",
                    dir.display(),
                    u.format,
                    u.entries,
                    size_text(u.bytes),
                    if u.temporary > 0 {
                        format!(", {} temporary files", u.temporary)
                    } else {
                        String::new()
                    },
                    if u.format == this {
                        " (this build's)"
                    } else {
                        " (another results format: `cache prune` removes it)"
                    }
                );
            }
        }
        Action::Prune {
            cache: dir,
            max_size,
            all,
        } => {
            let dir = folder(dir)?;
            let p = cache::prune(&dir, max_size, all)?;
            println!(
                "{}: removed {} cells ({}), {} folders of other results formats and {} temporary files",
                dir.display(),
                p.entries,
                size_text(p.bytes),
                p.other_formats,
                p.temporary,
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
