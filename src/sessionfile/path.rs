//! The path from a root to a leaf (A.6): start at the leaf, follow
//! `parentId` through the id index while it is truthy and known, reverse.
//! pi keeps no visited set and loops forever on a parent cycle; here a cycle
//! is an error naming the line whose `parentId` closes it.
//!
//! pi has two readers of the path, and they differ only when the leaf's id
//! is falsy: `buildSessionContext` then starts from the last entry, while
//! `getBranch()` (what pi-condense rebuilds from) is empty.

use super::error::{Result, SessionError};
use super::file::{describe_key, SessionFile};
use super::key::JsKey;
use crate::error::Code;

/// Which leaf to read the session at.
#[derive(Clone, Debug)]
pub enum Leaf<'k> {
    /// The active leaf pi sets on load: the last entry's id.
    Active,
    /// An entry id, as `SessionManager.branch(id)` takes it: it must exist.
    Id(JsKey<'k>),
}

/// The entries from a root to the leaf, as entry indices, root first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionPath {
    /// What `buildSessionContext` walks.
    pub entries: Vec<u32>,
    /// Whether `getBranch()` is the same path (otherwise it is empty).
    pub branch_is_path: bool,
}

impl SessionPath {
    /// The path `getBranch()` returns.
    pub fn branch(&self) -> &[u32] {
        if self.branch_is_path {
            &self.entries
        } else {
            &[]
        }
    }
}

/// Resolves the leaf and walks its path.
pub fn path_to(file: &SessionFile<'_>, leaf: &Leaf<'_>) -> Result<SessionPath> {
    let leaf_id = match leaf {
        Leaf::Active => file.active_leaf_id(),
        Leaf::Id(id) => {
            if file.by_id(id).is_none() {
                return Err(SessionError::new(
                    Code::InvalidArgument,
                    format!("leaf: no entry has the id {}", describe_key(id)),
                ));
            }
            id.clone()
        }
    };
    if leaf_id == JsKey::Null || file.is_empty() {
        return Ok(SessionPath::default());
    }
    let truthy = leaf_id.truthy();
    let start = if truthy { file.by_id(&leaf_id) } else { None }.unwrap_or(file.len() - 1);
    Ok(SessionPath {
        entries: walk(file, start)?,
        branch_is_path: truthy,
    })
}

/// Root-first path ending at entry `start`.
pub fn walk(file: &SessionFile<'_>, start: usize) -> Result<Vec<u32>> {
    let mut seen = vec![false; file.len()];
    let mut path = Vec::new();
    let mut current = start;
    loop {
        seen[current] = true;
        path.push(current as u32);
        let entry = file.entry(current);
        let parent = entry.parent_id();
        if !parent.truthy() {
            break;
        }
        match file.by_id(&parent) {
            None => break,
            Some(next) if seen[next] => {
                return Err(SessionError::at(
                    entry.line,
                    format!(
                        "parent cycle: parentId {} leads back to an entry already on the path (pi would loop forever)",
                        describe_key(&parent)
                    ),
                ));
            }
            Some(next) => current = next,
        }
    }
    path.reverse();
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(lines: &[&str]) -> SessionFile<'static> {
        let mut text = String::from("{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\n");
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        SessionFile::parse(text.into_bytes()).unwrap()
    }

    #[test]
    fn walks_parents_and_stops_at_unknown_ones() {
        let f = file(&[
            r#"{"id":"a","parentId":null}"#,
            r#"{"id":"b","parentId":"a"}"#,
            r#"{"id":"c","parentId":"gone"}"#,
            r#"{"id":"d","parentId":"b"}"#,
        ]);
        let p = path_to(&f, &Leaf::Active).unwrap();
        assert_eq!(p.entries, [0, 1, 3]);
        assert!(p.branch_is_path);
        assert_eq!(
            path_to(&f, &Leaf::Id(JsKey::str("c"))).unwrap().entries,
            [2]
        );
        assert_eq!(
            path_to(&f, &Leaf::Id(JsKey::str("zz"))).unwrap_err().kind,
            Code::InvalidArgument
        );
    }

    #[test]
    fn falsy_leaf_ids() {
        // No id on the last line: the context starts there, the branch is empty.
        let f = file(&[r#"{"id":"a","parentId":null}"#, r#"{"parentId":"a"}"#]);
        let p = path_to(&f, &Leaf::Active).unwrap();
        assert_eq!(
            (p.entries.as_slice(), p.branch()),
            (&[0u32, 1][..], &[][..])
        );
        // A null id: the context is empty too.
        let f = file(&[
            r#"{"id":"a","parentId":null}"#,
            r#"{"id":null,"parentId":"a"}"#,
        ]);
        assert_eq!(path_to(&f, &Leaf::Active).unwrap(), SessionPath::default());
    }

    #[test]
    fn cycles_are_errors() {
        let f = file(&[r#"{"id":"a","parentId":"a"}"#]);
        let e = path_to(&f, &Leaf::Active).unwrap_err();
        assert_eq!(
            (e.line, e.code().as_str()),
            (Some(2), "ERR_CONDENSE_INVALID_SESSION")
        );
        let f = file(&[
            r#"{"id":"a","parentId":"c"}"#,
            r#"{"id":"b","parentId":"a"}"#,
            r#"{"id":"c","parentId":"b"}"#,
        ]);
        assert_eq!(path_to(&f, &Leaf::Active).unwrap_err().line, Some(2));
    }
}
