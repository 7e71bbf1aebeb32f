//! Shared code of the fuzz targets: the invariants every `prune_bytes` answer
//! must satisfy (`check`), an independent strict JSON validator, the
//! generator of structurally valid pi sessions (`gen`), the rebuilding of a
//! kept engine's render into bytes (`replay`), the kept-against-stateless
//! driver (`engine_sync`), and for the JSON layer the old readers as an
//! oracle (`oracle_json`), a near-JSON generator (`near_json`) and the
//! differential checks (`json_diff`).

pub mod engine_sync;
pub mod gen;
pub mod json_diff;
pub mod near_json;
pub mod oracle_json;
pub mod replay;

use condense_native::Config;
use condense_native::Dialect;
use condense_native::PruneError;
use condense_native::State;
use condense_native::{prune_bytes, size_of, Pruned};

/// Both dialects, in the order the targets run them.
pub const DIALECTS: [Dialect; 2] = [Dialect::V2_4, Dialect::V2_9];

/// A realistic indexer state for the `prune_bytes` target, read by both
/// dialects: ids `call_0` .. `call_7` (the generator and the dictionary use
/// the same ones), 2.9.1 occurrence keys (`call_1@3`, `call_6@7`) beside
/// legacy bare ones, a spilled record, aliases, two chains (one with
/// protected ids and a `{bN}` reference) and per-batch bodies.
pub const FIXED_STATE: &str = r#"{
 "records": {
  "call_0": {"toolName": "read", "args": {"path": "src/a.ts"}},
  "call_1": {"toolName": "bash", "args": {"command": "ls -la"}, "spillPath": "/tmp/spill/1.txt", "spillBytes": 123456, "resultPreview": "total 8\ndrwxr-xr-x"},
  "call_2": {"toolName": "edit", "args": {"path": "docs/x.md"}},
  "call_3": {"toolName": "context_tree_query", "args": {"ref": "t1"}},
  "__proto__": {"toolName": "read", "args": {"path": "p.ts"}},
  "call_1@3": {"toolCallId": "call_1", "resultTimestamp": 3, "toolName": "bash", "args": {"command": "ls"}},
  "call_6@7": {"toolCallId": "call_6", "resultTimestamp": 7, "toolName": "read", "args": {"path": "docs/y.md"}}
 },
 "dedupAliases": {"call_4": "call_0", "call_5": ""},
 "shortRefs": {"call_0": "t1", "call_1": "t2", "call_4": "t1"},
 "refAliases": {"t2": "call_1", "t3": "call_2"},
 "chains": [
  {"blockId": "b1", "startUserTimestamp": 1, "droppedToolCallIds": ["call_2", "call_6"], "protectedToolCallIds": ["call_7"], "finalAssistantTimestamp": 4, "toolRefs": ["t1", "t3"], "compressedAt": 9, "rangeSummaryText": "Edited docs; see {b2} and {b1}."},
  {"blockId": "b2", "startUserTimestamp": 20, "droppedToolCallIds": ["call_5"], "finalAssistantTimestamp": null, "toolRefs": ["t2"], "compressedAt": 30}
 ],
 "summaryBodies": [
  {"toolCallIds": ["call_5", "call_0"], "text": "Listed the tree $& and read a.ts."},
  {"toolCallIds": ["call_6"], "text": "Ran the tests."}
 ]
}"#;

/// Every phase on, with limits low enough for small inputs to reach them.
/// 2.9.1 has no thinking strip (`fixed_config`).
pub const FIXED_CONFIG: &str = r#"{
 "chainCompression": {"enabled": true, "stripFinalAssistantThinking": true},
 "errorPurge": {"enabled": true, "cooldownTurns": 1, "minArgChars": 20},
 "thinkingStrip": {"enabled": true, "keepLastTurns": 2},
 "protection": {"protectedTools": ["Task"], "protectedPaths": ["**/*.md", "src/?.rs"]},
 "recoveryGraceTurns": 2
}"#;

/// `FIXED_CONFIG` as each dialect takes it.
pub fn fixed_config(dialect: Dialect) -> Config {
    let mut root =
        condense_native::parse_value(FIXED_CONFIG.as_bytes()).expect("fixed config parses");
    if let (Dialect::V2_9, condense_native::Json::Obj(entries)) = (dialect, &mut root) {
        entries.retain(|(k, _)| &**k != b"thinkingStrip");
    }
    Config::from_value(&root, dialect).expect("fixed config")
}

/// Checks a typed error: a stable code and a message that says something.
pub fn check_error(e: &PruneError) {
    assert!(
        e.code.as_str().starts_with("ERR_CONDENSE_"),
        "untyped error: {e:?}"
    );
    assert!(!e.message.is_empty(), "empty error message: {e:?}");
}

/// Prunes `messages` with the given state and config texts and checks the
/// invariants of the answer. Returns the answer when there is one.
pub fn check(
    messages: &[u8],
    state: &[u8],
    config: &[u8],
    boundary: Option<f64>,
    dialect: Dialect,
) -> Option<Pruned> {
    let state = match State::from_json(state, dialect) {
        Ok(s) => s,
        Err(e) => {
            check_error(&e);
            return None;
        }
    };
    let config = match Config::from_json(config, dialect) {
        Ok(c) => c,
        Err(e) => {
            check_error(&e);
            return None;
        }
    };
    check_with(messages, &state, &config, boundary, dialect)
}

pub fn check_with(
    messages: &[u8],
    state: &State,
    config: &Config,
    boundary: Option<f64>,
    dialect: Dialect,
) -> Option<Pruned> {
    let copy = messages.to_vec();
    let result = prune_bytes(messages, state, config, boundary, dialect);
    assert_eq!(messages, &copy[..], "the input was modified");
    let p = match result {
        Ok(p) => p,
        Err(e) => {
            check_error(&e);
            return None;
        }
    };
    // A successful prune means the input is a JSON array that size_of can
    // measure, too.
    let before = size_of(messages);
    assert!(
        before.is_ok(),
        "prune succeeded but size_of failed: {before:?}"
    );
    // 2.9.1 has no boundary: its frontier is always empty.
    let used = match dialect {
        Dialect::V2_4 => boundary,
        Dialect::V2_9 => None,
    };
    assert_eq!(
        p.frontier
            .thinking_strip_boundary_timestamp
            .map(f64::to_bits),
        used.map(f64::to_bits)
    );
    if !p.pruned {
        assert!(p.messages.is_none(), "unpruned answer with bytes");
        assert_eq!((p.before_chars, p.after_chars), (0, 0));
        return Some(p);
    }
    let out = p.messages.as_deref().expect("pruned answer without bytes");
    if let Err(at) = validate_json(out) {
        panic!(
            "output is not JSON (byte {at}): {}",
            String::from_utf8_lossy(&out[..out.len().min(2000)])
        );
    }
    assert_eq!(out.first(), Some(&b'['), "output is not an array");
    let text = std::str::from_utf8(out).expect("output is not UTF-8");
    let units: usize = text.chars().map(char::len_utf16).sum();
    assert_eq!(
        p.after_chars, units,
        "afterChars is not the UTF-16 length of the output"
    );
    assert_eq!(
        size_of(out).ok(),
        Some(p.after_chars),
        "size_of(output) != afterChars"
    );
    assert_eq!(
        before.ok(),
        Some(p.before_chars),
        "size_of(input) != beforeChars"
    );
    Some(p)
}

/// A strict RFC 8259 validator (any `\uXXXX` escape is grammatical, lone
/// surrogates included). Iterative, so deep nesting cannot overflow the
/// stack. Returns the byte offset of the first error.
pub fn validate_json(b: &[u8]) -> Result<(), usize> {
    #[derive(Clone, Copy, PartialEq)]
    enum Ctx {
        Arr,
        Obj,
    }
    let mut stack: Vec<Ctx> = Vec::new();
    let mut i = 0usize;
    let ws = |i: &mut usize| {
        while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
            *i += 1;
        }
    };
    // Parses one value at i; containers push a context and return.
    loop {
        ws(&mut i);
        let c = *b.get(i).ok_or(i)?;
        match c {
            b'[' | b'{' => {
                i += 1;
                ws(&mut i);
                let close = if c == b'[' { b']' } else { b'}' };
                if b.get(i) == Some(&close) {
                    i += 1;
                } else {
                    stack.push(if c == b'[' { Ctx::Arr } else { Ctx::Obj });
                    if c == b'{' {
                        i = string(b, i)?;
                        ws(&mut i);
                        if b.get(i) != Some(&b':') {
                            return Err(i);
                        }
                        i += 1;
                    }
                    continue;
                }
            }
            b'"' => i = string(b, i)?,
            b't' if b[i..].starts_with(b"true") => i += 4,
            b'f' if b[i..].starts_with(b"false") => i += 5,
            b'n' if b[i..].starts_with(b"null") => i += 4,
            b'-' | b'0'..=b'9' => i = number(b, i)?,
            _ => return Err(i),
        }
        // After a value: close containers or move to the next element.
        loop {
            ws(&mut i);
            let Some(&ctx) = stack.last() else {
                return if i == b.len() { Ok(()) } else { Err(i) };
            };
            match (b.get(i), ctx) {
                (Some(b','), Ctx::Arr) => {
                    i += 1;
                    break;
                }
                (Some(b','), Ctx::Obj) => {
                    i += 1;
                    ws(&mut i);
                    i = string(b, i)?;
                    ws(&mut i);
                    if b.get(i) != Some(&b':') {
                        return Err(i);
                    }
                    i += 1;
                    break;
                }
                (Some(b']'), Ctx::Arr) | (Some(b'}'), Ctx::Obj) => {
                    i += 1;
                    stack.pop();
                }
                _ => return Err(i),
            }
        }
    }
}

fn string(b: &[u8], mut i: usize) -> Result<usize, usize> {
    if b.get(i) != Some(&b'"') {
        return Err(i);
    }
    i += 1;
    let start = i;
    loop {
        match *b.get(i).ok_or(i)? {
            b'"' => break,
            b'\\' => {
                i += 1;
                match *b.get(i).ok_or(i)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 1,
                    b'u' => {
                        let hex = b.get(i + 1..i + 5).ok_or(i)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return Err(i);
                        }
                        i += 5;
                    }
                    _ => return Err(i),
                }
            }
            0..=0x1f => return Err(i),
            _ => i += 1,
        }
    }
    std::str::from_utf8(&b[start..i]).map_err(|e| start + e.valid_up_to())?;
    Ok(i + 1)
}

fn number(b: &[u8], mut i: usize) -> Result<usize, usize> {
    let digits = |i: &mut usize| {
        let from = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - from
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return Err(i),
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return Err(i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return Err(i);
        }
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validator() {
        for ok in [
            "[]",
            "[1,-0,1.5e-7,1E+21]",
            r#"{"a":[{"b":"\ud800\u00e9"}],"c":null}"#,
            " [ true , false ] ",
            r#""x""#,
        ] {
            assert_eq!(validate_json(ok.as_bytes()), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "[",
            "[1,]",
            "{\"a\"}",
            "[01]",
            "[1.]",
            "[\"\\x\"]",
            "[\"\n\"]",
            "[]]",
            "NaN",
            "[-]",
        ] {
            assert!(validate_json(bad.as_bytes()).is_err(), "{bad}");
        }
        assert!(validate_json(b"[\"\xed\xa0\x80\"]").is_err());
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(validate_json(deep.as_bytes()), Ok(()));
    }

    #[test]
    fn fixed_state_and_config_load() {
        for dialect in DIALECTS {
            assert!(State::from_json(FIXED_STATE.as_bytes(), dialect).is_ok());
            let config = fixed_config(dialect);
            assert_eq!(config.thinking.is_some(), dialect == Dialect::V2_4);
            assert!(config.chain.is_some() && config.purge.is_some());
        }
        // The text itself is 2.4.3's: 2.9.1 refuses its thinking strip.
        assert!(Config::from_json(FIXED_CONFIG.as_bytes(), Dialect::V2_9).is_err());
    }
}
