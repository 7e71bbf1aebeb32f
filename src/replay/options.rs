//! The replay's options as the JS API passes them, one JSON object:
//! `{policies?, config?, renders?, charsPerToken?, inputPrice?,
//! cacheWriteMultiplier?, cacheReadMultiplier?, cacheTtlSeconds?,
//! cacheModel?, retention?, model?, recordedPolicy?, catalog?,
//! thinkingBoundary?: 'auto' | 'recorded' | 'config', gate?, contexts?,
//! contextsDir?, compaction?, cacheWarming?: 'idle' | 'off' |
//! 'streaming'}`.
//! Absent fields take the defaults of `ReplayOptions` and `PrefixRule`;
//! anything else is a typed error naming the field.

use crate::error::{PruneError, Result};
use crate::json::parse_value;
use crate::json::Json;

use super::compaction::CompactionSettings;
use super::policy::Policy;
use super::settings::Settings;
use super::warmer::WarmingMode;
use crate::cost::bill::CacheModel;
use crate::cost::catalog::Catalog;
use crate::cost::prefix::PrefixRule;
use crate::cost::wire::CallModel;
use crate::gate::rule::GateSettings;

/// What to replay and how to price it.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub policies: Vec<Policy>,
    pub settings: Settings,
    /// Keep every render's measurements (else only the totals).
    pub keep_renders: bool,
    /// The provider's cache, or the prefix rule with its prices.
    pub cache_model: CacheModel,
    /// 1 h retention (`PI_CACHE_RETENTION=long`).
    pub long_retention: bool,
    /// The model of every call (`provider/id`), instead of the session's.
    pub model: Option<CallModel>,
    /// The policy in force when the session was recorded.
    pub recorded_policy: Policy,
    /// pi-ai's catalog, as js/catalog.js reads it.
    pub catalog: Catalog,
    /// A fixed chars-per-token (no calibration).
    pub chars_per_token: Option<f64>,
    /// Which 2.4.3 thinking boundary a policy that reads it renders with.
    pub thinking_boundary: BoundaryMode,
    /// The gate's settings, for the `+gate` policies.
    pub gate: GateSettings,
    /// Where each call's sent messages go.
    pub contexts: Contexts,
    /// pi's `compaction` settings (`compaction.rs`).
    pub compaction: CompactionSettings,
    /// pi's `cacheWarming` setting (`warmer.rs`).
    pub cache_warming: WarmingMode,
}

/// What was sent, exported (`contexts`, `--contexts DIR`): per call the
/// array the context handler hands back to pi.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Contexts {
    #[default]
    None,
    /// In each render's row (`renders[k].messages`).
    InRenders,
    /// Streamed to `DIR/<policy>.jsonl`, a line per call: `{k, timestamp,
    /// model, gate?, messages}`.
    Dir(std::path::PathBuf),
}

/// `thinkingBoundary`: the 2.4.3 boundary a render uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoundaryMode {
    /// The config's own boundary (as `Config`), reported as the recorded
    /// rule when the file's 2.4 frontier entries hold that same boundary at
    /// every render.
    #[default]
    Auto,
    /// The boundary of the frontier in force, as recorded.
    Recorded,
    /// 2.4.3's rule computed at each flush from the config's keepLastTurns.
    Config,
}

impl BoundaryMode {
    /// Whether renders take the config's own boundary.
    pub fn takes_config_boundary(self) -> bool {
        self != BoundaryMode::Recorded
    }
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            policies: Policy::ALL.to_vec(),
            settings: Settings::default(),
            keep_renders: false,
            cache_model: CacheModel::Provider,
            long_retention: false,
            model: None,
            recorded_policy: Policy::None,
            catalog: Catalog::default(),
            chars_per_token: None,
            thinking_boundary: BoundaryMode::Auto,
            gate: GateSettings::default(),
            contexts: Contexts::None,
            compaction: CompactionSettings::default(),
            cache_warming: WarmingMode::Idle,
        }
    }
}

fn number(root: &Json, name: &str, default: f64, positive: bool) -> Result<f64> {
    match root.get(name) {
        None | Some(Json::Null) => Ok(default),
        Some(Json::Num(n)) if n.is_finite() && (*n > 0.0 || (!positive && *n == 0.0)) => Ok(*n),
        Some(_) => Err(PruneError::bad_argument(format!(
            "{name} must be a finite number {}",
            if positive { "> 0" } else { ">= 0" }
        ))),
    }
}

/// A string field, as text (absent or null: None).
fn string_field(root: &Json, name: &str) -> Result<Option<String>> {
    match root.get(name) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Str(t)) => Ok(Some(crate::json::text::to_string_lossy(t))),
        Some(_) => Err(PruneError::bad_argument(format!("{name} must be a string"))),
    }
}

/// A string field naming one of `choices` (absent or null: the first).
pub(crate) fn one_of<T: Copy>(root: &Json, name: &str, choices: &[(&str, T)]) -> Result<T> {
    let Some(given) = string_field(root, name)? else {
        return Ok(choices[0].1);
    };
    match choices.iter().find(|(n, _)| *n == given) {
        Some(&(_, v)) => Ok(v),
        None => {
            let names: Vec<String> = choices.iter().map(|(n, _)| format!("'{n}'")).collect();
            let (last, rest) = names.split_last().expect("choices are never empty");
            let list = if rest.is_empty() {
                last.clone()
            } else {
                format!("{} or {last}", rest.join(", "))
            };
            Err(PruneError::bad_argument(format!("{name} must be {list}")))
        }
    }
}

/// `policies`: names, each once, in order (default: all).
fn policies(root: &Json) -> Result<Vec<Policy>> {
    Ok(match root.get("policies") {
        None | Some(Json::Null) => Policy::ALL.to_vec(),
        Some(Json::Arr(names)) if !names.is_empty() => {
            let mut out = Vec::new();
            for n in names {
                let Some(name) = n.as_text() else {
                    return Err(PruneError::bad_argument(
                        "policies must be an array of policy names",
                    ));
                };
                let p = Policy::parse(&String::from_utf8_lossy(name))?;
                if !out.contains(&p) {
                    out.push(p);
                }
            }
            out
        }
        Some(_) => {
            return Err(PruneError::bad_argument(
                "policies must be a non-empty array of policy names",
            ))
        }
    })
}

/// The prefix rule's prices and lifetime (its `charsPerToken` also fixes
/// the provider model's factor).
fn prefix_rule(root: &Json) -> Result<PrefixRule> {
    let d = PrefixRule::default();
    Ok(PrefixRule {
        chars_per_token: number(root, "charsPerToken", d.chars_per_token, true)?,
        input_price: number(root, "inputPrice", d.input_price, false)?,
        cache_write_multiplier: number(
            root,
            "cacheWriteMultiplier",
            d.cache_write_multiplier,
            false,
        )?,
        cache_read_multiplier: number(root, "cacheReadMultiplier", d.cache_read_multiplier, false)?,
        cache_ttl_ms: number(root, "cacheTtlSeconds", d.cache_ttl_ms / 1000.0, false)? * 1000.0,
    })
}

/// `contexts` (in the render rows) or `contextsDir` (streamed to files).
fn contexts(in_rows: Option<&Json>, dir: Option<String>) -> Result<Contexts> {
    Ok(match (in_rows, dir) {
        (Some(Json::Bool(true)), Some(_)) => {
            return Err(PruneError::bad_argument(
                "contexts and contextsDir: one or the other",
            ))
        }
        (Some(Json::Bool(true)), None) => Contexts::InRenders,
        (None | Some(Json::Null | Json::Bool(false)), None) => Contexts::None,
        (None | Some(Json::Null | Json::Bool(false)), Some(dir)) => Contexts::Dir(dir.into()),
        (Some(_), _) => return Err(PruneError::bad_argument("contexts must be a boolean")),
    })
}

impl ReplayOptions {
    pub fn from_json(text: &[u8]) -> Result<Self> {
        let root =
            parse_value(text).map_err(|e| PruneError::bad_argument(format!("options: {e}")))?;
        let root = match root {
            Json::Null => Json::Obj(Vec::new()),
            o @ Json::Obj(_) => o,
            _ => return Err(PruneError::bad_argument("options must be an object")),
        };
        let policies = policies(&root)?;
        let rule = prefix_rule(&root)?;
        let keep_renders = match root.get("renders") {
            None | Some(Json::Null) | Some(Json::Bool(false)) => false,
            Some(Json::Bool(true)) => true,
            Some(_) => return Err(PruneError::bad_argument("renders must be a boolean")),
        };
        let cache_model = match one_of(
            &root,
            "cacheModel",
            &[("provider", false), ("prefix", true)],
        )? {
            false => CacheModel::Provider,
            true => CacheModel::Prefix(rule),
        };
        let long_retention = one_of(&root, "retention", &[("short", false), ("long", true)])?;
        let model = match string_field(&root, "model")? {
            None => None,
            Some(m) => {
                let Some((provider, id)) = m.split_once('/') else {
                    return Err(PruneError::bad_argument(
                        "model must be 'provider/id' (e.g. 'anthropic/claude-sonnet-4-5')",
                    ));
                };
                Some(CallModel {
                    provider: provider.as_bytes().into(),
                    id: id.as_bytes().into(),
                    api: Box::default(),
                    images: true,
                    effort: false,
                    empty_signature: false,
                    answers_own: true,
                })
            }
        };
        let thinking_boundary = one_of(
            &root,
            "thinkingBoundary",
            &[
                ("auto", BoundaryMode::Auto),
                ("recorded", BoundaryMode::Recorded),
                ("config", BoundaryMode::Config),
            ],
        )?;
        let recorded_policy = match string_field(&root, "recordedPolicy")? {
            None => Policy::None,
            Some(p) => match Policy::parse(&p)? {
                p if p.gated() => {
                    return Err(PruneError::bad_argument(
                        "recordedPolicy names the policy pi ran under, never a gated one",
                    ))
                }
                p => p,
            },
        };
        let gate = GateSettings::from_json(root.get("gate"), "gate")?;
        let contexts = contexts(root.get("contexts"), string_field(&root, "contextsDir")?)?;
        if policies.iter().any(|p| p.gated()) && !gate.enabled {
            return Err(PruneError::bad_argument(
                "gate.enabled is false, yet the +gate policies are asked for: leave them out, or the enabled setting",
            ));
        }
        if policies.iter().any(|p| p.gated()) && !cache_model.is_provider() {
            return Err(PruneError::bad_argument(
                "the +gate policies decide on the provider's cache model: leave cacheModel out (or 'provider')",
            ));
        }
        let chars_per_token = match root.get("charsPerToken") {
            None | Some(Json::Null) => None,
            Some(_) => Some(rule.chars_per_token),
        };
        let catalog = match root.get("catalog") {
            None | Some(Json::Null) => Catalog::default(),
            Some(c @ Json::Obj(_)) => Catalog::from_json(c),
            Some(_) => return Err(PruneError::bad_argument("catalog must be an object")),
        };
        Ok(ReplayOptions {
            policies,
            settings: Settings::new(root.get("config").cloned())?,
            // The sent messages live in the render rows.
            keep_renders: keep_renders || contexts == Contexts::InRenders,
            cache_model,
            long_retention,
            model,
            recorded_policy,
            catalog,
            chars_per_token,
            thinking_boundary,
            gate,
            contexts,
            compaction: CompactionSettings::from_json(root.get("compaction"))?,
            cache_warming: one_of(
                &root,
                "cacheWarming",
                &[
                    ("idle", WarmingMode::Idle),
                    ("off", WarmingMode::Off),
                    ("streaming", WarmingMode::Streaming),
                ],
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_checks_fields() {
        let o = ReplayOptions::from_json(
            br#"{"policies":["config","none","config"],"charsPerToken":3,"cacheTtlSeconds":60,"renders":true}"#,
        )
        .unwrap();
        assert_eq!(o.policies, [Policy::Config, Policy::None]);
        assert_eq!(o.chars_per_token, Some(3.0));
        assert_eq!(o.cache_model, CacheModel::Provider);
        assert!(o.keep_renders);
        let o = ReplayOptions::from_json(
            br#"{"charsPerToken":3,"cacheTtlSeconds":60,"cacheModel":"prefix"}"#,
        )
        .unwrap();
        let rule = PrefixRule {
            chars_per_token: 3.0,
            cache_ttl_ms: 60_000.0,
            ..PrefixRule::default()
        };
        assert_eq!(o.cache_model, CacheModel::Prefix(rule));
        assert_eq!(ReplayOptions::from_json(b"null").unwrap().policies.len(), 5);
        for bad in [
            r#"{"policies":["nope"]}"#,
            r#"{"policies":[]}"#,
            r#"{"charsPerToken":0}"#,
            r#"{"inputPrice":-1}"#,
            r#"{"renders":1}"#,
            r#"{"config":[1]}"#,
            r#"{"contexts":"yes"}"#,
            r#"{"contexts":true,"contextsDir":"out"}"#,
            r#"{"policies":["config+gate"],"cacheModel":"prefix"}"#,
            r#"{"policies":["config+gate"],"gate":{"enabled":false}}"#,
            r#"{"recordedPolicy":"2.9.1+gate"}"#,
            r#"{"gate":{"budget":1.5}}"#,
            "[]",
        ] {
            let e = ReplayOptions::from_json(bad.as_bytes()).unwrap_err();
            assert!(e.code.as_str().starts_with("ERR_CONDENSE_"), "{bad}");
        }
    }

    #[test]
    fn a_choice_names_its_values() {
        for (bad, message) in [
            (
                r#"{"cacheModel":"lru"}"#,
                "cacheModel must be 'provider' or 'prefix'",
            ),
            (r#"{"retention":1}"#, "retention must be a string"),
            (
                r#"{"retention":"day"}"#,
                "retention must be 'short' or 'long'",
            ),
            (
                r#"{"thinkingBoundary":"live"}"#,
                "thinkingBoundary must be 'auto', 'recorded' or 'config'",
            ),
            (
                r#"{"cacheWarming":"always"}"#,
                "cacheWarming must be 'idle', 'off' or 'streaming'",
            ),
        ] {
            let e = ReplayOptions::from_json(bad.as_bytes()).unwrap_err();
            assert_eq!(e.message, message, "{bad}");
        }
        let o = ReplayOptions::from_json(br#"{"retention":"long","thinkingBoundary":"config"}"#)
            .unwrap();
        assert!(o.long_retention);
        assert_eq!(o.thinking_boundary, BoundaryMode::Config);
        assert_eq!(o.cache_warming, WarmingMode::Idle);
        let o = ReplayOptions::from_json(br#"{"cacheWarming":"streaming"}"#).unwrap();
        assert_eq!(o.cache_warming, WarmingMode::Streaming);
    }

    #[test]
    fn contexts_go_to_the_rows_or_a_directory() {
        let read = |t: &str| ReplayOptions::from_json(t.as_bytes()).unwrap();
        assert_eq!(read("{}").contexts, Contexts::None);
        let rows = read(r#"{"contexts":true}"#);
        assert_eq!(rows.contexts, Contexts::InRenders);
        assert!(rows.keep_renders, "the messages live in the render rows");
        let dir = read(r#"{"contextsDir":"out"}"#);
        assert_eq!(dir.contexts, Contexts::Dir("out".into()));
        assert!(!dir.keep_renders);
    }
}
