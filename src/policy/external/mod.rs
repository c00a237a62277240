//! External policies: a policy in any language, run as a child process that speaks banditbench's
//! JSON-lines policy protocol (version 1, specified in `docs/protocol.md`) over its stdin and
//! stdout.
//!
//! Each external policy keeps its own set of processes: a cell takes an idle one (starting one,
//! with a `hello` handshake, when none is idle) and gives it back when it ends, so a run holds at
//! most one process per worker thread and reuses it across cells. A cell is announced by `start`,
//! each decision asks `decide`, each pull is reported by `observe`, and the cell closes with
//! `end`. Only `hello`, `decide` and `end` are answered; the observation of a pull and the next
//! view go out in one write, so a decision costs one round trip.
//!
//! A process that exits, stays silent past `timeout_s`, answers something that is not an action,
//! or names an arm that does not exist fails its cell with an error naming the policy, the cell,
//! the message and the process's last lines on stderr. The process is then killed; a new one is
//! started for the next cell.

mod process;
mod wire;

/// The pool's space and its open configurations as one JSON object, the keys `start` carries
/// with `pool_space` (docs/protocol.md), for the in-process route to hand the same to Python.
#[cfg(feature = "python")]
pub(crate) fn space_json(p: &crate::policy::PoolStart<'_>) -> String {
    let mut o = Vec::new();
    wire::push_space(&mut o, p);
    // The fragment starts with the comma that follows `"defaults"` on the wire.
    o[0] = b'{';
    o.push(b'}');
    String::from_utf8(o).expect("the space is written as JSON text")
}

/// Per learner its dimensions as JSON, as `start` carries `"space"` (docs/protocol.md).
#[cfg(feature = "python")]
pub(crate) fn dims_json(learners: &[Vec<crate::space::SpaceDim>]) -> String {
    let mut o = Vec::new();
    wire::push_dims(&mut o, learners);
    String::from_utf8(o).expect("the space is written as JSON text")
}

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{Action, CellStart, Policy};
use crate::protocol::{Observation, View, WorldKind};
use crate::rng::Rng;
use process::{Process, pin};
use wire::*;

mod spec;
pub use spec::*;

/// The protocol version this build speaks.
pub const PROTOCOL: u32 = 1;

/// Why talking to a process failed.
enum Io {
    Timeout,
    Closed,
    Os(std::io::Error),
    TooLong,
}

impl Io {
    fn describe(&self, timeout: Duration) -> String {
        match self {
            Io::Timeout => format!(
                "no answer within {} s (raise `timeout_s` if the policy is merely slow)",
                timeout.as_secs_f64()
            ),
            Io::Closed => "the process closed its end of the pipe".to_string(),
            Io::Os(e) => format!("cannot talk to the process: {e}"),
            Io::TooLong => "an answer longer than 16 MiB without a line end".to_string(),
        }
    }
}

pub struct ExternalPolicy {
    spec: Arc<ExternalSpec>,
    id: String,
    params_json: String,
    proc: Option<Process>,
    /// Messages not yet written (observations wait for the next `decide`).
    out: Vec<u8>,
    /// The cell, for error messages.
    cell: String,
    world: WorldKind,
    fits: u64,
    /// The arm of the last observation: its view entries go out with the next `decide`.
    touched: Option<usize>,
    /// The last message that asked for an answer, for error messages.
    asked: String,
}

impl ExternalPolicy {
    pub fn new(spec: Arc<ExternalSpec>, id: String, params_json: String) -> Self {
        ExternalPolicy {
            spec,
            id,
            params_json,
            proc: None,
            out: Vec::with_capacity(1024),
            cell: "before its cell began".to_string(),
            world: WorldKind::TimeSliced,
            fits: 0,
            touched: None,
            asked: String::new(),
        }
    }

    /// Kill the process and describe the failure.
    fn fail(&mut self, what: String) -> anyhow::Error {
        let mut text = format!(
            "external policy {} failed in {}: {what}",
            self.id, self.cell
        );
        if !self.asked.is_empty() {
            text.push_str(&format!("\n  the message it was answering: {}", self.asked));
        }
        if let Some(mut p) = self.proc.take() {
            let status = p.status();
            text.push_str(&format!(
                "\n  the process (`{}`) {status}",
                self.spec.command.join(" ")
            ));
            let tail = p.stderr_tail();
            if tail.is_empty() {
                text.push_str("; it wrote nothing to stderr");
            } else {
                text.push_str("; its last lines on stderr:");
                for l in tail {
                    text.push_str("\n    ");
                    text.push_str(&l);
                }
            }
        }
        let keep_going = self.spec.on_failure == OnFailure::Restart;
        text.push_str(&format!(
            "\n  (on_failure = \"{}\": {}; finished cells are kept, and running the same command again retries the unfinished ones)",
            self.spec.on_failure.as_str(),
            if keep_going {
                "the process was killed and the run goes on with a new one"
            } else {
                "the run stops"
            }
        ));
        PolicyProcessError {
            message: text,
            keep_going,
        }
        .into()
    }

    /// Write the pending messages, then read one answer.
    fn ask(&mut self) -> Result<Vec<u8>> {
        let deadline = Instant::now() + self.spec.timeout;
        let timeout = self.spec.timeout;
        let Some(p) = self.proc.as_mut() else {
            return Err(self.fail("the cell has no process (a bug in the caller)".into()));
        };
        let sent = p.send(&self.out, deadline);
        self.out.clear();
        let got = match sent {
            // A process that closed its input may still have written why.
            Ok(()) | Err(Io::Closed) => p.recv(deadline).map(<[u8]>::to_vec),
            Err(e) => Err(e),
        };
        got.map_err(|e| {
            let what = match e {
                Io::Closed => "the process ended without answering".to_string(),
                e => e.describe(timeout),
            };
            self.fail(what)
        })
    }

    fn check_error_reply(&mut self, line: &[u8]) -> Result<Reply> {
        let reply: Reply = match serde_json::from_slice(line) {
            Ok(r) => r,
            Err(e) => {
                let what = match serde_json::from_slice::<serde_json::Value>(line) {
                    Ok(serde_json::Value::Object(_)) => format!(
                        "which is not a valid answer ({e}); see docs/protocol.md for each answer's keys"
                    ),
                    Ok(_) => "which is JSON but not an object: every answer is a JSON object, e.g. {\"action\":\"pull\",\"arm\":0} (docs/protocol.md)".to_string(),
                    Err(_) => "which is not JSON (docs/protocol.md: one JSON object per line on stdout; print diagnostics to stderr)".to_string(),
                };
                return Err(self.fail(format!("it answered `{}`, {what}", excerpt(line, 200))));
            }
        };
        if reply.kind.as_deref() == Some("error") {
            let msg = reply.message.unwrap_or_default();
            return Err(self.fail(format!("the policy reported an error: {msg}")));
        }
        Ok(reply)
    }

    fn hello(&mut self) -> Result<()> {
        let mut msg =
            format!("{{\"type\":\"hello\",\"protocol\":{PROTOCOL},\"program\":").into_bytes();
        push_str(&mut msg, &crate::build::program());
        msg.extend_from_slice(b"}\n");
        self.asked = excerpt(&msg[..msg.len() - 1], 300);
        self.out.extend_from_slice(&msg);
        let line = self.ask()?;
        let reply = self.check_error_reply(&line)?;
        match (reply.kind.as_deref(), reply.protocol) {
            (Some("hello"), Some(PROTOCOL)) => match reply.view.as_deref() {
                None | Some("update") => Ok(()),
                Some("full") => {
                    if let Some(p) = self.proc.as_mut() {
                        p.full_view = true;
                    }
                    Ok(())
                }
                Some(other) => Err(self.fail(format!(
                    "it asked for view \"{other}\" in hello; the views are \"update\" (the default) and \"full\""
                ))),
            },
            (Some("hello"), Some(v)) => Err(self.fail(format!(
                "it speaks protocol version {v}; this banditbench speaks version {PROTOCOL}"
            ))),
            _ => Err(self.fail(format!(
                "it answered `{}` to hello; expected {{\"type\": \"hello\", \"protocol\": {PROTOCOL}}} (docs/protocol.md)",
                excerpt(&line, 200)
            ))),
        }
    }
}

impl Policy for ExternalPolicy {
    fn begin(&mut self, c: &CellStart<'_>) -> Result<()> {
        self.cell = c.describe();
        self.world = c.world;
        self.out.clear();
        self.touched = None;
        match self.spec.take_idle() {
            Some(p) => self.proc = Some(p),
            None => {
                let p = Process::spawn(&self.spec).map_err(|e| self.fail(e))?;
                self.proc = Some(p);
                self.hello()?;
            }
        }
        if let Some(cpu) = self.proc.as_ref().and_then(|p| p.cpu) {
            pin(0, cpu);
        }
        let o = &mut self.out;
        o.extend_from_slice(b"{\"type\":\"start\",\"cell\":");
        push_u64(o, c.cell);
        o.extend_from_slice(b",\"seed\":");
        push_u64(o, c.seed);
        o.extend_from_slice(b",\"repetition\":");
        push_u64(o, c.repetition.into());
        o.extend_from_slice(b",\"task\":");
        push_str(o, &c.task);
        o.extend_from_slice(b",\"dataset\":");
        push_str(o, c.dataset);
        o.extend_from_slice(b",\"world\":");
        push_str(o, c.world.as_str());
        o.extend_from_slice(b",\"unit\":");
        push_str(o, c.unit.as_str());
        o.extend_from_slice(b",\"budget\":");
        push_f64(o, c.budget);
        o.extend_from_slice(b",\"budget_abs\":");
        push_f64(o, c.budget_abs);
        o.extend_from_slice(b",\"slice\":");
        push_f64(o, c.slice_abs);
        if c.workers > 1 {
            o.extend_from_slice(b",\"workers\":");
            push_u64(o, c.workers as u64);
        }
        o.extend_from_slice(b",\"arms\":[");
        for (i, a) in c.arms.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            push_str(o, a);
        }
        o.push(b']');
        // Several objectives, in any world: their names and directions (absent with one).
        push_objectives(o, c.all_objectives());
        o.extend_from_slice(b",\"policy\":");
        push_str(o, &self.spec.name);
        o.extend_from_slice(b",\"params\":");
        o.extend_from_slice(self.params_json.as_bytes());
        if let Some(p) = &c.pool {
            o.extend_from_slice(b",\"pool\":{\"units\":");
            push_u64(o, p.units.into());
            o.extend_from_slice(b",\"configs\":");
            push_u64(o, p.configs as u64);
            o.extend_from_slice(b",\"learners\":[");
            for (i, l) in p.learners.iter().enumerate() {
                if i > 0 {
                    o.push(b',');
                }
                push_str(o, l);
            }
            o.extend_from_slice(b"],\"defaults\":[");
            for (i, d) in p.defaults.iter().enumerate() {
                if i > 0 {
                    o.push(b',');
                }
                match d {
                    Some(c) => push_u64(o, u64::from(*c)),
                    None => o.extend_from_slice(b"null"),
                }
            }
            o.push(b']');
            // Several objectives: the pool's copy of the top-level list (absent with one).
            push_objectives(o, &p.objectives);
            if self.spec.pool_space {
                push_space(o, p);
            }
            o.push(b'}');
        }
        o.extend_from_slice(b"}\n");
        Ok(())
    }

    fn try_decide(&mut self, v: &View<'_>, _rng: &mut Rng) -> Result<Action> {
        let mark = self.out.len();
        // With several workers several arms change between decisions: the whole view travels.
        let full = v.workers > 1 || self.proc.as_ref().is_some_and(|p| p.full_view);
        let o = &mut self.out;
        o.extend_from_slice(b"{\"type\":\"decide\",\"step\":");
        push_u64(o, v.step);
        o.extend_from_slice(b",\"used\":");
        push_f64(o, v.used);
        // Only the pulled arm's entries of the view change with a pull: they travel as `update`,
        // and the policy side keeps the arrays (docs/protocol.md, "The view").
        if let Some(a) = self.touched.take().filter(|&a| a < v.n_arms) {
            o.extend_from_slice(b",\"update\":[");
            push_u64(o, a as u64);
            o.push(b',');
            push_u64(o, v.pulls[a]);
            o.push(b',');
            push_f64(o, v.arm_clock[a]);
            o.push(b',');
            push_f64(o, v.arm_best[a]);
            if let Some(p) = &v.pool {
                o.push(b',');
                push_f64(o, p.last[a]);
                o.extend_from_slice(if p.done[a] { b",true," } else { b",false," });
                push_u64(o, p.config[a].into());
            }
            o.push(b']');
        }
        if let Some(p) = &v.pool {
            o.extend_from_slice(b",\"undrawn\":");
            push_u64(o, p.undrawn as u64);
        }
        if v.workers > 1 {
            o.extend_from_slice(b",\"worker\":");
            push_u64(o, v.worker as u64);
            o.extend_from_slice(b",\"now\":");
            push_f64(o, v.now);
            o.extend_from_slice(b",\"pending\":[");
            for (i, p) in v.pending.iter().enumerate() {
                if i > 0 {
                    o.push(b',');
                }
                o.push(b'[');
                push_u64(o, p.arm as u64);
                o.push(b',');
                push_u64(o, p.worker as u64);
                o.push(b',');
                push_f64(o, p.since);
                o.push(b']');
            }
            o.push(b']');
        }
        if full {
            push_list(o, "pulls", v.pulls, push_u64);
            push_list(o, "arm_clock", v.arm_clock, push_f64);
            push_list(o, "arm_best", v.arm_best, push_f64);
            if let Some(p) = &v.pool {
                push_list(o, "last", p.last, push_f64);
                push_list(o, "done", p.done, |o, d| {
                    o.extend_from_slice(if d { b"true" } else { b"false" })
                });
                push_list(o, "config", p.config, |o, c| push_u64(o, c.into()));
            }
        }
        o.extend_from_slice(b"}\n");
        self.asked = excerpt(&self.out[mark..self.out.len() - 1], 300);
        let line = self.ask()?;
        let action = if line.first().is_some_and(u8::is_ascii_digit) {
            match std::str::from_utf8(&line)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
            {
                Some(a) => Action::Pull(a as usize),
                None => {
                    return Err(self.fail(format!(
                        "it answered `{}`, which is not an arm index",
                        excerpt(&line, 200)
                    )));
                }
            }
        } else {
            let r = self.check_error_reply(&line)?;
            self.fits += r.fits.unwrap_or(0);
            let to = r.to.map(|t| u32::try_from(t).unwrap_or(u32::MAX));
            match (r.action.as_deref(), r.arm, r.config) {
                (Some("pull"), Some(a), None) => match to {
                    Some(t) => Action::Train(a as usize, t),
                    None => Action::Pull(a as usize),
                },
                (Some("mutate"), Some(a), None) if to.is_none() => Action::Mutate(a as usize),
                (Some("retrain"), Some(a), None) if to.is_some() => Action::Retrain(
                    a as usize,
                    r.from.map_or(1, |f| u32::try_from(f).unwrap_or(u32::MAX)),
                    to.unwrap_or_default(),
                ),
                (Some("draw"), None, None) => match to {
                    Some(t) => Action::DrawTo(t),
                    None => Action::Draw,
                },
                (Some("choose"), None, Some(c)) if c <= u64::from(u32::MAX) => match to {
                    Some(t) => Action::ChooseTo(c as u32, t),
                    None => Action::Choose(c as u32),
                },
                (Some("stop"), None, None) => Action::Stop,
                (Some("wait"), None, None) => Action::Wait,
                _ => {
                    return Err(self.fail(format!(
                        "it answered `{}`, which is not an action: expected an arm index such as `3`, or {{\"action\": \"pull\", \"arm\": 3}}, {{\"action\": \"draw\"}} (either with \"to\": a unit, to train up to it in one piece of work), {{\"action\": \"mutate\", \"arm\": 3}}, {{\"action\": \"choose\", \"config\": 12}}, {{\"action\": \"retrain\", \"arm\": 3, \"from\": 1, \"to\": 27}}, {{\"action\": \"stop\"}} or, with several workers, {{\"action\": \"wait\"}} (docs/protocol.md)",
                        excerpt(&line, 200)
                    )));
                }
            }
        };
        check_action(action, v.n_arms, self.world).map_err(|e| self.fail(e))
    }

    fn observe(&mut self, obs: &Observation<'_>) {
        self.touched = Some(obs.arm);
        let o = &mut self.out;
        o.extend_from_slice(b"{\"type\":\"observe\",\"arm\":");
        push_u64(o, obs.arm as u64);
        o.extend_from_slice(b",\"reward\":");
        match obs.reward {
            Some(r) => push_f64(o, r),
            None => o.extend_from_slice(b"null"),
        }
        o.extend_from_slice(b",\"arm_clock\":");
        push_f64(o, obs.arm_clock);
        o.extend_from_slice(if obs.exhausted {
            b",\"exhausted\":true,\"revealed\":["
        } else {
            b",\"exhausted\":false,\"revealed\":["
        });
        for (i, r) in obs.revealed.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            o.push(b'[');
            push_f64(o, r.time);
            o.push(b',');
            push_f64(o, if r.ok { r.reward } else { f64::NAN });
            o.push(b']');
        }
        o.push(b']');
        // Several objectives: the arm's values (absent with one objective).
        if !obs.objectives.is_empty() {
            o.extend_from_slice(b",\"objectives\":[");
            for (i, &x) in obs.objectives.iter().enumerate() {
                if i > 0 {
                    o.push(b',');
                }
                push_f64(o, x);
            }
            o.push(b']');
        }
        o.extend_from_slice(b"}\n");
    }

    fn take_fits(&mut self) -> u64 {
        std::mem::take(&mut self.fits)
    }

    fn finish(&mut self) -> Result<Option<String>> {
        self.out.extend_from_slice(b"{\"type\":\"end\"}\n");
        self.asked = "{\"type\":\"end\"}".to_string();
        let line = self.ask()?;
        let reply = self.check_error_reply(&line)?;
        if reply.kind.as_deref() != Some("end") {
            return Err(self.fail(format!(
                "it answered `{}` to end; expected {{\"type\": \"end\"}}",
                excerpt(&line, 200)
            )));
        }
        let stats = match crate::protocol::policy_stats(reply.stats.unwrap_or_default()) {
            Ok(s) => s,
            Err(e) => return Err(self.fail(format!("at the end of the cell {e}"))),
        };
        if let Some(p) = self.proc.take() {
            self.spec.give_back(p);
        }
        Ok(stats)
    }
}

impl Drop for ExternalPolicy {
    fn drop(&mut self) {
        // A cell that ended without `finish` (another error) leaves its process in an unknown
        // state: it is killed (Process::drop), never reused.
        self.proc.take();
    }
}

/// What the registry's `external` family builds: never used, since an external policy is built
/// from its spec (`PolicyConfig::build`); fails its cell if it ever is.
pub(crate) struct Unbuilt;

impl Policy for Unbuilt {
    fn observe(&mut self, _obs: &Observation<'_>) {}

    fn try_decide(&mut self, _view: &View<'_>, _rng: &mut Rng) -> Result<Action> {
        anyhow::bail!("an external policy was built without its command (a bug in banditbench)")
    }
}

/// A policy that could not be built: fails its cell with the reason.
pub(crate) struct Failed(pub String);

impl Policy for Failed {
    fn observe(&mut self, _obs: &Observation<'_>) {}

    fn begin(&mut self, _cell: &CellStart<'_>) -> Result<()> {
        anyhow::bail!("{}", self.0)
    }

    fn try_decide(&mut self, _view: &View<'_>, _rng: &mut Rng) -> Result<Action> {
        anyhow::bail!("{}", self.0)
    }
}

/// An action a policy outside the crate chose, checked against the cell: an arm that exists, and
/// the pool world's actions only in the pool world. The error says what is wrong.
pub(crate) fn check_action(action: Action, n: usize, world: WorldKind) -> Result<Action, String> {
    match action {
        Action::Pull(a) | Action::Train(a, _) | Action::Mutate(a) | Action::Retrain(a, ..)
            if a >= n =>
        {
            Err(format!(
                "it chose arm {a}, but the cell has {n} arm{} (0 to {})",
                if n == 1 { "" } else { "s" },
                n.saturating_sub(1)
            ))
        }
        Action::Draw
        | Action::DrawTo(_)
        | Action::Train(..)
        | Action::Mutate(_)
        | Action::Choose(_)
        | Action::ChooseTo(..)
        | Action::Retrain(..)
        | Action::Stop
            if world != WorldKind::Pool =>
        {
            Err(format!(
                "it asked to {}, which only the pool world offers; the {} world takes arm indices",
                match action {
                    Action::Draw | Action::DrawTo(_) => "draw a configuration",
                    Action::Train(..) => "train an arm to a unit",
                    Action::Mutate(_) => "mutate an arm",
                    Action::Choose(_) | Action::ChooseTo(..) => "choose a configuration",
                    Action::Retrain(..) => "retrain an arm",
                    _ => "stop",
                },
                world.as_str()
            ))
        }
        a => Ok(a),
    }
}
