//! The standard normal distribution's density and tails, for the statistics (`analysis`) and for
//! the model-based optimisers (`policy`), which do not depend on each other.

use libm::erfc;

const SQRT_2: f64 = std::f64::consts::SQRT_2;

/// Standard normal CDF, accurate in both tails.
pub fn norm_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / SQRT_2)
}

/// Standard normal upper tail P(Z > x).
pub fn norm_sf(x: f64) -> f64 {
    0.5 * erfc(x / SQRT_2)
}

/// The standard normal density.
pub fn norm_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}
