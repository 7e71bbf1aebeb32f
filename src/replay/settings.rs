//! The pi-condense config a replay renders with. The session file does not
//! hold it (SESSIONS.md B.7): pi-condense reads the `contextPrune` block of
//! pi's `<agent-dir>/settings.json` and merges it over its defaults
//! (`normalize` in its `src/config.ts`: `{...DEFAULT_CONFIG, ...block}`, a
//! shallow merge, so a given `chainCompression` replaces the whole default
//! section). Three shapes are accepted:
//! - pi's settings file, `{"contextPrune": {...}, ...other pi settings}`;
//! - the `contextPrune` block itself (`purgeErrors`, `protectedTools`, ...);
//! - the addon's render config (SPEC 2.3), recognised by its own section
//!   names `errorPurge` or `protection`, taken as it is.
//!
//! The defaults are `DEFAULT_CONFIG` of pi-condense's `src/types.ts` at the
//! v2.4.3 and v2.9.1 tags, also listed in its `doc/configuration.md`:
//! `chainCompression {enabled: true, stripFinalAssistantThinking: true}`,
//! `purgeErrors {enabled: true, cooldownTurns: 2, minArgChars: 500}`,
//! `thinkingStrip {enabled: true, keepLastTurns: 16}` (2.4.3 only),
//! `protectedTools []`, `protectedPaths ["**/skills/**/*.md"]`,
//! `recoveryGraceTurns 3`. The master switch `enabled` (default false) is
//! not read: a replay asks what pruning does, so it always renders.

use crate::dialect::Dialect;
use crate::error::{PruneError, Result};
use crate::json::Json;

/// The user's config, in one of the three shapes, kept as given.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    given: Option<Json>,
}

fn key(k: &str) -> Box<[u8]> {
    k.as_bytes().into()
}

fn object(entries: Vec<(&str, Json)>) -> Json {
    Json::Obj(entries.into_iter().map(|(k, v)| (key(k), v)).collect())
}

/// pi-condense's `DEFAULT_CONFIG`, reduced to the keys the render reads.
fn defaults(dialect: Dialect) -> Vec<(Box<[u8]>, Json)> {
    let mut d = vec![
        (key("recoveryGraceTurns"), Json::Num(3.0)),
        (key("protectedTools"), Json::Arr(Vec::new())),
        (
            key("protectedPaths"),
            Json::Arr(vec![Json::str("**/skills/**/*.md")]),
        ),
        (
            key("chainCompression"),
            object(vec![
                ("enabled", Json::Bool(true)),
                ("rollingWindow", Json::Num(3.0)),
                ("stripFinalAssistantThinking", Json::Bool(true)),
                ("fuseRangeSummary", Json::Bool(true)),
            ]),
        ),
        (
            key("purgeErrors"),
            object(vec![
                ("enabled", Json::Bool(true)),
                ("cooldownTurns", Json::Num(2.0)),
                ("minArgChars", Json::Num(500.0)),
            ]),
        ),
    ];
    if dialect == Dialect::V2_4 {
        d.push((
            key("thinkingStrip"),
            object(vec![
                ("enabled", Json::Bool(true)),
                ("keepLastTurns", Json::Num(16.0)),
            ]),
        ));
    }
    d
}

/// `{...defaults, ...block}`.
fn merged(block: Option<&Json>, dialect: Dialect) -> Vec<(Box<[u8]>, Json)> {
    let mut out = defaults(dialect);
    if let Some(Json::Obj(entries)) = block {
        for (k, v) in entries {
            match out.iter_mut().find(|(have, _)| have == k) {
                Some(slot) => slot.1 = v.clone(),
                None => out.push((k.clone(), v.clone())),
            }
        }
    }
    out
}

fn field<'a>(entries: &'a [(Box<[u8]>, Json)], name: &str) -> Option<&'a Json> {
    entries
        .iter()
        .find(|(k, _)| &**k == name.as_bytes())
        .map(|(_, v)| v)
}

/// `normalize`'s rule for `recoveryGraceTurns`: a finite number >= 0,
/// floored, or the default 3.
fn grace(v: Option<&Json>) -> Json {
    match v {
        Some(Json::Num(n)) if n.is_finite() && *n >= 0.0 => Json::Num(n.floor()),
        _ => Json::Num(3.0),
    }
}

/// What pi-condense passes its `pruneMessages`, as the addon's config
/// object: the sections the release's context handler hands over.
fn render_config(block: Option<&Json>, dialect: Dialect) -> Json {
    let m = merged(block, dialect);
    let get = |name: &str| field(&m, name).cloned().unwrap_or(Json::Null);
    let mut out = vec![
        (key("chainCompression"), get("chainCompression")),
        (key("errorPurge"), get("purgeErrors")),
    ];
    if dialect == Dialect::V2_4 {
        out.push((key("thinkingStrip"), get("thinkingStrip")));
    }
    out.push((
        key("protection"),
        object(vec![
            ("protectedTools", get("protectedTools")),
            ("protectedPaths", get("protectedPaths")),
        ]),
    ));
    out.push((
        key("recoveryGraceTurns"),
        grace(field(&m, "recoveryGraceTurns")),
    ));
    Json::Obj(out)
}

impl Settings {
    /// `given`: pi's settings file, a `contextPrune` block or a render
    /// config; `None` (or JSON `null`) for the release's defaults.
    pub fn new(given: Option<Json>) -> Result<Self> {
        match &given {
            None | Some(Json::Null) => Ok(Settings { given: None }),
            Some(Json::Obj(_)) => Ok(Settings { given }),
            Some(_) => Err(PruneError::bad_config(
                "the replay config must be an object: pi's settings file, its contextPrune block, or a render config",
            )),
        }
    }

    fn is_render_config(v: &Json) -> bool {
        v.get("errorPurge").is_some() || v.get("protection").is_some()
    }

    /// The render config of `dialect` (its own sections only: 2.9.1 has no
    /// thinking strip).
    pub fn render_config(&self, dialect: Dialect) -> Json {
        let config = match &self.given {
            Some(v) if Self::is_render_config(v) => v.clone(),
            Some(v) => match v.get("contextPrune") {
                Some(block) => render_config(Some(block), dialect),
                None if looks_like_pi_settings(v) => render_config(None, dialect),
                None => render_config(Some(v), dialect),
            },
            None => render_config(None, dialect),
        };
        match dialect {
            Dialect::V2_4 => config,
            Dialect::V2_9 => config.without("thinkingStrip"),
        }
    }

    /// Whether pi-condense prunes with these settings: its master switch,
    /// `contextPrune.enabled`, is on only when `true` (its `normalize`; the
    /// default is off, so no settings or no block is off). A render config
    /// has no switch: it is what a render is handed, so it counts as on.
    /// The CLI's copy of the rule is `findUserSettings` in
    /// cli/user-settings.js.
    pub fn pruning_on(&self) -> bool {
        let block = match &self.given {
            Some(v) if Self::is_render_config(v) => return true,
            Some(v) => match v.get("contextPrune") {
                Some(block) => Some(block),
                None if looks_like_pi_settings(v) => None,
                None => Some(v),
            },
            None => None,
        };
        block.and_then(|b| b.get("enabled")) == Some(&Json::Bool(true))
    }

    /// The user's `contextPrune` block merged over pi-condense's defaults
    /// (2.4.3's sections, a superset of 2.9.1's), as pi's settings.json
    /// spells it: what a tune varies and recommends.
    pub fn context_prune(&self) -> Json {
        let block = match &self.given {
            Some(v) if Self::is_render_config(v) => {
                let protection = v.get("protection");
                let mut b = Vec::new();
                for (from, to) in [
                    ("chainCompression", "chainCompression"),
                    ("errorPurge", "purgeErrors"),
                    ("thinkingStrip", "thinkingStrip"),
                    ("recoveryGraceTurns", "recoveryGraceTurns"),
                ] {
                    if let Some(x) = v.get(from) {
                        b.push((key(to), x.clone()));
                    }
                }
                for name in ["protectedTools", "protectedPaths"] {
                    if let Some(x) = protection.and_then(|p| p.get(name)) {
                        b.push((key(name), x.clone()));
                    }
                }
                Some(Json::Obj(b))
            }
            Some(v) => match v.get("contextPrune") {
                Some(block) => Some(block.clone()),
                None if looks_like_pi_settings(v) => None,
                None => Some(v.clone()),
            },
            None => None,
        };
        Json::Obj(merged(block.as_ref(), Dialect::V2_4))
    }

    /// The thinking strip's `keepLastTurns` in the 2.4.3 config (16 when it
    /// has none), for the live-count policy.
    pub fn keep_last_turns(&self) -> Json {
        self.render_config(Dialect::V2_4)
            .get("thinkingStrip")
            .and_then(|t| t.get("keepLastTurns"))
            .cloned()
            .unwrap_or(Json::Num(16.0))
    }
}

/// A pi settings file without a `contextPrune` block (pi-condense then runs
/// on its defaults): it holds pi's own top-level settings and none of
/// pi-condense's keys. js/settings-check.js (`piSettingsWithoutBlock`)
/// holds the same rule, for the CLI's warning.
fn looks_like_pi_settings(v: &Json) -> bool {
    const PI_KEYS: [&str; 9] = [
        "defaultProvider",
        "defaultModel",
        "defaultThinkingLevel",
        "theme",
        "compaction",
        "cacheWarming",
        "retry",
        "packages",
        "extensions",
    ];
    const CONDENSE_KEYS: [&str; 7] = [
        "chainCompression",
        "purgeErrors",
        "thinkingStrip",
        "protectedTools",
        "protectedPaths",
        "recoveryGraceTurns",
        "pruneOn",
    ];
    PI_KEYS.iter().any(|k| v.get(k).is_some()) && !CONDENSE_KEYS.iter().any(|k| v.get(k).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_value;

    fn settings(text: &str) -> Settings {
        Settings::new(Some(parse_value(text.as_bytes()).unwrap())).unwrap()
    }

    fn text(v: &Json) -> String {
        String::from_utf8(v.to_json()).unwrap()
    }

    #[test]
    fn defaults_are_the_releases() {
        let s = Settings::new(None).unwrap();
        assert_eq!(
            text(&s.render_config(Dialect::V2_4)),
            r#"{"chainCompression":{"enabled":true,"rollingWindow":3,"stripFinalAssistantThinking":true,"fuseRangeSummary":true},"errorPurge":{"enabled":true,"cooldownTurns":2,"minArgChars":500},"thinkingStrip":{"enabled":true,"keepLastTurns":16},"protection":{"protectedTools":[],"protectedPaths":["**/skills/**/*.md"]},"recoveryGraceTurns":3}"#
        );
        assert!(s
            .render_config(Dialect::V2_9)
            .get("thinkingStrip")
            .is_none());
    }

    /// pi-condense's master switch: on only when `contextPrune.enabled` is
    /// `true`, in a settings file or the block alone.
    #[test]
    fn pruning_is_on_only_when_enabled_is_true() {
        assert!(!Settings::new(None).unwrap().pruning_on());
        for (text, on) in [
            (r#"{"theme":"dark","defaultModel":"x"}"#, false),
            (r#"{"theme":"dark","contextPrune":{}}"#, false),
            (r#"{"contextPrune":{"enabled":false}}"#, false),
            (r#"{"contextPrune":{"enabled":"true"}}"#, false),
            (r#"{"contextPrune":{"enabled":true}}"#, true),
            (r#"{"enabled":true,"recoveryGraceTurns":1}"#, true),
            (r#"{"recoveryGraceTurns":1}"#, false),
            (r#"{"errorPurge":{"enabled":true}}"#, true),
        ] {
            assert_eq!(settings(text).pruning_on(), on, "{text}");
        }
    }

    #[test]
    fn the_three_shapes() {
        // pi's settings file: the block merges over the defaults, shallowly.
        let file = settings(
            r#"{"theme":"dark","contextPrune":{"enabled":true,"purgeErrors":{"enabled":false},"recoveryGraceTurns":1.7}}"#,
        );
        let c = file.render_config(Dialect::V2_4);
        assert_eq!(text(c.get("errorPurge").unwrap()), r#"{"enabled":false}"#);
        assert_eq!(text(c.get("recoveryGraceTurns").unwrap()), "1");
        assert_eq!(
            text(c.get("thinkingStrip").unwrap()),
            r#"{"enabled":true,"keepLastTurns":16}"#
        );
        // The block alone gives the same.
        let block = settings(r#"{"purgeErrors":{"enabled":false},"recoveryGraceTurns":1.7}"#);
        assert_eq!(text(&block.render_config(Dialect::V2_4)), text(&c));
        // A settings file without the block: defaults.
        let bare = settings(r#"{"theme":"dark","defaultModel":"x"}"#);
        assert_eq!(
            text(&bare.render_config(Dialect::V2_4)),
            text(&Settings::new(None).unwrap().render_config(Dialect::V2_4))
        );
        // A render config is taken as it is.
        let render = settings(
            r#"{"errorPurge":{"enabled":true,"cooldownTurns":1,"minArgChars":0},"thinkingStrip":{"enabled":true,"keepLastTurns":4}}"#,
        );
        assert_eq!(
            text(&render.render_config(Dialect::V2_9)),
            r#"{"errorPurge":{"enabled":true,"cooldownTurns":1,"minArgChars":0}}"#
        );
        assert_eq!(text(&render.keep_last_turns()), "4");
        assert!(Settings::new(Some(Json::Arr(Vec::new()))).is_err());
    }
}
