//! Non-dominated archives whose hypervolume is kept as points arrive: a cell's front over time.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::hypervolume::hv_inside;
use super::weakly_dominates;

/// A first-objective key in a sorted map (points with NaN never enter).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Key(f64);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The non-dominated front of two minimised objectives inside a reference box, with its
/// hypervolume updated exactly on each insertion in O(log n) amortised: the new point's
/// exclusive area is summed along the staircase it covers, and the points it dominates leave.
#[derive(Clone, Debug)]
pub struct Front2 {
    reference: [f64; 2],
    /// First objective → second; the second falls as the first rises.
    points: BTreeMap<Key, f64>,
    hv: f64,
    gone: Vec<Key>,
}

impl Front2 {
    /// An empty front inside the box bounded by `reference`.
    pub fn new(reference: [f64; 2]) -> Front2 {
        Front2 {
            reference,
            points: BTreeMap::new(),
            hv: 0.0,
            gone: Vec::new(),
        }
    }

    /// The hypervolume of the front.
    pub fn hypervolume(&self) -> f64 {
        self.hv
    }

    /// The front's points, by the first objective ascending.
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.points.iter().map(|(k, &y)| (k.0, y))
    }

    /// How many points the front has.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// The front has no point.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Add the point (x, y); returns the hypervolume it added, 0 when the front weakly dominates
    /// it or it is not strictly inside the reference box.
    pub fn insert(&mut self, x: f64, y: f64) -> f64 {
        let [rx, ry] = self.reference;
        if !(x < rx && y < ry) {
            return 0.0;
        }
        // The staircase's height at x: the second objective of the last point at or before x.
        let mut height = match self.points.range(..=Key(x)).next_back() {
            Some((_, &yp)) if yp <= y => return 0.0,
            Some((_, &yp)) => yp,
            None => ry,
        };
        let mut from = x;
        let mut added = 0.0;
        let mut to = rx;
        self.gone.clear();
        for (k, &yq) in self.points.range(Key(x)..) {
            if yq < y {
                to = k.0;
                break;
            }
            // Dominated by the new point: its step leaves the staircase.
            added += (k.0 - from) * (height - y);
            from = k.0;
            height = yq;
            self.gone.push(*k);
        }
        added += (to - from) * (height - y);
        for k in &self.gone {
            self.points.remove(k);
        }
        self.points.insert(Key(x), y);
        self.hv += added;
        added
    }
}

/// The non-dominated archive of points in any number of minimised objectives, with its
/// hypervolume against a fixed reference point kept exactly as points arrive: two objectives
/// through [`Front2`]; more by each new point's exclusive hypervolume (its box less the
/// hypervolume of its limit set against the archive).
#[derive(Clone, Debug)]
pub struct Archive {
    reference: Vec<f64>,
    front2: Option<Front2>,
    /// d ≠ 2: the archive's points, flat.
    points: Vec<f64>,
    hv: f64,
}

impl Archive {
    /// An empty archive measured against `reference` (one coordinate per objective).
    pub fn new(reference: &[f64]) -> Archive {
        assert!(!reference.is_empty(), "a reference point of no objective");
        Archive {
            reference: reference.to_vec(),
            front2: (reference.len() == 2).then(|| Front2::new([reference[0], reference[1]])),
            points: Vec::new(),
            hv: 0.0,
        }
    }

    /// The archive's hypervolume.
    pub fn hypervolume(&self) -> f64 {
        self.front2.as_ref().map_or(self.hv, Front2::hypervolume)
    }

    /// The archive's points, flat (two objectives: by the first ascending).
    pub fn points(&self) -> Vec<f64> {
        match &self.front2 {
            Some(f) => f.points().flat_map(|(x, y)| [x, y]).collect(),
            None => self.points.clone(),
        }
    }

    /// Add a point; returns the hypervolume it added (0 when the archive weakly dominates it or
    /// it is not strictly inside the reference box).
    pub fn insert(&mut self, p: &[f64]) -> f64 {
        let d = self.reference.len();
        assert_eq!(p.len(), d, "a point of {} objectives", p.len());
        if let Some(f) = &mut self.front2 {
            return f.insert(p[0], p[1]);
        }
        if !p.iter().zip(&self.reference).all(|(x, r)| x < r) {
            return 0.0;
        }
        if self.points.chunks_exact(d).any(|a| weakly_dominates(a, p)) {
            return 0.0;
        }
        let boxed: f64 = p.iter().zip(&self.reference).map(|(x, r)| r - x).product();
        let limit: Vec<f64> = self
            .points
            .chunks_exact(d)
            .flat_map(|a| a.iter().zip(p).map(|(x, y)| x.max(*y)))
            .collect();
        let added = boxed - hv_inside(limit, &self.reference);
        let kept: Vec<f64> = self
            .points
            .chunks_exact(d)
            .filter(|a| !weakly_dominates(p, a))
            .flatten()
            .copied()
            .collect();
        self.points = kept;
        self.points.extend_from_slice(p);
        self.hv += added;
        added
    }
}

/// The hypervolume after each point of `points` (flat, minimised) in turn: the anytime
/// hypervolume of a run in the order its evaluations finished.
pub fn hypervolume_history(points: &[f64], reference: &[f64]) -> Vec<f64> {
    let d = reference.len();
    assert!(
        d > 0 && points.len().is_multiple_of(d),
        "points of {d} objectives"
    );
    let mut archive = Archive::new(reference);
    points
        .chunks_exact(d)
        .map(|p| {
            archive.insert(p);
            archive.hypervolume()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::hypervolume;
    use super::*;

    #[test]
    fn each_insertion_adds_its_exclusive_area() {
        let mut f = Front2::new([4.0, 4.0]);
        assert_eq!(f.insert(1.0, 3.0), 3.0);
        // Its box of 3 overlaps the first one's by 1.
        assert_eq!(f.insert(3.0, 1.0), 2.0);
        // Weakly dominated, outside, and on the boundary: nothing.
        assert_eq!(f.insert(3.0, 3.0), 0.0);
        assert_eq!(f.insert(1.0, 3.0), 0.0);
        assert_eq!(f.insert(4.0, 0.0), 0.0);
        // Dominates both: the 3 × 3 box, less the 5 they had.
        assert_eq!(f.insert(1.0, 1.0), 4.0);
        assert_eq!(f.len(), 1);
        assert_eq!(f.hypervolume(), 9.0);
        // Equal first objective, lower second: replaces the point.
        assert_eq!(f.insert(1.0, 0.5), 1.5);
        assert_eq!(f.points().collect::<Vec<_>>(), vec![(1.0, 0.5)]);
    }

    #[test]
    fn the_history_ends_at_the_static_hypervolume_in_every_dimension() {
        // A Weyl sequence's fractional parts: spread, unequal, no generator needed.
        let mut u = 0.0f64;
        let mut next = || {
            u = (u + 0.618_033_988_749_895).fract();
            (u * 7.0).fract()
        };
        for d in 1..=5 {
            let pts: Vec<f64> = (0..40 * d).map(|_| next()).collect();
            let r = vec![1.1; d];
            let h = hypervolume_history(&pts, &r);
            assert!(h.windows(2).all(|w| w[0] <= w[1]));
            let last = *h.last().unwrap();
            let whole = hypervolume(&pts, &r);
            assert!(
                (last - whole).abs() <= 1e-12 * whole,
                "d = {d}: {last} vs {whole}"
            );
        }
    }
}
