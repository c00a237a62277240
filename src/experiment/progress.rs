//! What a run tells its caller while it goes. The library never prints: notes, warnings, errors
//! of cells that let the run go on, and progress reach the caller through this trait (the command
//! line prints them and draws a bar; tests and reproductions may stay silent).

use super::RunSummary;

/// How much a note matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Worth knowing.
    Note,
    /// The results may not be what was meant.
    Warning,
    /// The run could not go on.
    Error,
}

impl Level {
    /// The word printed before the message.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Note => "note",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }
}

/// Receives a run's notes and progress (from worker threads too).
pub trait Progress: Send + Sync {
    /// A one-line note, warning or error.
    fn note(&self, _level: Level, _text: &str) {}
    /// A run begins: a line describing its grid, and the cells of this run (or shard).
    fn start(&self, _line: &str, _cells: usize) {}
    /// `cells` of the cells announced by `start` were finished by an earlier run (a resume):
    /// they will not be run, so a bar counts to the rest.
    fn resumed(&self, _cells: usize) {}
    /// `cells` more cells finished.
    fn advance(&self, _cells: usize) {}
    /// The run ended; `summary` when it succeeded.
    fn finish(&self, _summary: Option<&RunSummary>) {}
    /// Asked between chunks of cells (about once a second), on the thread that called the run:
    /// `true` stops the run, keeping every finished cell (a notebook's interrupt).
    fn interrupted(&self) -> bool {
        false
    }
}

/// Tells nobody anything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {}
