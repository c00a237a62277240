//! The terminal's side of a run's progress: the description line, a progress bar (not drawn
//! with --quiet or when stderr is not a terminal), notes and the closing line, on stderr. When
//! stderr is not a terminal (a log file under `nohup` or Slurm), a plain line says how far the run
//! is, at most once a minute (`BANDITBENCH_PROGRESS_EVERY` seconds), so a long run's log shows
//! its progress where no bar can be drawn.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::experiment::{Level, Progress, RunSummary};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Terminal {
    quiet: bool,
    bar: Mutex<Option<ProgressBar>>,
    /// Plain progress lines: how often, and when the last was written (None: a bar is drawn, or
    /// --quiet).
    lines: Option<(Duration, Mutex<Instant>)>,
}

/// The variable that sets how many seconds pass at least between two plain progress lines.
const EVERY_VAR: &str = "BANDITBENCH_PROGRESS_EVERY";
const EVERY_DEFAULT: Duration = Duration::from_secs(60);

impl Terminal {
    pub fn new(quiet: bool) -> Terminal {
        let lines = (!quiet && !std::io::stderr().is_terminal())
            .then(|| (line_interval(), Mutex::new(Instant::now())));
        Terminal {
            quiet,
            bar: Mutex::new(None),
            lines,
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
            Some(b) => b.suspend(|| say(&line)),
            None => say(&line),
        }
    }

    fn start(&self, line: &str, cells: usize) {
        say(line);
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
        let Some(b) = self.bar() else { return };
        if cells == 0 {
            return;
        }
        b.inc(cells as u64);
        let Some((every, last)) = &self.lines else {
            return;
        };
        let Ok(mut last) = last.lock() else { return };
        if last.elapsed() < *every {
            return;
        }
        *last = Instant::now();
        let (pos, len) = (b.position(), b.length().unwrap_or(0));
        say(&format!(
            "progress: {pos}/{len} cells ({:.0} %), {} elapsed, {} cells/s, ETA {}",
            100.0 * pos as f64 / len.max(1) as f64,
            clock(b.elapsed()),
            rate_text(b.per_sec()),
            clock(b.eta()),
        ));
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
            say(&format!(
                "ran {} cells in {:.2} s ({:.0} cells/s); {} were already finished{cached}; results in {}",
                ran,
                s.seconds,
                ran as f64 / s.seconds.max(1e-9),
                s.already_done,
                s.out.display()
            ));
        }
    }
}

/// A line on stderr. A stderr that cannot be written (a closed pipe: `... 2>&1 | head`) loses the
/// line and nothing else: `eprintln!` would panic, in a worker thread the middle of a run.
pub(crate) fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The interval between plain progress lines: `BANDITBENCH_PROGRESS_EVERY` seconds (0: a line
/// each time cells finish), else a minute; a value that is not a number of seconds is named in a
/// warning and the minute kept.
fn line_interval() -> Duration {
    let Ok(text) = std::env::var(EVERY_VAR) else {
        return EVERY_DEFAULT;
    };
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Duration::from_secs_f64(s),
        _ => {
            say(&format!(
                "warning: {EVERY_VAR}={text:?} is not a number of seconds (0 or more); \
                 progress lines come every {} s",
                EVERY_DEFAULT.as_secs()
            ));
            EVERY_DEFAULT
        }
    }
}

/// A duration as H:MM:SS.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
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

    #[test]
    fn clocks_show_hours_minutes_and_seconds() {
        use std::time::Duration;
        assert_eq!(super::clock(Duration::from_secs(0)), "0:00:00");
        assert_eq!(super::clock(Duration::from_secs(3 * 3600 + 62)), "3:01:02");
        assert_eq!(super::clock(Duration::from_millis(59_999)), "0:00:59");
    }
}
