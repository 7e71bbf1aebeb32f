//! A session file as pi 1.6.0 holds it in memory after opening it: the kept
//! values (A.2), the header check, the in-memory migration of version 1 and
//! 2 files (A.3), the entries (every value whose `type` is not `"session"`),
//! the id index where a later duplicate owns the id, and the active leaf
//! (A.6). The file's text is borrowed or owned; entries are read in place.

use std::borrow::Cow;

use super::error::{Result, SessionError};
use super::key::JsKey;
use super::lines::{read_lines, EntryKind, Head, Line, ABSENT};
use crate::error::Code;
use crate::hash::HashMap;
use crate::json::string_to_number;
use crate::json::tape::Kind;
use crate::json::text::to_string_lossy;
use crate::json::view::Value;

/// What pi's migration changed on one value (A.3), applied when it is read.
#[derive(Clone, Debug, Default)]
struct Migrated {
    /// v1: the minted id and the previous entry's id.
    id: Option<JsKey<'static>>,
    parent: Option<JsKey<'static>>,
    /// v1 compactions: `firstKeptEntryId` set from `firstKeptEntryIndex`.
    first_kept: Option<JsKey<'static>>,
    /// v2: a `hookMessage` role read as `custom`.
    role_custom: bool,
}

/// A loaded session file.
pub struct SessionFile<'a> {
    input: Cow<'a, [u8]>,
    lines: Vec<Line>,
    /// Indices into `lines` of the entries (non-header values), file order.
    entries: Vec<u32>,
    migrated: Vec<Migrated>,
    by_id: HashMap<JsKey<'static>, u32>,
}

/// One entry (an index into [`SessionFile::entries`]) with its value.
#[derive(Clone, Copy)]
pub struct Entry<'s> {
    pub index: u32,
    /// 1-based line of the file.
    pub line: u32,
    value: Value<'s>,
    head: Head,
    migrated: Option<&'s Migrated>,
}

impl<'s> Entry<'s> {
    pub fn get(&self, key: &str) -> Option<Value<'s>> {
        self.value.get(key)
    }

    fn member(&self, at: u32) -> Option<Value<'s>> {
        (at != ABSENT).then(|| self.value.node_value(at))
    }

    /// `entry.type === t`.
    pub fn is(&self, t: &str) -> bool {
        match EntryKind::of_name(t) {
            Some(k) => self.head.kind == k,
            None => self.value.get("type").is_some_and(|v| v.is_str(t)),
        }
    }

    /// `entry.customType === t`.
    pub fn custom_type_is(&self, t: &str) -> bool {
        self.member(self.head.custom_type)
            .is_some_and(|v| v.is_str(t))
    }

    /// `entry.timestamp`.
    pub fn timestamp(&self) -> Option<Value<'s>> {
        self.member(self.head.timestamp)
    }

    /// `entry.data`.
    pub fn data(&self) -> Option<Value<'s>> {
        self.member(self.head.data)
    }

    /// What the migration set for a key (`field`), else the stored value.
    fn key(
        &self,
        field: fn(&Migrated) -> &Option<JsKey<'static>>,
        v: Option<Value<'s>>,
    ) -> JsKey<'s> {
        let migrated = self.migrated.and_then(|m| field(m).as_ref());
        migrated.map_or_else(|| JsKey::of(v), Clone::clone)
    }

    pub fn id(&self) -> JsKey<'s> {
        self.key(|m| &m.id, self.member(self.head.id))
    }

    pub fn parent_id(&self) -> JsKey<'s> {
        self.key(|m| &m.parent, self.member(self.head.parent_id))
    }

    /// A compaction's `firstKeptEntryId`.
    pub fn first_kept_entry_id(&self) -> JsKey<'s> {
        self.key(|m| &m.first_kept, self.value.get("firstKeptEntryId"))
    }

    /// A message entry's `message`.
    pub fn message(&self) -> Option<Value<'s>> {
        self.member(self.head.message)
    }

    /// Whether a v2 migration renamed this message's `hookMessage` role.
    pub fn role_renamed(&self) -> bool {
        self.migrated.is_some_and(|m| m.role_custom)
    }

    /// `entry.message.role === role` for a message entry, after migration.
    pub fn message_role_is(&self, role: &str) -> bool {
        if self.role_renamed() {
            return role == "custom";
        }
        self.message()
            .and_then(|m| m.get("role"))
            .is_some_and(|r| r.is_str(role))
    }
}

/// A key as a short readable text for error messages.
pub fn describe_key(k: &JsKey<'_>) -> String {
    match k {
        JsKey::Undefined => "undefined".into(),
        JsKey::Null => "null".into(),
        JsKey::Bool(b) => b.to_string(),
        JsKey::Number(n) => crate::json::format_number(f64::from_bits(*n)),
        JsKey::String(s) => format!("{:?}", to_string_lossy(s)),
        JsKey::Object(_) => "an object".into(),
        JsKey::Minted(m) => format!("(id minted for value {m})"),
    }
}

/// JS `ToNumber` of a header's `version` (`?? 1` already applied).
fn version_number(v: Value<'_>) -> f64 {
    match v.kind() {
        Kind::Number => v.number().unwrap_or(f64::NAN),
        Kind::True => 1.0,
        Kind::False | Kind::Null => 0.0,
        Kind::Object => f64::NAN,
        Kind::String | Kind::Array => string_to_number(&to_string_lossy(&v.to_js_string())),
    }
}

impl<'a> SessionFile<'a> {
    /// Reads a file's bytes as pi opens them. A zero-byte file is an empty
    /// session (pi writes a header into it); a non-empty file whose first
    /// kept value is not a header is an error naming that line.
    pub fn parse(input: impl Into<Cow<'a, [u8]>>) -> Result<Self> {
        let input = input.into();
        let lines = read_lines(&input)?;
        let mut file = SessionFile {
            input,
            lines,
            entries: Vec::new(),
            migrated: Vec::new(),
            by_id: HashMap::default(),
        };
        if file.lines.is_empty() {
            if file.input.is_empty() {
                return Ok(file);
            }
            return Err(SessionError::new(
                Code::InvalidSession,
                "not a pi session: no line holds a JSON value",
            ));
        }
        let header = file.lines[0].root(&file.input);
        let is_header = header.is_object()
            && header.get("type").is_some_and(|t| t.is_str("session"))
            && header.get("id").is_some_and(|id| id.kind() == Kind::String);
        if !is_header {
            return Err(SessionError::at(
                file.lines[0].number,
                "not a pi session: the first entry is not a header {type:\"session\", id:<string>}",
            ));
        }
        file.migrate()?;
        file.entries = (0..file.lines.len() as u32)
            .filter(|&i| file.lines[i as usize].head.kind != EntryKind::Session)
            .collect();
        file.by_id = (0..file.entries.len())
            .map(|i| (file.entry(i).id().into_owned(), i as u32))
            .collect();
        Ok(file)
    }

    /// A.3: version below 2 mints ids and parent links, below 3 renames
    /// `hookMessage` roles. The version is compared as JS compares it.
    fn migrate(&mut self) -> Result<()> {
        let header = self.lines[0].root(&self.input);
        let version = header
            .get("version")
            .filter(|v| !v.is_null())
            .map_or(1.0, version_number);
        if version >= 3.0 || version.is_nan() {
            return Ok(());
        }
        let mut migrated = vec![Migrated::default(); self.lines.len()];
        if version < 2.0 {
            let mut previous = JsKey::Null;
            for (i, line) in self.lines.iter().enumerate() {
                let v = line.root(&self.input);
                if v.get("type").is_some_and(|t| t.is_str("session")) {
                    continue;
                }
                if !matches!(v.kind(), Kind::Object | Kind::Array) {
                    // pi assigns `entry.id` in strict mode: a TypeError.
                    return Err(SessionError::at(
                        line.number,
                        "pi cannot migrate this version-1 file: the line holds a JSON value that is not an object, so pi's migration throws a TypeError",
                    ));
                }
                let id = JsKey::Minted(i as u32);
                migrated[i].id = Some(id.clone());
                migrated[i].parent = Some(previous);
                previous = id;
                if v.get("type").is_some_and(|t| t.is_str("compaction")) {
                    if let Some(index) = v.get("firstKeptEntryIndex").and_then(|x| x.number()) {
                        let target = (index >= 0.0
                            && index.fract() == 0.0
                            && index < self.lines.len() as f64)
                            .then_some(index as usize);
                        if let Some(t) = target {
                            let tv = self.lines[t].root(&self.input);
                            if !tv.get("type").is_some_and(|x| x.is_str("session")) {
                                let id = if t <= i {
                                    JsKey::Minted(t as u32)
                                } else {
                                    JsKey::of(tv.get("id")).into_owned()
                                };
                                migrated[i].first_kept = Some(id);
                            }
                        }
                    }
                }
            }
        }
        for (i, line) in self.lines.iter().enumerate() {
            let v = line.root(&self.input);
            if v.get("type").is_some_and(|t| t.is_str("message")) {
                let m = v.get("message");
                if m.is_some_and(|m| {
                    m.truthy() && m.get("role").is_some_and(|r| r.is_str("hookMessage"))
                }) {
                    migrated[i].role_custom = true;
                }
            }
        }
        self.migrated = migrated;
        Ok(())
    }

    /// Number of entries (header and later `session` values excluded).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entry(&self, index: usize) -> Entry<'_> {
        let li = self.entries[index] as usize;
        let line = &self.lines[li];
        Entry {
            index: index as u32,
            line: line.number,
            value: line.root(&self.input),
            head: line.head,
            migrated: self.migrated.get(li),
        }
    }

    /// The lines pi skips without a word, as (count, the first `first` line
    /// numbers, 1-based): a non-blank line that holds no JSON value or a
    /// falsy one (a truncated last line, garbage), and an entry whose `type`
    /// is none pi 1.6.0 writes (SESSIONS.md A.5). Blank lines are not
    /// counted.
    pub fn skipped_lines(&self, first: usize) -> (usize, Vec<u32>) {
        const KNOWN: [&[u8]; 12] = [
            b"session",
            b"message",
            b"custom_message",
            b"branch_summary",
            b"compaction",
            b"context_edit",
            b"custom",
            b"model_change",
            b"thinking_level_change",
            b"usage",
            b"label",
            b"session_info",
        ];
        let mut count = 0usize;
        let mut numbers = Vec::new();
        let mut skip = |n: u32| {
            count += 1;
            if numbers.len() < first {
                numbers.push(n);
            }
        };
        let mut kept = self.lines.iter().peekable();
        let mut start = 0usize;
        let input = &self.input[..];
        let mut number = 0u32;
        while start <= input.len() {
            let end = memchr::memchr(b'\n', &input[start..]).map_or(input.len(), |i| start + i);
            number += 1;
            match kept.peek() {
                Some(line) if line.number == number => {
                    let unknown = line.head.kind == EntryKind::Other
                        && number != self.lines[0].number
                        && !line
                            .root(input)
                            .get("type")
                            .and_then(|t| t.string().filter(|_| t.kind() == Kind::String))
                            .is_some_and(|t| KNOWN.contains(&&*t));
                    if unknown {
                        skip(number);
                    }
                    kept.next();
                }
                _ => {
                    let blank = input[start..end]
                        .iter()
                        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c));
                    if !blank {
                        skip(number);
                    }
                }
            }
            start = end + 1;
        }
        (count, numbers)
    }

    /// `byId.get(id)`: the last entry holding that id.
    pub fn by_id(&self, id: &JsKey<'_>) -> Option<usize> {
        let map: &HashMap<JsKey<'_>, u32> = &self.by_id;
        map.get(id).map(|&i| i as usize)
    }

    /// The active leaf's id as pi sets it on load: the last entry's id, or
    /// `null` when there is no entry.
    pub fn active_leaf_id(&self) -> JsKey<'_> {
        match self.entries.len() {
            0 => JsKey::Null,
            n => self.entry(n - 1).id(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipped_lines_are_counted() {
        let text = b"{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\n\n{\"type\":\"message\",\"id\":\"a\"}\ngarbage\n  \r\n{\"type\":\"frobnicate\",\"id\":\"b\"}\nnull\n{\"type\":\"model_change\",\"id\":\"c\"}\n42\n{\"type\":\"usage\",\"id\":\"d\"}\n{\"type\":\"mess";
        let f = SessionFile::parse(&text[..]).unwrap();
        assert_eq!(f.skipped_lines(5), (5, vec![4, 6, 7, 9, 11]));
        assert_eq!(f.skipped_lines(2), (5, vec![4, 6]));
        let clean = b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"label\",\"id\":\"a\"}\n";
        assert_eq!(
            SessionFile::parse(&clean[..]).unwrap().skipped_lines(5),
            (0, vec![])
        );
    }

    #[test]
    fn header_check() {
        assert!(SessionFile::parse(&b""[..]).unwrap().is_empty());
        for bad in [
            &b"\n\n"[..],
            b"{\"type\":\"message\"}",
            b"42\n{\"type\":\"session\",\"id\":\"s\"}",
            b"{\"type\":\"session\",\"id\":5}",
        ] {
            let e = SessionFile::parse(bad).err().unwrap();
            assert_eq!(e.code().as_str(), "ERR_CONDENSE_INVALID_SESSION", "{bad:?}");
        }
        let e = SessionFile::parse(&b"garbage\n\n[1]\n"[..]).err().unwrap();
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn later_duplicates_own_the_id_and_session_values_are_not_entries() {
        let text = concat!(
            r#"{"type":"session","version":3,"id":"s"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"n":1}"#,
            "\n",
            r#"{"type":"session","id":"again"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"n":2}"#,
            "\n",
            r#"{"type":"label","parentId":"a"}"#,
        );
        let f = SessionFile::parse(text.as_bytes()).unwrap();
        assert_eq!(f.len(), 3);
        let a = f.by_id(&JsKey::str("a")).unwrap();
        assert_eq!(f.entry(a).get("n").unwrap().number(), Some(2.0));
        assert_eq!(f.active_leaf_id(), JsKey::Undefined);
        assert_eq!(f.by_id(&JsKey::Undefined), Some(2));
    }

    #[test]
    fn version_1_files_get_ids_and_parents() {
        let text = concat!(
            r#"{"type":"session","id":"s"}"#,
            "\n",
            r#"{"type":"message","message":{"role":"hookMessage"}}"#,
            "\n",
            r#"{"type":"compaction","firstKeptEntryIndex":1}"#,
            "\n",
            r#"{"type":"message","id":"x","parentId":"zzz","message":{"role":"user"}}"#,
        );
        let f = SessionFile::parse(text.as_bytes()).unwrap();
        let (a, c, m) = (f.entry(0), f.entry(1), f.entry(2));
        assert_eq!(a.parent_id(), JsKey::Null);
        assert_eq!(c.parent_id(), a.id());
        assert_eq!(m.parent_id(), c.id());
        assert_eq!(c.first_kept_entry_id(), a.id());
        assert!(a.message_role_is("custom"));
        assert_ne!(m.id(), JsKey::str("x"));
        let bad = "{\"type\":\"session\",\"id\":\"s\",\"version\":\"1\"}\n42\n";
        assert_eq!(
            SessionFile::parse(bad.as_bytes()).err().unwrap().line,
            Some(2)
        );
        // Version "abc" is NaN: no migration at all.
        let nan = "{\"type\":\"session\",\"id\":\"s\",\"version\":\"abc\"}\n42\n";
        assert_eq!(SessionFile::parse(nan.as_bytes()).unwrap().len(), 1);
    }
}
