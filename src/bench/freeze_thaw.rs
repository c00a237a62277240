//! `bench --only freeze-thaw`: CPU time of one DPL, one DyHPO and one freeze-thaw GP decision at
//! a number of observations, on a history taken from a recorded TaskSet task.

use crate::policy::freeze_thaw::{DplProbe, DyhpoProbe, FtgpProbe};
use crate::rng::Rng;
use crate::trace::Status;
use crate::trace::pool::Curve;

/// A history of one-unit evaluations: `observations` units over configurations taken in a seeded
/// order, trained to 1, 2, 4, …, 32 and then all units in turn (many shallow curves and a few
/// deep ones, as a freeze-thaw run leaves them), the last configuration cut to make the total.
/// Configurations whose curve fails are skipped. Each entry: a configuration and its recorded
/// losses unit by unit.
pub fn history(
    curves: &[Curve],
    units: u32,
    observations: usize,
    seed: u64,
) -> Vec<(u32, Vec<f32>)> {
    let mut order: Vec<u32> = (0..curves.len() as u32).collect();
    Rng::new(seed).shuffle(&mut order);
    let lengths = [1u32, 2, 4, 8, 16, 32, units];
    let mut left = observations;
    let mut out = Vec::new();
    let whole = order
        .iter()
        .filter(|&&c| curves[c as usize].status.iter().all(|s| *s == Status::Ok));
    for (i, &c) in whole.enumerate() {
        if left == 0 {
            break;
        }
        let score = &curves[c as usize].score;
        let len = (lengths[i % lengths.len()].min(units) as usize)
            .min(left)
            .min(score.len());
        out.push((c, score[..len].to_vec()));
        left -= len;
    }
    out
}

/// A policy's decision taken apart: the refinement after the newest observation and the
/// prediction of every candidate.
pub trait Decision {
    fn refine(&mut self);
    fn predict(&mut self);
    fn candidates(&self) -> usize;
}

impl Decision for DplProbe {
    fn refine(&mut self) {
        DplProbe::refine(self)
    }
    fn predict(&mut self) {
        DplProbe::predict(self)
    }
    fn candidates(&self) -> usize {
        DplProbe::candidates(self)
    }
}

impl Decision for DyhpoProbe {
    fn refine(&mut self) {
        DyhpoProbe::refine(self)
    }
    fn predict(&mut self) {
        DyhpoProbe::predict(self)
    }
    fn candidates(&self) -> usize {
        DyhpoProbe::candidates(self)
    }
}

impl Decision for FtgpProbe {
    fn refine(&mut self) {
        FtgpProbe::refine(self)
    }
    fn predict(&mut self) {
        FtgpProbe::predict(self)
    }
    fn candidates(&self) -> usize {
        FtgpProbe::candidates(self)
    }
}

/// The probe of `policy` (`dpl`, `dyhpo` or `ftgp`) at its defaults after `history`.
pub fn probe(
    policy: &str,
    space: &crate::space::Space,
    units: u32,
    history: &[(u32, Vec<f32>)],
    seed: u64,
) -> Box<dyn Decision> {
    match policy {
        "dyhpo" => Box::new(DyhpoProbe::new(space, units, history, seed)),
        "ftgp" => Box::new(FtgpProbe::new(space, units, history, seed)),
        _ => Box::new(DplProbe::new(space, units, history, seed)),
    }
}

/// One decision's CPU seconds, the median of `repeats`: (refinement, prediction), and the
/// configurations predicted.
pub fn decision(probe: &mut dyn Decision, repeats: usize) -> (f64, f64, usize) {
    let (mut fit, mut predict) = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        let t = super::process_cpu_seconds();
        probe.refine();
        let t1 = super::process_cpu_seconds();
        probe.predict();
        let t2 = super::process_cpu_seconds();
        fit.push(t1 - t);
        predict.push(t2 - t1);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(&mut fit), median(&mut predict), probe.candidates())
}
