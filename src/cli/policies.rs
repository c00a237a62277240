use std::process::ExitCode;

use crate::replay::WorldKind;
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// Only the policies whose name contains this (e.g. ucb)
    name: Option<String>,
    /// Only the policies that run in this world
    #[arg(long, value_parser = ["time-sliced", "pull-count", "synthetic", "pool"])]
    world: Option<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Args { name, world } = args;
    let world = world.map(|w| match w.as_str() {
        "time-sliced" => WorldKind::TimeSliced,
        "pull-count" => WorldKind::PullCount,
        "synthetic" => WorldKind::Synthetic,
        _ => WorldKind::Pool,
    });
    print!(
        "{}",
        crate::policy::describe_registry(name.as_deref(), world)?
    );
    Ok(ExitCode::SUCCESS)
}
