use std::process::ExitCode;

use crate::replay::WorldKind;
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// Only the policies whose name contains this (e.g. ucb)
    name: Option<String>,
    /// Only the policies that run in this world (time-sliced, pull-count, synthetic or pool)
    #[arg(long, value_parser = world_kind)]
    world: Option<WorldKind>,
}

/// A world by its name, from the one list of worlds (`WorldKind::ALL`).
fn world_kind(name: &str) -> Result<WorldKind, String> {
    WorldKind::ALL
        .iter()
        .copied()
        .find(|w| w.as_str() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = WorldKind::ALL.iter().map(|w| w.as_str()).collect();
            format!(
                "no world is called {name:?}; the worlds are {}",
                names.join(", ")
            )
        })
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Args { name, world } = args;
    print!(
        "{}",
        crate::policy::describe_registry(name.as_deref(), world)?
    );
    Ok(ExitCode::SUCCESS)
}
