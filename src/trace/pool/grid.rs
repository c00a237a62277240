//! A pool's encoded space (grid levels, or numeric ranges of a sampled learner) and its grid
//! neighbours.

use super::*;
use std::collections::{BTreeSet, HashMap};

/// The encoded space of a grid pool: ordinal levels k / (n − 1), categorical level indices.
pub fn grid_space(m: &PoolManifest, configs: &[PoolConfig]) -> crate::space::Space {
    use crate::space::{Scale, Space, SpaceDim};
    let dims: Vec<Vec<SpaceDim>> = m
        .learners
        .iter()
        .map(|l| {
            l.dims
                .iter()
                .map(|d| SpaceDim {
                    name: d.name.clone(),
                    scale: match d.kind {
                        DimKind::Ordinal => Scale::Ordinal(d.values.len() as u16),
                        DimKind::Categorical => Scale::Categorical(d.values.len() as u16),
                        DimKind::Numeric(r) => Scale::Numeric {
                            log: r.log,
                            lo: r.low,
                            hi: r.high,
                            int: r.int,
                        },
                    },
                    choices: d.values.clone(),
                })
                .collect()
        })
        .collect();
    let mut space = Space::new(dims);
    for c in configs {
        if m.learners[c.learner].is_sampled() || c.levels.len() != m.learners[c.learner].dims.len()
        {
            // Sampled from ranges, or off the grid (a learner's default): encoded from its JSON.
            let x = crate::space::encode_config(&space.learners[c.learner], &c.config)
                .unwrap_or_else(|_| vec![f32::NAN; space.learners[c.learner].len()]);
            space.push(c.learner, &x);
            continue;
        }
        let x: Vec<f32> = c
            .levels
            .iter()
            .zip(&m.learners[c.learner].dims)
            .map(|(&k, d)| match d.kind {
                DimKind::Categorical => f32::from(k),
                DimKind::Ordinal if d.values.len() > 1 => {
                    f32::from(k) / (d.values.len() - 1) as f32
                }
                DimKind::Ordinal | DimKind::Numeric(_) => 0.0,
            })
            .collect();
        space.push(c.learner, &x);
    }
    space
}

/// Grid neighbours of every configuration: the same learner with one dimension changed by one
/// ordinal step or to another categorical level, among the configurations present.
pub fn grid_neighbours(m: &PoolManifest, configs: &[PoolConfig]) -> Vec<Vec<u32>> {
    let at: HashMap<(usize, &[u16]), u32> = configs
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.learner, c.levels.as_slice()), i as u32))
        .collect();
    configs
        .iter()
        .map(|c| {
            let mut out = BTreeSet::new();
            let dims = &m.learners[c.learner].dims;
            if m.learners[c.learner].is_sampled() || c.levels.len() != dims.len() {
                // A configuration off the grid (a learner's default) has no grid neighbours.
                return Vec::new();
            }
            let mut lv = c.levels.clone();
            for (k, d) in dims.iter().enumerate() {
                let here = c.levels[k];
                let cands: Vec<u16> = match d.kind {
                    DimKind::Ordinal => [here.checked_sub(1), here.checked_add(1)]
                        .into_iter()
                        .flatten()
                        .filter(|&v| (v as usize) < d.values.len())
                        .collect(),
                    DimKind::Categorical => {
                        (0..d.values.len() as u16).filter(|&v| v != here).collect()
                    }
                    DimKind::Numeric(_) => Vec::new(),
                };
                for v in cands {
                    lv[k] = v;
                    if let Some(&j) = at.get(&(c.learner, lv.as_slice())) {
                        out.insert(j);
                    }
                }
                lv[k] = here;
            }
            out.into_iter().collect()
        })
        .collect()
}
