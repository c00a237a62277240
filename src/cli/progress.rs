//! The terminal's side of a run's progress: the description line, a progress bar (not drawn
//! with --quiet or when stderr is not a terminal), notes and the closing line, on stderr.

use std::sync::Mutex;

use crate::experiment::{Level, Progress, RunSummary};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Terminal {
    quiet: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Terminal {
    pub fn new(quiet: bool) -> Terminal {
        Terminal {
            quiet,
            bar: Mutex::new(None),
        }
    }

    fn bar(&self) -> Option<ProgressBar> {
        self.bar.lock().ok().and_then(|b| b.clone())
    }
}

impl Progress for Terminal {
    fn note(&self, level: Level, text: &str) {
        let line = format!("{}: {text}", level.as_str());
        match self.bar() {
            Some(b) => b.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    fn start(&self, line: &str, cells: usize) {
        eprintln!("{line}");
        let bar = ProgressBar::new(cells as u64);
        if self.quiet {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:40}] {pos}/{len} cells  {rate}  ETA {eta}",
            )
            .expect("valid template")
            .with_key(
                "rate",
                |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{} cells/s", rate_text(s.per_sec()));
                },
            )
            .progress_chars("=> "),
        );
        if let Ok(mut b) = self.bar.lock() {
            *b = Some(bar);
        }
    }

    fn resumed(&self, cells: usize) {
        if let Some(b) = self.bar() {
            b.set_length(b.length().unwrap_or(0).saturating_sub(cells as u64));
        }
    }

    fn advance(&self, cells: usize) {
        if let Some(b) = self.bar() {
            b.inc(cells as u64);
        }
    }

    fn finish(&self, summary: Option<&RunSummary>) {
        if let Some(b) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            b.finish_and_clear();
        }
        if let Some(s) = summary {
            let cached = s.cache.map_or(String::new(), |c| {
                format!(
                    "; {} came from the cell cache and {} were stored in it{}",
                    c.hits,
                    c.stored,
                    if c.corrupt > 0 {
                        format!(" ({} damaged entries replayed)", c.corrupt)
                    } else {
                        String::new()
                    }
                )
            });
            // Cells replayed, not those taken from the cache.
            let ran = s.ran - s.cache.map_or(0, |c| c.hits as usize);
            eprintln!(
                "ran {} cells in {:.2} s ({:.0} cells/s); {} were already finished{cached}; results in {}",
                ran,
                s.seconds,
                ran as f64 / s.seconds.max(1e-9),
                s.already_done,
                s.out.display()
            );
        }
    }
}

/// A rate with three significant digits at most ("1 234 cells/s" as "1230", "0.0412").
fn rate_text(r: f64) -> String {
    if !r.is_finite() || r <= 0.0 {
        return "0".to_string();
    }
    let digits = (2 - r.log10().floor() as i32).max(0) as usize;
    let rounded = if digits == 0 {
        let scale = 10f64.powi(r.log10().floor() as i32 - 2);
        (r / scale).round() * scale
    } else {
        r
    };
    format!("{rounded:.digits$}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn rates_show_three_significant_digits() {
        assert_eq!(super::rate_text(1_234.567_891), "1230");
        assert_eq!(super::rate_text(98.765_432_1), "98.8");
        assert_eq!(super::rate_text(0.041_234_5), "0.0412");
        assert_eq!(super::rate_text(0.0), "0");
    }
}
