//! Options given by name, as Python's keywords give them (a JSON object): the library's option
//! types read with the same parsers the command line uses, and an error that names the key.

use serde::Deserialize;

#[cfg(any(feature = "python", test))]
/// The keywords given by name, as Python sends them: a JSON object, its `null`s left out
/// (Python's `None` is "not given", as an absent flag). `what` starts the error.
pub(crate) fn keywords(
    what: &str,
    json: &str,
) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    match serde_json::from_str(json) {
        Ok(serde_json::Value::Object(m)) => {
            Ok(m.into_iter().filter(|(_, v)| !v.is_null()).collect())
        }
        Ok(_) => anyhow::bail!("{what}: the options are not a JSON object"),
        Err(e) => anyhow::bail!("{what}: the options are not JSON ({e})"),
    }
}

#[cfg(any(feature = "python", test))]
/// `T` from a JSON value; `what` starts the error (`report`, `import optuna`), which names the
/// key at fault and what is wrong with it.
pub(crate) fn from_value<T: serde::de::DeserializeOwned>(
    what: &str,
    value: serde_json::Value,
) -> anyhow::Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            anyhow::anyhow!("{what}: {}", e.inner())
        } else {
            anyhow::anyhow!("{what}: {path}: {}", e.inner())
        }
    })
}

/// Deserialize a value that the command line parses from text (a clock such as
/// `attr:cost_s`, `against:ucb1`) with the same parser, so both say the same of a bad value.
pub(crate) fn parsed<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr<Err = String>,
{
    let s = String::deserialize(d)?;
    s.parse().map_err(serde::de::Error::custom)
}

/// Deserialize one of a fixed set of names, spelled as the command line spells them
/// (`per-dataset`, `t95`); the error lists them.
pub(crate) fn value_enum<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: clap::ValueEnum,
{
    let s = String::deserialize(d)?;
    T::from_str(&s, false).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|p| p.get_name().to_string())
            .collect();
        serde::de::Error::custom(format!("'{s}' is not one of {}", names.join(", ")))
    })
}

#[cfg(any(feature = "python", test))]
/// The keys a struct read by name takes (its serde field names), from the struct's own
/// `Deserialize`: a deserializer that records the fields it is asked for, then stops.
pub(crate) fn keys<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    struct Fields(std::cell::Cell<&'static [&'static str]>);
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("stop")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    impl<'de> serde::Deserializer<'de> for &Fields {
        type Error = Stop;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0.set(fields);
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let f = Fields(std::cell::Cell::new(&[]));
    let _ = T::deserialize(&f);
    f.0.get()
}

#[cfg(any(feature = "python", test))]
/// A message worded for the command line (`--pairs`, `--out DIR`) reworded for keywords
/// (`pairs=`, `out=DIR`): every `--flag` that is one of `keys` (with `_` for `-`) becomes
/// `key=`; any other text is kept.
pub(crate) fn as_keywords(message: &str, keys: &[&str]) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(after.len());
        let key = after[..len].replace('-', "_");
        if len > 0 && keys.contains(&key.as_str()) {
            out.push_str(&key);
            out.push('=');
            // `--pairs 'x'`, `--out DIR`: the value follows the `=`.
            rest = after[len..].strip_prefix(' ').unwrap_or(&after[len..]);
        } else {
            out.push_str("--");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Two {
        alpha: f64,
        unit_col: String,
    }

    #[test]
    fn keys_are_the_fields_and_flags_become_keywords() {
        assert_eq!(keys::<Two>(), ["alpha", "unit_col"]);
        let k = keys::<Two>();
        assert_eq!(
            as_keywords(
                "--unit-col 'x': no such column; see --alpha, not --fresh",
                k
            ),
            "unit_col='x': no such column; see alpha=, not --fresh"
        );
        assert_eq!(as_keywords("a -- b --", k), "a -- b --");
    }
}
