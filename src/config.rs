//! The render config (SPEC 2.3, SPEC-2.9 2.5), read with the reference's JS
//! coercions: a section is on when its `enabled` is truthy, a missing limit
//! is `undefined` (NaN in comparisons), `"2"` counts as 2. Which sections a
//! dialect knows is checked here: `thinkingStrip` under 2.9.1 is an error,
//! not a silently ignored key.

use crate::dialect::Dialect;
use crate::error::{PruneError, Result};
use crate::glob::Glob;
use crate::json::parse_value;
use crate::json::value::write_value;
use crate::json::Json;

#[derive(Debug, Default, Clone)]
pub struct Config {
    pub chain: Option<ChainConfig>,
    pub purge: Option<PurgeConfig>,
    /// 2.4.3 only.
    pub thinking: Option<ThinkingConfig>,
    /// Present when the host passed a protection section (the reference
    /// tests it for truthiness before it looks at records).
    pub protection: Option<Protection>,
    /// The raw `recoveryGraceTurns` (absent: the reference's default, 0).
    pub recovery_grace_turns: Json,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChainConfig {
    pub strip_final_assistant_thinking: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PurgeConfig {
    pub cooldown_turns: f64,
    pub min_arg_chars: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ThinkingConfig {
    /// `keepLastTurns` as ToNumber sees it (NaN when absent).
    pub keep_last_turns: f64,
}

/// The protection section, read as the reference reads it: lazily, so a
/// malformed field throws only when a record is actually checked.
#[derive(Debug, Clone)]
pub struct Protection {
    tools: Tools,
    paths: Paths,
}

#[derive(Debug, Clone)]
enum Tools {
    List(Vec<Json>),
    /// A string: `includes` is a substring test of `String(toolName)`.
    Text(Vec<u16>),
    /// Missing, null, or without `includes`: reading it throws.
    Throws,
}

#[derive(Debug, Clone)]
enum Paths {
    List(Vec<Pattern>),
    /// Missing or null: `.length` throws.
    Throws,
    /// A non-empty value without `.some` (a string, a number, an object):
    /// the match throws once a string path is tested.
    NoSome,
}

#[derive(Debug, Clone)]
enum Pattern {
    Glob(Glob),
    /// A non-string pattern compiles to `/^$/`.
    EmptyOnly,
    /// `null`: the compiler reads its length and throws.
    Throws,
}

/// ToNumber of an optional property: undefined is NaN.
fn number(v: Option<&Json>) -> f64 {
    v.map_or(f64::NAN, Json::to_number)
}

fn enabled<'a>(root: &'a Json, name: &str) -> Option<&'a Json> {
    let section = root.get(name)?;
    section
        .get("enabled")
        .is_some_and(Json::truthy)
        .then_some(section)
}

impl Config {
    pub fn from_json(json: &[u8], dialect: Dialect) -> Result<Self> {
        let root = parse_value(json).map_err(PruneError::bad_config)?;
        Self::from_value(&root, dialect)
    }

    pub fn from_value(root: &Json, dialect: Dialect) -> Result<Self> {
        match root {
            Json::Null => return Ok(Self::with_default_grace()),
            Json::Obj(entries) => {
                for (key, value) in entries {
                    let known = match &**key {
                        b"chainCompression"
                        | b"errorPurge"
                        | b"protection"
                        | b"recoveryGraceTurns" => true,
                        b"thinkingStrip" => dialect == Dialect::V2_4,
                        _ => false,
                    };
                    if !known && !value.is_null() {
                        return Err(PruneError::bad_config(format!(
                            "{} is not a setting of pi-condense {}",
                            String::from_utf8_lossy(key),
                            dialect.release()
                        )));
                    }
                }
            }
            _ => return Err(PruneError::bad_config("must be an object")),
        }
        Ok(Config {
            chain: enabled(root, "chainCompression").map(|s| ChainConfig {
                strip_final_assistant_thinking: s
                    .get("stripFinalAssistantThinking")
                    .is_some_and(Json::truthy),
            }),
            purge: enabled(root, "errorPurge").map(|s| PurgeConfig {
                cooldown_turns: number(s.get("cooldownTurns")),
                min_arg_chars: number(s.get("minArgChars")),
            }),
            thinking: enabled(root, "thinkingStrip").map(|s| ThinkingConfig {
                keep_last_turns: number(s.get("keepLastTurns")),
            }),
            protection: Protection::from_section(root.get("protection"))?,
            recovery_grace_turns: root
                .get("recoveryGraceTurns")
                .cloned()
                .unwrap_or(Json::Num(0.0)),
        })
    }

    fn with_default_grace() -> Self {
        Config {
            recovery_grace_turns: Json::Num(0.0),
            ..Config::default()
        }
    }

    /// `recoveryGraceTurns > 0` and the grace in turns, compared as JS
    /// compares `count <= recoveryGraceTurns`.
    pub fn grace_turns(&self) -> Option<f64> {
        let n = self.recovery_grace_turns.to_number();
        // `x > 0` on a string or array coerces the same way; on an object it
        // is NaN, and null is 0.
        (n > 0.0).then_some(n)
    }
}

impl Protection {
    fn from_section(section: Option<&Json>) -> Result<Option<Self>> {
        let Some(s) = section.filter(|s| s.truthy()) else {
            return Ok(None);
        };
        let tools = match s.get("protectedTools") {
            Some(Json::Arr(items)) => Tools::List(items.clone()),
            Some(Json::Str(t)) => Tools::Text(crate::json::text::to_units(t)),
            _ => Tools::Throws,
        };
        let paths = match s.get("protectedPaths") {
            None | Some(Json::Null) => Paths::Throws,
            Some(Json::Arr(items)) => Paths::List(
                items
                    .iter()
                    .map(|p| match p {
                        Json::Str(t) => Pattern::Glob(Glob::new(t)),
                        Json::Null | Json::Arr(_) => Pattern::Throws,
                        _ => Pattern::EmptyOnly,
                    })
                    .collect(),
            ),
            Some(Json::Str(t)) if t.is_empty() => Paths::List(Vec::new()),
            Some(_) => Paths::NoSome,
        };
        Ok(Some(Self { tools, paths }))
    }

    /// SPEC 5: by tool name (`includes`), else by `args.path` (backslashes
    /// as slashes) against the globs. Err where the reference throws.
    /// JS oracle's copy: `isProtected` in js/pure/rules.js.
    pub fn protects(
        &self,
        tool_name: Option<&Json>,
        args: Option<&Json>,
    ) -> std::result::Result<bool, &'static str> {
        match &self.tools {
            Tools::Throws => return Err("protection.protectedTools is not a list"),
            Tools::List(items) => {
                if let Some(name) = tool_name {
                    if items.iter().any(|t| same_value_zero(t, name)) {
                        return Ok(true);
                    }
                }
            }
            Tools::Text(units) => {
                let mut needle = Vec::new();
                write_value(&mut needle, tool_name);
                let needle = crate::json::text::to_units(&needle);
                if needle.is_empty() || units.windows(needle.len()).any(|w| w == needle.as_slice())
                {
                    return Ok(true);
                }
            }
        }
        let patterns = match &self.paths {
            Paths::Throws => return Err("protection.protectedPaths is missing"),
            Paths::List(p) if p.is_empty() => return Ok(false),
            Paths::List(p) => Some(p),
            Paths::NoSome => None,
        };
        let Some(path) = args.and_then(|a| a.get("path")).and_then(Json::as_text) else {
            return Ok(false);
        };
        let Some(patterns) = patterns else {
            return Err("protection.protectedPaths is not a list");
        };
        // Backslashes as slashes.
        let units: Vec<u16> = crate::json::text::to_units(path)
            .into_iter()
            .map(|u| if u == 0x5c { 0x2f } else { u })
            .collect();
        for p in patterns {
            match p {
                Pattern::Glob(g) if g.matches(&units) => return Ok(true),
                Pattern::EmptyOnly if units.is_empty() => return Ok(true),
                Pattern::Throws => return Err("protection.protectedPaths holds null"),
                _ => {}
            }
        }
        Ok(false)
    }
}

/// SameValueZero on parsed values (objects are never equal: each parse makes
/// new ones).
pub fn same_value_zero(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Null, Json::Null) => true,
        (Json::Bool(x), Json::Bool(y)) => x == y,
        (Json::Num(x), Json::Num(y)) => x == y,
        (Json::Str(x), Json::Str(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        Config::from_json(json.as_bytes(), Dialect::V2_4).unwrap()
    }

    #[test]
    fn reads_sections_with_js_coercions() {
        let c = cfg(
            r#"{"chainCompression":{"enabled":1,"stripFinalAssistantThinking":"yes"},
            "errorPurge":{"enabled":true,"cooldownTurns":"2"},"thinkingStrip":{"enabled":0},
            "recoveryGraceTurns":"3"}"#,
        );
        assert!(c.chain.as_ref().unwrap().strip_final_assistant_thinking);
        let p = c.purge.clone().unwrap();
        assert_eq!(p.cooldown_turns, 2.0);
        assert!(p.min_arg_chars.is_nan());
        assert!(c.thinking.is_none());
        assert_eq!(c.grace_turns(), Some(3.0));
        assert_eq!(cfg("{}").grace_turns(), None);
        assert_eq!(cfg(r#"{"recoveryGraceTurns":null}"#).grace_turns(), None);
    }

    #[test]
    fn protection_by_tool_and_path() {
        let c = cfg(
            r#"{"protection":{"protectedTools":["TaskCreate"],"protectedPaths":["**/skills/**/*.md"]}}"#,
        );
        let p = c.protection.unwrap();
        assert_eq!(p.protects(Some(&Json::str("TaskCreate")), None), Ok(true));
        let args = crate::json::parse_value(br#"{"path":"a\\skills\\x.md"}"#).unwrap();
        assert_eq!(p.protects(Some(&Json::str("read")), Some(&args)), Ok(true));
        assert_eq!(p.protects(Some(&Json::str("read")), None), Ok(false));
        assert!(cfg("{}").protection.is_none());
        // A missing protectedPaths throws once a name does not match.
        let half = cfg(r#"{"protection":{"protectedTools":["read"]}}"#)
            .protection
            .unwrap();
        assert_eq!(half.protects(Some(&Json::str("read")), None), Ok(true));
        assert!(half.protects(Some(&Json::str("bash")), None).is_err());
        let text = cfg(r#"{"protection":{"protectedTools":"bash,read","protectedPaths":[]}}"#)
            .protection
            .unwrap();
        assert_eq!(text.protects(Some(&Json::str("read")), None), Ok(true));
        assert_eq!(text.protects(Some(&Json::str("write")), None), Ok(false));
    }

    #[test]
    fn each_dialect_knows_its_settings() {
        let thinking = br#"{"thinkingStrip":{"enabled":true}}"#;
        assert!(Config::from_json(thinking, Dialect::V2_4).is_ok());
        let e = Config::from_json(thinking, Dialect::V2_9).unwrap_err();
        assert_eq!(e.code, crate::error::Code::InvalidConfig);
        assert!(
            e.message
                .contains("thinkingStrip is not a setting of pi-condense 2.9.1"),
            "{}",
            e.message
        );
        assert!(Config::from_json(br#"{"surprise":1}"#, Dialect::V2_4).is_err());
        assert!(Config::from_json(b"[]", Dialect::V2_4).is_err());
    }
}
