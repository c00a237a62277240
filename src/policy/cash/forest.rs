//! A small deterministic regression forest for SMAC-style Bayesian optimisation.
//!
//! Hutter, Hoos & Leyton-Brown 2011 ("Sequential Model-Based Optimization for General Algorithm
//! Configuration", LION 5, §4.3) model the objective with a random forest: each tree is grown on a
//! bootstrap sample, every split considers a random subset of the features, and nodes with fewer
//! than `min_samples_split` points are not split. The predictive mean is the mean of the trees'
//! predictions; the variance is the variance across trees (the paper's choice), or the law of
//! total variance over the trees' leaves (SMAC3/pyrfr, which adds each leaf's own variance).
//!
//! No well-kept Rust crate exposes per-tree predictions of a regression forest (smartcore's and
//! linfa's forests predict only the mean), so the forest is written here: a few hundred points,
//! a few dozen features, grown with the cell's random stream, hence identical at any thread count.

use crate::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForestParams {
    pub n_trees: usize,
    pub bootstrap: bool,
    pub min_samples_split: usize,
    pub min_samples_leaf: usize,
    /// Features considered at each split (at least 1).
    pub max_features: usize,
    pub max_depth: usize,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    /// `u32::MAX` for a leaf.
    feature: u32,
    threshold: f32,
    left: u32,
    right: u32,
    mean: f64,
    var: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Forest {
    trees: Vec<Vec<Node>>,
}

/// A prediction: the mean over trees, the variance across trees, and the total variance (across
/// trees plus the mean of the leaves' own variances).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    pub mean: f64,
    pub var_across: f64,
    pub var_total: f64,
}

impl Forest {
    /// Grow a forest on rows `x` (each of the same width) with targets `y`.
    pub fn fit(x: &[Vec<f32>], y: &[f64], p: &ForestParams, rng: &mut Rng) -> Forest {
        // Each feature's rows in value order, once for all trees (integer keys sort fast: the
        // order-preserving bits of the value, then the row).
        let width = x.first().map_or(0, Vec::len);
        let key = |v: f32| {
            let b = v.to_bits();
            if b >> 31 == 1 { !b } else { b | 0x8000_0000 }
        };
        let gorder: Vec<Vec<u32>> = (0..width)
            .map(|f| {
                let mut k: Vec<u64> = x
                    .iter()
                    .enumerate()
                    .map(|(r, row)| (u64::from(key(row[f])) << 32) | r as u64)
                    .collect();
                k.sort_unstable();
                k.into_iter().map(|k| k as u32).collect()
            })
            .collect();
        let trees = (0..p.n_trees)
            .map(|_| grow_tree(x, y, &gorder, p, rng))
            .collect();
        Forest { trees }
    }

    /// Predict the point whose feature `f` is `feat(f)`.
    pub fn predict(&self, feat: impl Fn(usize) -> f32) -> Prediction {
        let t = self.trees.len() as f64;
        let (mut s, mut s2, mut v) = (0.0, 0.0, 0.0);
        for nodes in &self.trees {
            let mut i = 0usize;
            loop {
                let nd = &nodes[i];
                if nd.feature == u32::MAX {
                    s += nd.mean;
                    s2 += nd.mean * nd.mean;
                    v += nd.var;
                    break;
                }
                i = if feat(nd.feature as usize) <= nd.threshold {
                    nd.left as usize
                } else {
                    nd.right as usize
                };
            }
        }
        let mean = s / t;
        let var_across = (s2 / t - mean * mean).max(0.0);
        Prediction {
            mean,
            var_across,
            var_total: var_across + v / t,
        }
    }
}

/// One tree's working state. Every feature keeps the sample positions sorted by its value
/// (sorted once per tree); a node is a segment `lo..hi` of each of these orders, and a split
/// partitions the segments stably, so no node sorts again. A feature constant in a node (its
/// first and last value in the segment agree: in a flat CASH encoding, the dimensions of every
/// learner absent from the node) is dropped for the whole subtree.
struct Grower<'a> {
    p: &'a ForestParams,
    width: usize,
    ys: Vec<f64>,
    /// Column-major: `xs[f][pos]`.
    xs: Vec<Vec<f32>>,
    ord: Vec<Vec<u32>>,
    /// The sample positions of each node's segment (in no particular order).
    members: Vec<u32>,
    left: Vec<bool>,
    tmp: Vec<u32>,
    nodes: Vec<Node>,
}

fn grow_tree(
    x: &[Vec<f32>],
    y: &[f64],
    gorder: &[Vec<u32>],
    p: &ForestParams,
    rng: &mut Rng,
) -> Vec<Node> {
    let n = y.len();
    let width = x.first().map_or(0, Vec::len);
    let samp: Vec<usize> = if p.bootstrap {
        (0..n).map(|_| rng.below(n)).collect()
    } else {
        (0..n).collect()
    };
    let xs: Vec<Vec<f32>> = (0..width)
        .map(|f| samp.iter().map(|&r| x[r][f]).collect())
        .collect();
    // The sample positions of each row (a row drawn k times has k), then each feature's
    // positions in value order from the rows' order.
    let mut start = vec![0u32; n + 1];
    for &r in &samp {
        start[r + 1] += 1;
    }
    for r in 0..n {
        start[r + 1] += start[r];
    }
    let mut fill = start.clone();
    let mut at = vec![0u32; n];
    for (pos, &r) in samp.iter().enumerate() {
        at[fill[r] as usize] = pos as u32;
        fill[r] += 1;
    }
    let ord: Vec<Vec<u32>> = gorder
        .iter()
        .map(|rows| {
            let mut o = Vec::with_capacity(n);
            for &r in rows {
                o.extend_from_slice(
                    &at[start[r as usize] as usize..start[r as usize + 1] as usize],
                );
            }
            o
        })
        .collect();
    let mut g = Grower {
        p,
        width,
        ys: samp.iter().map(|&r| y[r]).collect(),
        xs,
        ord,
        members: (0..n as u32).collect(),
        left: vec![false; n],
        tmp: Vec::with_capacity(n),
        nodes: Vec::new(),
    };
    let active: Vec<usize> = (0..width).collect();
    if n > 0 {
        g.grow(0, n, &active, 0, rng);
    }
    g.nodes
}

impl Grower<'_> {
    /// Grow the subtree over the segment `lo..hi`; returns its root's index.
    fn grow(&mut self, lo: usize, hi: usize, active: &[usize], depth: usize, rng: &mut Rng) -> u32 {
        let m = &self.members[lo..hi];
        let n = m.len();
        let mean = m.iter().map(|&i| self.ys[i as usize]).sum::<f64>() / n as f64;
        let var = m
            .iter()
            .map(|&i| (self.ys[i as usize] - mean).powi(2))
            .sum::<f64>()
            / n as f64;
        let me = self.nodes.len() as u32;
        self.nodes.push(Node {
            feature: u32::MAX,
            threshold: 0.0,
            left: 0,
            right: 0,
            mean,
            var,
        });
        if n < self.p.min_samples_split || depth >= self.p.max_depth || var <= 1e-12 {
            return me;
        }
        // Features that vary in this node.
        let varying: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&f| {
                let (o, c) = (&self.ord[f], &self.xs[f]);
                c[o[lo] as usize] != c[o[hi - 1] as usize]
            })
            .collect();
        if varying.is_empty() {
            return me;
        }
        // A random subset of all features (partial Fisher-Yates), as if none were dropped, so
        // the random stream does not depend on which features vary.
        let width = self.width;
        let k = self.p.max_features.clamp(1, width);
        let mut feats: Vec<usize> = (0..width).collect();
        for i in 0..k {
            let j = i + rng.below(width - i);
            feats.swap(i, j);
        }
        let mut chosen = feats[..k].to_vec();
        chosen.sort_unstable();
        let total: f64 = m.iter().map(|&i| self.ys[i as usize]).sum();
        let min_leaf = self.p.min_samples_leaf;
        let mut best: Option<(f64, usize, f32)> = None;
        for &f in &chosen {
            if varying.binary_search(&f).is_err() {
                continue;
            }
            let (o, c) = (&self.ord[f][lo..hi], &self.xs[f]);
            let mut sum_left = 0.0;
            for s in 1..n {
                sum_left += self.ys[o[s - 1] as usize];
                let (a, b) = (c[o[s - 1] as usize], c[o[s] as usize]);
                if b <= a || s < min_leaf || n - s < min_leaf {
                    continue;
                }
                // Maximising the SSE reduction = maximising S_l²/n_l + S_r²/n_r.
                let right = total - sum_left;
                let gain = sum_left * sum_left / s as f64 + right * right / (n - s) as f64;
                if best.is_none_or(|q| gain > q.0 + 1e-12) {
                    best = Some((gain, f, 0.5 * (a + b)));
                }
            }
        }
        let Some((_, f, thr)) = best else {
            return me;
        };
        // Partition every varying feature's segment, and the members, stably.
        for &i in &self.members[lo..hi] {
            self.left[i as usize] = self.xs[f][i as usize] <= thr;
        }
        let mut n_left = 0;
        for list in varying
            .iter()
            .map(|&g| g as isize)
            .chain(std::iter::once(-1))
        {
            let seg = if list < 0 {
                &mut self.members[lo..hi]
            } else {
                &mut self.ord[list as usize][lo..hi]
            };
            self.tmp.clear();
            let mut w = 0;
            for r in 0..seg.len() {
                let v = seg[r];
                if self.left[v as usize] {
                    seg[w] = v;
                    w += 1;
                } else {
                    self.tmp.push(v);
                }
            }
            seg[w..].copy_from_slice(&self.tmp);
            n_left = w;
        }
        let li = self.grow(lo, lo + n_left, &varying, depth + 1, rng);
        let ri = self.grow(lo + n_left, hi, &varying, depth + 1, rng);
        let nd = &mut self.nodes[me as usize];
        nd.feature = f as u32;
        nd.threshold = thr;
        nd.left = li;
        nd.right = ri;
        me
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(n_trees: usize, bootstrap: bool) -> ForestParams {
        ForestParams {
            n_trees,
            bootstrap,
            min_samples_split: 2,
            min_samples_leaf: 1,
            max_features: 1,
            max_depth: 20,
        }
    }

    #[test]
    fn one_tree_without_bootstrap_splits_a_step_exactly() {
        // y = 0 for x < 0.5, 1 above: one split at the midpoint 0.45, leaves 0 and 1.
        let x: Vec<Vec<f32>> = [0.1, 0.2, 0.4, 0.5, 0.7, 0.9]
            .iter()
            .map(|&v| vec![v])
            .collect();
        let y = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let f = Forest::fit(&x, &y, &params(1, false), &mut Rng::new(1));
        assert_eq!(f.predict(|_| 0.44).mean, 0.0);
        assert_eq!(f.predict(|_| 0.46).mean, 1.0);
        assert_eq!(f.predict(|_| 0.46).var_across, 0.0);
    }

    #[test]
    fn spread_across_trees_is_the_variance_of_their_means() {
        // Bootstrapped trees disagree between the clusters; the mean stays in [0, 1] and the
        // across-tree variance is that of the per-tree predictions, bounded by 1/4.
        let x: Vec<Vec<f32>> = (0..20).map(|i| vec![i as f32 / 20.0]).collect();
        let y: Vec<f64> = (0..20).map(|i| f64::from(u8::from(i >= 10))).collect();
        let f = Forest::fit(&x, &y, &params(10, true), &mut Rng::new(7));
        let p = f.predict(|_| 0.475);
        assert!((0.0..=1.0).contains(&p.mean));
        assert!(p.var_across <= 0.25 + 1e-12 && p.var_total >= p.var_across);
        let q = f.predict(|_| 0.01);
        assert!(q.mean < 0.2, "far in the 0 cluster: {}", q.mean);
        // The same stream grows the same forest.
        let g = Forest::fit(&x, &y, &params(10, true), &mut Rng::new(7));
        assert_eq!(g.predict(|_| 0.475), p);
    }
}
