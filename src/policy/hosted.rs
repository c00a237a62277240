//! In-process policies: a policy written in the language of the program that embeds banditbench
//! (the Python package, `family = "python"`), run inside the replay with no process and no
//! JSON. The embedding program installs a [`Host`] once; without one (the command-line binary),
//! an experiment that names such a policy is refused at expansion with what to do instead.

use std::sync::{Arc, OnceLock};

use anyhow::{Result, bail};

use super::Policy;
use super::external::ExternalSpec;

/// What the embedding program provides: it builds the policy of each cell.
pub(crate) trait Host: Send + Sync {
    /// Check, when the experiment is expanded, that the policy can be built: its class loads, or
    /// an object is registered under its name.
    fn check(&self, spec: &ExternalSpec) -> Result<()>;
    /// The policy for one cell. `id` names the policy in errors; `params_json` are its
    /// parameters for the cell (a JSON object).
    fn build(&self, spec: Arc<ExternalSpec>, id: String, params_json: String) -> Box<dyn Policy>;
}

static HOST: OnceLock<Box<dyn Host>> = OnceLock::new();

/// Install the embedding program's host (once; a second call is ignored).
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub(crate) fn set_host(h: Box<dyn Host>) {
    let _ = HOST.set(h);
}

/// The host, or the error an experiment naming an in-process policy gets without one.
pub(crate) fn host(name: &str) -> Result<&'static dyn Host> {
    match HOST.get() {
        Some(h) => Ok(h.as_ref()),
        None => bail!(
            "policy '{name}' has family = \"python\": an in-process Python policy runs only from the Python package (pip install banditbench-engine, then banditbench.run(...) or its `banditbench` command); this binary runs Python policies as processes: family = \"external\" with command = [\"python3\", \"my_policy.py\"]"
        ),
    }
}
