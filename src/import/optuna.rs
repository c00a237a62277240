//! Optuna's storages (Akiba et al. 2019, "Optuna: A Next-generation Hyperparameter Optimization
//! Framework"): a JournalStorage file (one JSON operation per line, replayed as
//! `optuna/storages/journal/_storage.py` replays it) or an SQLite storage (the RDB schema of
//! `optuna/storages/_rdb/models.py`). One study is one run: (policy, task, seed) come from the
//! study's name through a naming rule, from a study user attribute, or from the options.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::{Eval, ImportedRun, NameRule, Task, parse_seed};

/// A trial's state, as Optuna numbers it (`TrialState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Running,
    Complete,
    Pruned,
    Fail,
    Waiting,
}

impl State {
    fn from_code(c: i64) -> Option<State> {
        Some(match c {
            0 => State::Running,
            1 => State::Complete,
            2 => State::Pruned,
            3 => State::Fail,
            4 => State::Waiting,
            _ => return None,
        })
    }

    fn from_name(s: &str) -> Option<State> {
        Some(match s {
            "RUNNING" => State::Running,
            "COMPLETE" => State::Complete,
            "PRUNED" => State::Pruned,
            "FAIL" => State::Fail,
            "WAITING" => State::Waiting,
            _ => return None,
        })
    }

    fn finished(self) -> bool {
        matches!(self, State::Complete | State::Pruned | State::Fail)
    }
}

/// One trial of a study.
#[derive(Clone, Debug)]
pub(crate) struct Trial {
    pub number: u32,
    pub state: State,
    pub values: Option<Vec<f64>>,
    pub start: Option<f64>,
    pub complete: Option<f64>,
    pub intermediate: BTreeMap<i64, f64>,
    pub user_attrs: serde_json::Map<String, Value>,
}

/// One study.
#[derive(Clone, Debug)]
pub(crate) struct Study {
    pub name: String,
    /// true: maximise; one entry per objective.
    pub maximize: Vec<bool>,
    pub user_attrs: serde_json::Map<String, Value>,
    /// The objectives' names (`study.set_metric_names`, the system attribute
    /// `study:metric_names`), when set.
    pub metric_names: Option<Vec<String>>,
    pub trials: Vec<Trial>,
}

/// The study system attribute holding the objectives' names (Optuna's
/// `_SYSTEM_ATTR_METRIC_NAMES`).
const METRIC_NAMES: &str = "study:metric_names";

/// The names of a `study:metric_names` value: a list of text.
fn metric_names(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_str().map(str::to_string))
        .collect()
}

/// Seconds since 1970 of an Optuna datetime: `YYYY-MM-DD[T ]HH:MM:SS[.ffffff][Z|±HH:MM]`
/// (the journal writes ISO 8601 with an offset, SQLite naive local time).
pub(crate) fn seconds(text: &str) -> Option<f64> {
    let t = text.trim();
    let (date, rest) = (t.get(..10)?, t.get(11..)?);
    let mut d = date.split('-');
    let (y, m, day): (i64, i64, i64) = (
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
    );
    // A date and time that exists: month 1-12, a day of that month, hours 0-23, minutes 0-59,
    // seconds below 61 (a leap second), offsets within ±14:59; NaN, inf and signs are not
    // numbers of a clock.
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&m) || !(1..=month_days[(m - 1) as usize]).contains(&day) {
        return None;
    }
    // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let (clock, offset) = match rest.find(['+', '-', 'Z']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let mut c = clock.split(':');
    let (h, mi): (u8, u8) = (c.next()?.parse().ok()?, c.next()?.parse().ok()?);
    let s_text = c.next()?;
    if c.next().is_some() || !s_text.starts_with(|ch: char| ch.is_ascii_digit()) {
        return None;
    }
    let s: f64 = s_text.parse().ok()?;
    if h > 23 || mi > 59 || !(0.0..61.0).contains(&s) {
        return None;
    }
    let (h, mi) = (f64::from(h), f64::from(mi));
    let off = match offset {
        "" | "Z" => 0.0,
        o => {
            let sign = if o.starts_with('-') { -1.0 } else { 1.0 };
            let mut p = o[1..].split(':');
            let (oh, om): (u8, u8) = (
                p.next()?.parse().ok()?,
                p.next().unwrap_or("0").parse().ok()?,
            );
            if oh > 14 || om > 59 {
                return None;
            }
            sign * (f64::from(oh) * 3600.0 + f64::from(om) * 60.0)
        }
    };
    Some(days as f64 * 86_400.0 + h * 3600.0 + mi * 60.0 + s - off)
}

/// Replay a JournalStorage file into its studies (deleted studies left out), as Optuna's
/// `JournalStorageReplayResult` does: study ids count created studies, trial ids count created
/// trials, and an update to a finished trial is ignored.
/// One journal line's operation, and where it is (for messages).
struct Op<'a> {
    fields: serde_json::Map<String, Value>,
    at: &'a str,
}

impl Op<'_> {
    fn get(&self, k: &str) -> Option<&Value> {
        self.fields.get(k)
    }

    fn field(&self, k: &str) -> Result<&Value> {
        self.fields
            .get(k)
            .with_context(|| format!("{}: no field '{k}' in this operation", self.at))
    }

    fn int(&self, k: &str) -> Result<i64> {
        self.field(k)?
            .as_i64()
            .with_context(|| format!("{}: field '{k}' is not a whole number", self.at))
    }

    /// A trial state by its code (Optuna's 0-4).
    fn state(&self, c: i64) -> Result<State> {
        State::from_code(c)
            .with_context(|| format!("{}: trial state {c} is not one of Optuna's 0-4", self.at))
    }

    /// A date-and-time field as seconds, `None` when absent or null.
    fn time(&self, k: &str) -> Result<Option<f64>> {
        let at = self.at;
        match self.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(t)) => {
                Ok(Some(seconds(t).with_context(|| {
                    format!("{at}: field '{k}': '{t}' is not a date and time")
                })?))
            }
            Some(v) => bail!("{at}: field '{k}': {v} is not a date and time"),
        }
    }
}

/// The journal replayed so far: the studies by id, and per trial id its (study id, index in
/// that study's trials).
#[derive(Default)]
struct Journal {
    studies: BTreeMap<i64, Study>,
    next_study: i64,
    trials: Vec<(i64, usize)>,
}

impl Journal {
    /// Operation 0: a study is created (a second creation of one name is ignored, as Optuna's
    /// storage ignores it).
    fn create_study(&mut self, op: &Op<'_>) -> Result<()> {
        let at = op.at;
        let name = op
            .field("study_name")?
            .as_str()
            .with_context(|| format!("{at}: field 'study_name' is not text"))?
            .to_string();
        if self.studies.values().any(|s| s.name == name) {
            return Ok(());
        }
        let dirs = op
            .field("directions")?
            .as_array()
            .with_context(|| format!("{at}: field 'directions' is not a list"))?;
        let maximize = dirs
            .iter()
            .map(|d| match d.as_i64() {
                Some(1) => Ok(false),
                Some(2) => Ok(true),
                _ => bail!("{at}: direction {d} is neither 1 (minimize) nor 2 (maximize)"),
            })
            .collect::<Result<Vec<bool>>>()?;
        self.studies.insert(
            self.next_study,
            Study {
                name,
                maximize,
                user_attrs: Default::default(),
                metric_names: None,
                trials: Vec::new(),
            },
        );
        self.next_study += 1;
        Ok(())
    }

    /// Operation 4: a trial is created in a study, perhaps already finished (`enqueue_trial`,
    /// `add_trial`).
    fn create_trial(&mut self, op: &Op<'_>) -> Result<()> {
        let sid = op.int("study_id")?;
        let Some(s) = self.studies.get_mut(&sid) else {
            return Ok(());
        };
        let state = match op.get("state").and_then(Value::as_i64) {
            None => State::Running,
            Some(c) => op.state(c)?,
        };
        let values = match op.get("values") {
            Some(Value::Array(a)) => Some(numbers(a, op.at)?),
            _ => op.get("value").and_then(number).map(|v| vec![v]),
        };
        let intermediate = match op.get("intermediate_values") {
            Some(Value::Object(m)) => m
                .iter()
                .filter_map(|(k, v)| Some((k.parse::<i64>().ok()?, number(v)?)))
                .collect(),
            _ => BTreeMap::new(),
        };
        let user_attrs = match op.get("user_attrs") {
            Some(Value::Object(m)) => m.clone(),
            _ => Default::default(),
        };
        let number = s.trials.len() as u32;
        s.trials.push(Trial {
            number,
            state,
            values,
            start: op.time("datetime_start")?,
            complete: op.time("datetime_complete")?,
            intermediate,
            user_attrs,
        });
        self.trials.push((sid, s.trials.len() - 1));
        Ok(())
    }

    /// Operations 6-8 on a trial that is not finished: its state (and values), an intermediate
    /// value, a user attribute.
    fn update_trial(&mut self, code: i64, op: &Op<'_>) -> Result<()> {
        let id = op.int("trial_id")?;
        let Some(&(sid, k)) = usize::try_from(id).ok().and_then(|i| self.trials.get(i)) else {
            return Ok(());
        };
        let Some(t) = self.studies.get_mut(&sid).map(|s| &mut s.trials[k]) else {
            return Ok(());
        };
        if t.state.finished() {
            return Ok(());
        }
        match code {
            6 => {
                let state = op.state(op.int("state")?)?;
                if state == State::Running && t.state == State::Running {
                    return Ok(());
                }
                if let Some(Value::String(s)) = op.get("datetime_start")
                    && state == State::Running
                {
                    t.start = seconds(s);
                }
                if state.finished() {
                    let s = op.field("datetime_complete")?.as_str().unwrap_or("");
                    t.complete = Some(seconds(s).with_context(|| {
                        format!(
                            "{}: field 'datetime_complete': '{s}' is not a date and time",
                            op.at
                        )
                    })?);
                }
                t.state = state;
                if let Some(Value::Array(a)) = op.get("values") {
                    t.values = Some(numbers(a, op.at)?);
                }
            }
            7 => {
                let step = op.int("step")?;
                let v = number(op.field("intermediate_value")?).unwrap_or(f64::NAN);
                t.intermediate.insert(step, v);
            }
            _ => {
                if let Some(Value::Object(m)) = op.get("user_attr") {
                    t.user_attrs.extend(m.clone());
                }
            }
        }
        Ok(())
    }
}

pub(crate) fn read_journal(path: &Path) -> Result<Vec<Study>> {
    let text = crate::files::read_text(path, "Optuna's JournalStorage file (JSON lines)")?;
    let mut journal = Journal::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}: line {}", path.display(), i + 1);
        let line = python_json(line);
        let fields: serde_json::Map<String, Value> = match serde_json::from_str(&line) {
            Ok(Value::Object(m)) => m,
            Ok(_) => bail!("{at}: not a JSON object; an Optuna journal has one operation per line"),
            Err(e) => bail!(
                "{at}: not valid JSON ({e}); an Optuna journal has one JSON operation per line (a line cut short by a crash can be deleted)"
            ),
        };
        let op = Op { fields, at: &at };
        match op.int("op_code")? {
            0 => journal.create_study(&op)?,
            1 => {
                journal.studies.remove(&op.int("study_id")?);
            }
            2 => {
                if let Some(s) = journal.studies.get_mut(&op.int("study_id")?)
                    && let Some(Value::Object(m)) = op.get("user_attr")
                {
                    s.user_attrs.extend(m.clone());
                }
            }
            3 => {
                if let Some(s) = journal.studies.get_mut(&op.int("study_id")?)
                    && let Some(Value::Object(m)) = op.get("system_attr")
                    && let Some(v) = m.get(METRIC_NAMES)
                {
                    s.metric_names = metric_names(v);
                }
            }
            4 => journal.create_trial(&op)?,
            code @ 6..=8 => journal.update_trial(code, &op)?,
            5 | 9 | 10 => {}
            c => bail!(
                "{at}: operation {c} is not one of Optuna's journal operations (0-10); is this an Optuna JournalStorage file?"
            ),
        }
    }
    Ok(journal.studies.into_values().collect())
}

fn numbers(a: &[Value], at: &str) -> Result<Vec<f64>> {
    a.iter()
        .map(|v| match v {
            Value::Null => Ok(f64::NAN),
            v => number(v).with_context(|| format!("{at}: value {v} is not a number")),
        })
        .collect()
}

/// Marks `python_json` puts in place of Python's bare `NaN`, `Infinity` and `-Infinity`.
const PY_NAN: &str = "\u{0}NaN";
const PY_INF: &str = "\u{0}Infinity";
const PY_NEG_INF: &str = "\u{0}-Infinity";

/// A JSON number, or one of Python's non-finite floats as `python_json` marked it.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) if s == PY_NAN => Some(f64::NAN),
        Value::String(s) if s == PY_INF => Some(f64::INFINITY),
        Value::String(s) if s == PY_NEG_INF => Some(f64::NEG_INFINITY),
        v => v.as_f64(),
    }
}

/// A line of JSON as Python's `json` writes it, which (like Optuna's JournalStorage, for trials
/// that return them) writes the non-finite floats as bare `NaN`, `Infinity` and `-Infinity`:
/// those tokens outside strings become marked strings that [`number`] reads back; the rest is
/// unchanged (and returned borrowed when there are none).
fn python_json(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains("NaN") && !line.contains("Infinity") {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 16);
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else {
            let token = [
                ("-Infinity", PY_NEG_INF),
                ("Infinity", PY_INF),
                ("NaN", PY_NAN),
            ]
            .into_iter()
            .find(|(t, _)| rest.starts_with(t));
            if let Some((t, mark)) = token {
                out.push_str(&serde_json::to_string(mark).unwrap_or_default());
                rest = &rest[t.len()..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// Read an SQLite storage's studies.
pub(crate) fn read_sqlite(path: &Path) -> Result<Vec<Study>> {
    use rusqlite::{Connection, OpenFlags};
    let p = path.display();
    crate::files::check(path, "an Optuna SQLite storage (.db)")?;
    let db = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| anyhow::anyhow!("{p}: cannot open as SQLite ({e})"))?;
    // A study still running holds write locks for moments: wait a second for one to pass.
    db.busy_timeout(std::time::Duration::from_secs(1))
        .map_err(|e| anyhow::anyhow!("{p}: cannot open as SQLite ({e})"))?;
    let q = |e: rusqlite::Error| {
        use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked};
        match e.sqlite_error_code() {
            Some(DatabaseBusy | DatabaseLocked) => anyhow::anyhow!(
                "{p}: locked by another process (an optimization still writing to it?); import it when that has finished, or import a copy ({e})"
            ),
            _ => anyhow::anyhow!("{p}: not an Optuna storage, or one of another schema ({e})"),
        }
    };
    let p = p.to_string();
    let mut studies = sql_studies(&db, &p, &q)?;
    let index = sql_trials(&db, &p, &q, &mut studies)?;
    // The trials' values, intermediate values and user attributes.
    for (tid, _, v) in float_rows(
        &db,
        "SELECT trial_id, objective, value, value_type FROM trial_values ORDER BY trial_id, objective",
        &q,
    )? {
        if let Some(t) = trial_at(&mut studies, &index, tid) {
            t.values.get_or_insert_with(Vec::new).push(v);
        }
    }
    for (tid, step, v) in float_rows(
        &db,
        "SELECT trial_id, step, intermediate_value, intermediate_value_type FROM trial_intermediate_values",
        &q,
    )? {
        if let Some(t) = trial_at(&mut studies, &index, tid) {
            t.intermediate.insert(step, v);
        }
    }
    for (tid, key, v) in attr_rows(
        &db,
        "SELECT trial_id, key, value_json FROM trial_user_attributes",
        &q,
    )? {
        if let Some(t) = trial_at(&mut studies, &index, tid) {
            let v = serde_json::from_str(&v)
                .with_context(|| format!("{p}: trial {tid}: user attribute '{key}' is not JSON"))?;
            t.user_attrs.insert(key, v);
        }
    }
    Ok(studies.into_values().collect())
}

/// Trial `tid` of the storage, by the index [`sql_trials`] made.
fn trial_at<'s>(
    studies: &'s mut BTreeMap<i64, Study>,
    index: &BTreeMap<i64, (i64, usize)>,
    tid: i64,
) -> Option<&'s mut Trial> {
    let &(sid, k) = index.get(&tid)?;
    studies.get_mut(&sid).map(|s| &mut s.trials[k])
}

/// The storage's studies by id: names, directions and user attributes, no trials yet.
fn sql_studies(db: &rusqlite::Connection, p: &str, q: SqlError) -> Result<BTreeMap<i64, Study>> {
    let mut studies: BTreeMap<i64, Study> = BTreeMap::new();
    let mut st = db
        .prepare("SELECT study_id, study_name FROM studies")
        .map_err(q)?;
    let rows = st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .map_err(q)?;
    for row in rows {
        let (id, name) = row.map_err(q)?;
        studies.insert(
            id,
            Study {
                name,
                maximize: Vec::new(),
                user_attrs: Default::default(),
                metric_names: None,
                trials: Vec::new(),
            },
        );
    }
    let mut st = db
        .prepare("SELECT study_id, direction FROM study_directions ORDER BY study_id, objective")
        .map_err(q)?;
    for row in st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .map_err(q)?
    {
        let (id, d) = row.map_err(q)?;
        if let Some(s) = studies.get_mut(&id) {
            s.maximize.push(match d.as_str() {
                "MAXIMIZE" => true,
                "MINIMIZE" => false,
                other => {
                    bail!("{p}: study {id}: direction '{other}' is neither MAXIMIZE nor MINIMIZE")
                }
            });
        }
    }
    for (id, k, v) in attr_rows(
        db,
        "SELECT study_id, key, value_json FROM study_system_attributes",
        q,
    )? {
        if k == METRIC_NAMES
            && let Some(s) = studies.get_mut(&id)
        {
            let v: Value = serde_json::from_str(&v)
                .with_context(|| format!("{p}: study {id}: system attribute '{k}' is not JSON"))?;
            s.metric_names = metric_names(&v);
        }
    }
    for (id, k, v) in attr_rows(
        db,
        "SELECT study_id, key, value_json FROM study_user_attributes",
        q,
    )? {
        if let Some(s) = studies.get_mut(&id) {
            let v = serde_json::from_str(&v)
                .with_context(|| format!("{p}: study {id}: user attribute '{k}' is not JSON"))?;
            s.user_attrs.insert(k, v);
        }
    }
    Ok(studies)
}

/// The trials, each added to its study (values and the rest come after); per trial id its
/// (study id, index in the study's trials).
fn sql_trials(
    db: &rusqlite::Connection,
    p: &str,
    q: SqlError,
    studies: &mut BTreeMap<i64, Study>,
) -> Result<BTreeMap<i64, (i64, usize)>> {
    let mut index: BTreeMap<i64, (i64, usize)> = BTreeMap::new();
    let mut st = db
        .prepare("SELECT trial_id, number, study_id, state, datetime_start, datetime_complete FROM trials ORDER BY trial_id")
        .map_err(q)?;
    for row in st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })
        .map_err(q)?
    {
        let (tid, number, sid, state, start, complete) = row.map_err(q)?;
        let Some(s) = studies.get_mut(&sid) else {
            continue;
        };
        let state = State::from_name(&state)
            .with_context(|| format!("{p}: trial {tid}: state '{state}' is not one of Optuna's"))?;
        let date = |text: Option<&str>, column: &str| -> Result<Option<f64>> {
            match text {
                None => Ok(None),
                Some(t) => seconds(t).map(Some).with_context(|| {
                    format!(
                        "{p}: trial {tid}: column '{column}' is '{t}', not a date and time (YYYY-MM-DD HH:MM:SS[.ffffff])"
                    )
                }),
            }
        };
        s.trials.push(Trial {
            number: u32::try_from(number).map_err(|_| {
                anyhow::anyhow!(
                    "{p}: trial {tid}: its number is {number}; Optuna numbers a study's trials 0, 1, 2, ... (a storage with other numbers was not written by Optuna: fix the 'number' column of table 'trials')"
                )
            })?,
            state,
            values: None,
            start: date(start.as_deref(), "datetime_start")?,
            complete: date(complete.as_deref(), "datetime_complete")?,
            intermediate: BTreeMap::new(),
            user_attrs: Default::default(),
        });
        index.insert(tid, (sid, s.trials.len() - 1));
    }
    Ok(index)
}

type SqlError<'a> = &'a dyn Fn(rusqlite::Error) -> anyhow::Error;

/// Rows (id, number, value) of an Optuna table of floats with a type column (`FINITE`,
/// `INF_POS`, `INF_NEG`): trial values and intermediate values.
fn float_rows(db: &rusqlite::Connection, sql: &str, q: SqlError) -> Result<Vec<(i64, i64, f64)>> {
    let mut st = db.prepare(sql).map_err(q)?;
    let rows = st
        .query_map([], |r| {
            let v: Option<f64> = r.get(2)?;
            let kind: String = r.get(3)?;
            let v = match kind.as_str() {
                "INF_POS" => f64::INFINITY,
                "INF_NEG" => f64::NEG_INFINITY,
                _ => v.unwrap_or(f64::NAN),
            };
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, v))
        })
        .map_err(q)?;
    rows.map(|r| r.map_err(q)).collect()
}

/// Rows (id, key, JSON text) of an Optuna table of user attributes.
fn attr_rows(
    db: &rusqlite::Connection,
    sql: &str,
    q: SqlError,
) -> Result<Vec<(i64, String, String)>> {
    let mut st = db.prepare(sql).map_err(q)?;
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(q)?;
    rows.map(|r| r.map_err(q)).collect()
}

/// What the clock of an imported study counts.
#[derive(Clone, Debug, PartialEq)]
pub enum Clock {
    /// Finished trials (1, 2, ...), in order of completion.
    Trials,
    /// Seconds since the study's first trial started (the real run's wall clock).
    Seconds,
    /// The running sum of a trial user attribute, e.g. a tabular benchmark's recorded cost
    /// (one sequential worker).
    Attr(String),
}

impl std::fmt::Display for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

impl std::str::FromStr for Clock {
    type Err = String;
    fn from_str(s: &str) -> Result<Clock, String> {
        match s {
            "trials" => Ok(Clock::Trials),
            "seconds" => Ok(Clock::Seconds),
            _ => match s.strip_prefix("attr:") {
                Some(a) if !a.is_empty() => Ok(Clock::Attr(a.to_string())),
                _ => Err(format!(
                    "'{s}': use trials, seconds, or attr:NAME (the running sum of a trial user attribute)"
                )),
            },
        }
    }
}

impl Clock {
    pub fn unit(&self) -> &'static str {
        match self {
            Clock::Trials => "trials",
            _ => "seconds",
        }
    }

    fn text(&self) -> String {
        match self {
            Clock::Trials => "trials".into(),
            Clock::Seconds => "seconds".into(),
            Clock::Attr(a) => format!("attr:{a}"),
        }
    }
}

/// `import optuna`'s own options (the shared ones are [`super::Common`]); every default is
/// written here once.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Request {
    /// How study names hold the policy, task and seed: placeholders {policy}, {task},
    /// {dataset}, {seed}; studies that do not follow it are skipped (and listed).
    pub names: String,
    /// The study user attribute naming the task, when `names` has no {task} or {dataset}.
    pub task_attr: String,
    /// What the clock counts: trials, seconds, or attr:NAME.
    #[serde(deserialize_with = "crate::options::parsed")]
    pub clock: Clock,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            names: "{policy}-{seed}".into(),
            task_attr: "task".into(),
            clock: Clock::Trials,
        }
    }
}

impl super::Importer for Request {
    const TOOL: &'static str = "optuna";

    fn read(
        &self,
        paths: &[PathBuf],
        common: &super::Common,
    ) -> Result<(super::Import, Vec<String>)> {
        let opts = Options {
            names: NameRule::parse(&self.names)?,
            task: common.task.clone(),
            task_attr: self.task_attr.clone(),
            clock: self.clock.clone(),
            prefix: common.prefix_or(Self::TOOL),
        };
        let read = read(paths, &opts)?;
        let notes = super::skipped_note("studies", &self.names, &read.skipped);
        let imp = super::Import {
            tool: Self::TOOL,
            runs: read.runs,
            maximize: read.maximize,
            metric: if read.objectives.is_empty() {
                "the study's objective".into()
            } else {
                format!(
                    "the study's objectives {}",
                    read.objectives
                        .iter()
                        .enumerate()
                        .map(|(i, o)| format!(
                            "{} ({})",
                            o.name.clone().unwrap_or_else(|| format!("value {i}")),
                            if o.maximize { "maximize" } else { "minimize" }
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            budget_unit: self.clock.unit().into(),
            files: paths.to_vec(),
            how: read.how,
            objectives: read.objectives,
            intermediate: false,
        };
        Ok((imp, notes))
    }
}

/// How to name Optuna studies (`import optuna` options).
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// The naming rule of the studies to import (others are skipped).
    pub names: NameRule,
    /// The task of every study, if the rule has no {task} or {dataset}: else the study user
    /// attribute `task_attr`.
    pub task: Option<String>,
    pub task_attr: String,
    pub clock: Clock,
    pub prefix: String,
}

/// What reading Optuna storages found.
pub(crate) struct Read {
    pub runs: Vec<ImportedRun>,
    pub maximize: bool,
    /// Studies of several objectives: each objective (empty with one).
    pub objectives: Vec<super::objectives::Objective>,
    /// Studies whose names the rule did not match.
    pub skipped: Vec<String>,
    pub how: String,
}

/// Read Optuna storages (`.db`/`.sqlite`/`.sqlite3` files as SQLite, anything else as a
/// journal) into runs, one per study that follows the naming rule.
pub(crate) fn read(paths: &[PathBuf], opts: &Options) -> Result<Read> {
    let mut runs = Vec::new();
    let mut skipped = Vec::new();
    // The first study's directions and objective names, and where it was read.
    let mut direction: Option<(Vec<bool>, Option<Vec<String>>, String)> = None;
    for path in paths {
        let sqlite = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("db" | "sqlite" | "sqlite3")
        );
        crate::files::check(path, "Optuna JournalStorage files or SQLite storages")?;
        let studies = if sqlite {
            read_sqlite(path)?
        } else {
            read_journal(path)?
        };
        for s in studies {
            let src = format!("{}#{}", path.display(), s.name);
            let Some(parts) = opts.names.apply(&s.name) else {
                skipped.push(src);
                continue;
            };
            if s.maximize.is_empty() {
                bail!("{src}: the study has no direction; is this storage written by Optuna?");
            }
            let names = s
                .metric_names
                .clone()
                .filter(|n| n.len() == s.maximize.len());
            match &direction {
                None => direction = Some((s.maximize.clone(), names, src.clone())),
                Some((m, first_names, first)) => {
                    let show = |m: &[bool]| {
                        m.iter()
                            .map(|&x| if x { "maximize" } else { "minimize" })
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    if *m != s.maximize {
                        bail!(
                            "{src} has directions [{}] but {first} has [{}]: import studies of the same objectives and directions together",
                            show(&s.maximize),
                            show(m)
                        );
                    }
                    if let (Some(a), Some(b)) = (first_names, &names)
                        && a != b
                    {
                        bail!(
                            "{src} names its objectives [{}] but {first} names them [{}]: import studies of the same objectives together",
                            b.join(", "),
                            a.join(", ")
                        );
                    }
                }
            }
            runs.push(study_run(&s, &parts, &src, opts)?);
        }
    }
    let Some((maximize, names, _)) = direction else {
        bail!(
            "no study follows the naming rule '{}'{}; give the rule with --names (placeholders {{policy}}, {{task}}, {{dataset}}, {{seed}})",
            opts.names.text(),
            if skipped.is_empty() {
                String::new()
            } else {
                format!(
                    " (studies found: {})",
                    skipped
                        .iter()
                        .take(8)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
    };
    let objectives = if maximize.len() < 2 {
        Vec::new()
    } else {
        maximize
            .iter()
            .enumerate()
            .map(|(i, &m)| super::objectives::Objective {
                name: names.as_ref().map(|n| n[i].clone()),
                maximize: m,
            })
            .collect()
    };
    Ok(Read {
        runs,
        maximize: maximize[0],
        objectives,
        skipped,
        how: format!(
            "studies named '{}', clock {}",
            opts.names.text(),
            opts.clock.text()
        ),
    })
}

fn study_run(
    s: &Study,
    parts: &BTreeMap<String, String>,
    src: &str,
    opts: &Options,
) -> Result<ImportedRun> {
    let task = match (parts.get("task"), parts.get("dataset"), &opts.task) {
        (Some(t), _, _) => Task::parse(t, src)?,
        (None, Some(d), _) => Task::parse(d, src)?,
        (None, None, Some(t)) => Task::parse(t, "--task")?,
        (None, None, None) => match s.user_attrs.get(&opts.task_attr) {
            Some(Value::String(t)) => {
                Task::parse(t, &format!("{src}, user attribute '{}'", opts.task_attr))?
            }
            _ => bail!(
                "{src}: no task: the naming rule has no {{task}} or {{dataset}}, and the study has no user attribute '{}'; give --task, --task-attr or a rule with {{task}}",
                opts.task_attr
            ),
        },
    };
    let seed = match parts.get("seed") {
        Some(x) => parse_seed(x, src)?,
        None => 0,
    };
    // Finished trials in order of completion (ties: trial number); running and waiting ones
    // are pending and left out.
    let mut done: Vec<&Trial> = s.trials.iter().filter(|t| t.state.finished()).collect();
    done.sort_by(|a, b| {
        let ka = a.complete.unwrap_or(f64::INFINITY);
        let kb = b.complete.unwrap_or(f64::INFINITY);
        ka.total_cmp(&kb).then(a.number.cmp(&b.number))
    });
    let pending = (s.trials.len() - done.len()) as u64;
    let t0 = s
        .trials
        .iter()
        .filter_map(|t| t.start)
        .fold(f64::INFINITY, f64::min);
    let mut clock = 0.0;
    let mut evals = Vec::with_capacity(done.len());
    for (i, t) in done.iter().enumerate() {
        let at = format!("{src}, trial {}", t.number);
        let time = match &opts.clock {
            Clock::Trials => (i + 1) as f64,
            Clock::Seconds => {
                let c = t
                    .complete
                    .with_context(|| format!("{at}: no completion time; use --clock trials"))?;
                c - t0
            }
            Clock::Attr(a) => {
                let v = t.user_attrs.get(a).and_then(number).with_context(|| {
                    format!("{at}: no numeric user attribute '{a}' for --clock attr:{a}; every finished trial needs one")
                })?;
                if !(v.is_finite() && v >= 0.0) {
                    bail!(
                        "{at}: user attribute '{a}' is {v}; a cost must be a non-negative number"
                    );
                }
                clock += v;
                clock
            }
        };
        let (value, fidelity, action) = match t.state {
            State::Complete => (
                t.values
                    .as_ref()
                    .and_then(|v| v.first().copied())
                    .unwrap_or(f64::NAN),
                None,
                "complete",
            ),
            // Optuna's best value ignores pruned trials: the decision is kept, with the step it
            // was pruned at, and no value.
            State::Pruned => (
                f64::NAN,
                t.intermediate
                    .keys()
                    .next_back()
                    .and_then(|&s| u32::try_from(s).ok()),
                "pruned",
            ),
            _ => (f64::NAN, None, "failed"),
        };
        // Several objectives: every value of a completed trial (NaN where none).
        let values = match (s.maximize.len(), t.state, &t.values) {
            (1, _, _) => Vec::new(),
            (d, State::Complete, Some(v)) => (0..d)
                .map(|k| v.get(k).copied().unwrap_or(f64::NAN))
                .collect(),
            (d, _, _) => vec![f64::NAN; d],
        };
        evals.push(Eval {
            time,
            value,
            trial: t.number,
            fidelity,
            action,
            values,
        });
    }
    Ok(ImportedRun {
        source: src.to_string(),
        policy: format!("{}{}", opts.prefix, parts["policy"]),
        task,
        seed,
        evals,
        pending,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_that_do_not_exist_are_not_read() {
        for bad in [
            "2026-13-01T00:00:00",
            "2026-02-29T00:00:00",
            "2026-04-31T00:00:00",
            "2026-01-01T99:00:00",
            "2026-01-01T00:60:00",
            "2026-01-01T00:00:NaN",
            "2026-01-01T00:00:inf",
            "2026-01-01T00:00:-5",
            "2026-01-01T00:00:00+15:00",
            "2026-01-01T-1:00:00",
        ] {
            assert_eq!(seconds(bad), None, "{bad}");
        }
        assert!(seconds("2024-02-29T23:59:60.5").is_some());
    }

    #[test]
    fn pythons_non_finite_floats_in_a_journal_line_are_read() {
        let line = r#"{"values":[Infinity],"x":"NaN in a string","v":-Infinity,"w":NaN,"n":-1.5}"#;
        let v: Value = serde_json::from_str(&python_json(line)).unwrap();
        assert_eq!(number(&v["values"][0]), Some(f64::INFINITY));
        assert_eq!(number(&v["v"]), Some(f64::NEG_INFINITY));
        assert!(number(&v["w"]).unwrap().is_nan());
        assert_eq!(v["x"], "NaN in a string");
        assert_eq!(number(&v["n"]), Some(-1.5));
        assert!(matches!(
            python_json("{\"a\":1}"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn optuna_datetimes_read_as_seconds_since_1970() {
        assert_eq!(seconds("1970-01-01T00:00:00+00:00"), Some(0.0));
        assert_eq!(seconds("1970-01-02 00:00:01.5"), Some(86_401.5));
        // 2000-03-01 is day 11 017 (leap year 2000).
        assert_eq!(seconds("2000-03-01T00:00:00Z"), Some(11_017.0 * 86_400.0));
        // An offset is subtracted: 01:00 at +01:00 is midnight UTC.
        assert_eq!(seconds("1970-01-01T01:00:00+01:00"), Some(0.0));
        assert_eq!(seconds("not a date"), None);
    }
}
