//! Names that become parts of paths: experiment names (results folders), policy families
//! (figure files), budgets (report sub-folders). One place checks the names a user gives and one
//! function turns any name read back from a results file into a safe file-name part, so that no
//! name can write outside the folder it is meant for.

use anyhow::{Result, bail};

/// The characters a user-given name may hold: letters, digits, '-', '_', '.' and '+', not
/// beginning with '.' (so never "." or "..", never hidden, never a path separator).
pub fn check(what: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'));
    if !ok {
        bail!(
            "{what} '{}' cannot be used: it names files and folders, so use letters, digits, '-', '_', '.' and '+' only, not beginning with '.'",
            name.escape_debug()
        );
    }
    Ok(())
}

/// `name` as one safe file-name part: every character outside letters, digits, '-', '_', '.' and
/// '+' becomes '_', a leading '.' becomes '_', and an empty name becomes "_". A name that passes
/// [`check`] is returned unchanged.
pub fn file_part(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with('.') {
        s.replace_range(0..1, "_");
    }
    if s.is_empty() {
        s.push('_');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_leave_their_folder_are_refused_or_rewritten() {
        for bad in [
            "a/b",
            "../../../x",
            "..",
            ".",
            ".hidden",
            "a\\b",
            "",
            "a b",
            "x\0y",
        ] {
            let e = check("policy name", bad).unwrap_err().to_string();
            assert!(
                e.contains("policy name") && e.contains("letters, digits"),
                "{e}"
            );
            let f = file_part(bad);
            assert!(
                !f.contains('/') && !f.contains('\\') && !f.starts_with('.') && !f.is_empty(),
                "{bad:?} -> {f:?}"
            );
            assert!(check("x", &f).is_ok(), "{bad:?} -> {f:?}");
        }
        assert_eq!(file_part("../../../x"), "_._.._.._x");
        assert_eq!(file_part("a/b"), "a_b");
        for good in ["my-ucb", "ucb1_v2", "policy.v3", "c+d", "hamlet-lcdb"] {
            assert!(check("name", good).is_ok());
            assert_eq!(file_part(good), good);
        }
    }
}
