//! Which rules and prices apply to a model call. Prices come from pi-ai's
//! model catalog, which the JS layer reads from the installed
//! `@earendil-works/pi-ai` (js/catalog.js) and passes in as
//! `{"<provider>/<id>": {api, input, output, cacheRead, cacheWrite, tiers?,
//! promptCache?: {short?, long?}, images, effort, reasoning,
//! adaptiveThinking, contextWindow?}}` (USD per million tokens; the
//! lifetimes in seconds). A model the
//! catalog lacks falls back to `DEFAULT_RATES` and is named in the report.
//! The cache rules per provider are CACHE-MODEL.md section 2 and 3; which
//! ones were inferred rather than documented is said in docs/REPLAY.md.

use crate::hash::HashMap;
use crate::json::Json;

use super::wire::CallModel;

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

/// The context window of a model the catalog lacks (Claude Sonnet 4.5's).
pub const DEFAULT_CONTEXT_WINDOW: f64 = 200_000.0;

/// Rates for a model the catalog does not know: Claude Sonnet 4.5's.
pub const DEFAULT_RATES: Rates = Rates {
    input: 3.0,
    output: 15.0,
    cache_read: 0.3,
    cache_write: 3.75,
};

/// A catalog entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEntry {
    pub rates: Rates,
    /// `(inputTokensAbove, rates)`: the rates of the highest tier the
    /// whole prompt exceeds.
    pub tiers: Vec<(f64, Rates)>,
    pub images: bool,
    pub effort: bool,
    pub api: Box<[u8]>,
    /// Prompt tokens the model takes (`contextWindow`; the gate's budget).
    pub context_window: Option<f64>,
    /// The lifetime (ms) of a cache entry written with short and with long
    /// retention (`promptCache`; pi's cache warmer reads it).
    pub lifetime_ms: [Option<f64>; 2],
    /// Whether the model thinks (`reasoning`), and whether pi-ai sends its
    /// thinking as adaptive (`compat.forceAdaptiveThinking`): what pi's
    /// cache warmer asks before it re-sends a request.
    pub reasoning: bool,
    pub adaptive_thinking: bool,
}

impl ModelEntry {
    /// The rates for a prompt of `tokens` tokens in all.
    pub fn rates_for(&self, tokens: f64) -> Rates {
        let mut rates = self.rates;
        let mut matched = -1.0;
        for &(above, r) in &self.tiers {
            if tokens > above && above > matched {
                rates = r;
                matched = above;
            }
        }
        rates
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    models: HashMap<Vec<u8>, ModelEntry>,
}

fn rates(v: &Json) -> Option<Rates> {
    let n = |k: &str| match v.get(k) {
        Some(Json::Num(n)) if n.is_finite() => Some(*n),
        _ => None,
    };
    Some(Rates {
        input: n("input")?,
        output: n("output").unwrap_or(0.0),
        cache_read: n("cacheRead").unwrap_or(0.0),
        cache_write: n("cacheWrite").unwrap_or(0.0),
    })
}

impl Catalog {
    /// From the JS layer's catalog object; entries it cannot read are
    /// left out (the model then falls back to the defaults, named).
    pub fn from_json(root: &Json) -> Catalog {
        let mut models = HashMap::default();
        if let Json::Obj(entries) = root {
            for (key, v) in entries {
                let Some(r) = rates(v) else { continue };
                let tiers = v
                    .get("tiers")
                    .and_then(Json::as_array)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|t| match t.get("inputTokensAbove") {
                        Some(Json::Num(a)) => rates(t).map(|r| (*a, r)),
                        _ => None,
                    })
                    .collect();
                models.insert(
                    key.to_vec(),
                    ModelEntry {
                        rates: r,
                        tiers,
                        images: !matches!(v.get("images"), Some(Json::Bool(false))),
                        effort: matches!(v.get("effort"), Some(Json::Bool(true))),
                        api: v
                            .get("api")
                            .and_then(Json::as_text)
                            .unwrap_or_default()
                            .into(),
                        context_window: match v.get("contextWindow") {
                            Some(Json::Num(n)) if *n > 0.0 => Some(*n),
                            _ => None,
                        },
                        lifetime_ms: ["short", "long"].map(|tier| {
                            match v.get("promptCache").and_then(|c| c.get(tier)) {
                                Some(Json::Num(s)) if s.is_finite() && *s >= 0.0 => {
                                    Some(s * 1000.0)
                                }
                                _ => None,
                            }
                        }),
                        reasoning: matches!(v.get("reasoning"), Some(Json::Bool(true))),
                        adaptive_thinking: matches!(
                            v.get("adaptiveThinking"),
                            Some(Json::Bool(true))
                        ),
                    },
                );
            }
        }
        Catalog { models }
    }

    pub fn get(&self, provider: &[u8], id: &[u8]) -> Option<&ModelEntry> {
        let mut key = provider.to_vec();
        key.push(b'/');
        key.extend_from_slice(id);
        self.models.get(&key)
    }
}

/// How a provider caches a prompt prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Explicit markers (Anthropic's API as pi-ai calls it).
    Anthropic,
    /// Claude on Amazon Bedrock: cache points after the system text and
    /// on the last user message, none on the tools.
    Bedrock,
    /// OpenRouter's `anthropic/*`: markers on the first system message,
    /// the last tool, and the last text part of the last message that has
    /// one.
    OpenRouter,
    /// Automatic prefix caching (OpenAI up to GPT-5.5): the longest prefix
    /// shared with an earlier prompt, in 128-token steps.
    OpenAiPrefix,
    /// OpenAI GPT-5.6 and later: an implicit breakpoint at the end of each
    /// request, the latest 80 checked without a lookback limit.
    OpenAiImplicit,
    /// Google Gemini's implicit caching.
    Google,
}

/// The cache rules for one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    pub family: Family,
    /// Positions a breakpoint looks back (None: no limit).
    pub lookback: Option<usize>,
    /// Implicit breakpoints kept and checked (OpenAiImplicit).
    pub recent: usize,
    /// The shortest cacheable prefix, in tokens.
    pub min_tokens: f64,
    /// Hits are counted in steps of this many tokens.
    pub step: f64,
    /// Lifetime of an entry in ms.
    pub ttl_ms: f64,
    /// Whether writes cost the write rate (else the input rate).
    pub write_premium: bool,
    /// Whether thinking of earlier turns stays in the billed prompt.
    pub keeps_thinking: bool,
    /// Whether the API runs preserved thinking's prefix check on thinking
    /// sent back (`checks_thinking_prefix`).
    pub prefix_check: bool,
}

fn contains(id: &[u8], needle: &str) -> bool {
    id.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Anthropic's minimum cacheable prefix per model (CACHE-MODEL.md 2).
fn anthropic_min_tokens(id: &[u8]) -> f64 {
    const TABLE: [(&str, f64); 16] = [
        ("opus-5-5", 512.0),
        ("sonnet-5-5", 512.0),
        ("haiku-5-5", 512.0),
        ("fable-5", 512.0),
        ("opus-5", 512.0),
        ("opus-4-8", 1024.0),
        ("opus-4-7", 2048.0),
        ("opus-4-6", 4096.0),
        ("opus-4-5", 4096.0),
        ("haiku-4-5", 4096.0),
        ("sonnet-5", 1024.0),
        ("sonnet-4-6", 1024.0),
        ("sonnet-4-5", 1024.0),
        ("opus-4-1", 1024.0),
        ("opus-4", 1024.0),
        ("sonnet-4", 1024.0),
    ];
    TABLE
        .iter()
        .find(|(k, _)| contains(id, k))
        .map_or(1024.0, |&(_, n)| n)
}

/// Whether the model keeps earlier turns' thinking in its context, billed
/// as input (Anthropic's "Thinking block preservation by model" and
/// prompt caching's "Caching with thinking blocks": Opus 4.5 and later,
/// Sonnet 4.6 and later, every Claude of the fifth generation; earlier
/// Opus and Sonnet and every Haiku through 4.5 strip it server-side, so it
/// bills nothing and leaves the cached prefix alone). docs/REPLAY.md.
fn keeps_thinking(id: &[u8]) -> bool {
    match claude_version(id) {
        Some((family, major, minor)) => {
            major >= 5
                || matches!(family, "fable" | "mythos")
                || (family == "opus" && major == 4 && minor >= 5)
                || (family == "sonnet" && major == 4 && minor >= 6)
        }
        None => false,
    }
}

/// Whether the API runs preserved thinking's prefix check for the model:
/// a thinking block sent back is dropped (pi-ai asks for `drop_block`)
/// when anything before it differs from the request that produced it, and
/// every later one with it. Anthropic's documentation ("Preserved
/// thinking", "Prefix checks on thinking blocks"; Amazon Bedrock's
/// "Preserved thinking"): Claude Fable 5.1, Opus 5.5, Sonnet 5.5 and
/// Haiku 5.5 run it (pi-ai's `drop_block` opts every account in), Fable
/// 5.2 and Mythos 5.2 on every account; Mythos 5.1 records the signature
/// and, by Bedrock's page and Anthropic's of October 2026, does not run it
/// (a later page says otherwise: priced as not running); Opus 5, Fable 5,
/// Sonnet 5 and older models do not. The table is docs/REPLAY.md's.
fn checks_thinking_prefix(id: &[u8]) -> bool {
    match claude_version(id) {
        Some(("fable", 5, minor)) => minor >= 1,
        Some(("mythos", 5, minor)) => minor >= 2,
        Some(("opus" | "sonnet" | "haiku", 5, minor)) => minor >= 5,
        Some((_, major, _)) => major > 5,
        None => false,
    }
}

/// `claude-opus-4-5-20251101` -> ("opus", 4, 5); `claude-sonnet-5` ->
/// ("sonnet", 5, 0); Bedrock and OpenRouter prefixes are skipped.
fn claude_version(id: &[u8]) -> Option<(&'static str, u32, u32)> {
    let text = std::str::from_utf8(id).ok()?;
    for family in ["opus", "sonnet", "haiku", "fable", "mythos"] {
        let Some(at) = text.find(family) else {
            continue;
        };
        let mut numbers = text[at + family.len()..]
            .split(['-', '.'])
            .filter(|p| !p.is_empty())
            .map_while(|p| p.parse::<u32>().ok().filter(|n| *n < 100));
        let major = numbers.next().unwrap_or(0);
        let minor = numbers.next().unwrap_or(0);
        return Some((family, major, minor));
    }
    None
}

/// The rules for the model that answered a call. `long`: 1 h retention.
pub fn rules_for(model: &CallModel, long: bool) -> Rules {
    let id = &*model.id;
    let provider = &*model.provider;
    let ttl = if long { 3_600_000.0 } else { 300_000.0 };
    let anthropic = |family| Rules {
        family,
        lookback: Some(20),
        recent: 0,
        min_tokens: anthropic_min_tokens(id),
        step: 1.0,
        ttl_ms: ttl,
        write_premium: true,
        keeps_thinking: keeps_thinking(id),
        prefix_check: checks_thinking_prefix(id),
    };
    if provider == b"amazon-bedrock" {
        return anthropic(Family::Bedrock);
    }
    if provider == b"openrouter" && id.starts_with(b"anthropic/") {
        return anthropic(Family::OpenRouter);
    }
    if provider == b"google" || provider == b"google-vertex" || contains(id, "gemini") {
        return Rules {
            family: Family::Google,
            lookback: None,
            recent: 0,
            min_tokens: if contains(id, "pro") { 4096.0 } else { 2048.0 },
            step: 1.0,
            ttl_ms: 300_000.0,
            write_premium: false,
            keeps_thinking: true,
            prefix_check: false,
        };
    }
    if provider == b"openai" || provider == b"openai-codex" || &*model.api == b"openai-responses" {
        let implicit = gpt_version(id).is_some_and(|v| v >= 5.6);
        return Rules {
            family: if implicit {
                Family::OpenAiImplicit
            } else {
                Family::OpenAiPrefix
            },
            lookback: None,
            recent: if implicit { 80 } else { 0 },
            min_tokens: 1024.0,
            step: if implicit { 1.0 } else { 128.0 },
            ttl_ms: if implicit { 1_800_000.0 } else { 300_000.0 },
            write_premium: implicit,
            keeps_thinking: true,
            prefix_check: false,
        };
    }
    anthropic(Family::Anthropic)
}

/// `gpt-5.6-sol` -> 5.6.
fn gpt_version(id: &[u8]) -> Option<f64> {
    let rest = id.strip_prefix(b"gpt-")?;
    let end = rest
        .iter()
        .position(|&b| !(b.is_ascii_digit() || b == b'.'))
        .unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, id: &str) -> CallModel {
        CallModel {
            provider: provider.as_bytes().into(),
            id: id.as_bytes().into(),
            api: b"anthropic-messages"[..].into(),
            ..CallModel::default()
        }
    }

    #[test]
    fn rules_per_model() {
        let r = rules_for(&model("anthropic", "claude-sonnet-4-5"), false);
        assert_eq!(
            (r.family, r.min_tokens, r.keeps_thinking),
            (Family::Anthropic, 1024.0, false)
        );
        assert_eq!(r.ttl_ms, 300_000.0);
        assert_eq!(
            rules_for(&model("anthropic", "claude-opus-4-6"), true).min_tokens,
            4096.0
        );
        assert!(rules_for(&model("anthropic", "claude-opus-4-6"), true).keeps_thinking);
        assert_eq!(
            rules_for(&model("anthropic", "claude-opus-5-5"), false).min_tokens,
            512.0
        );
        assert_eq!(
            rules_for(&model("anthropic", "claude-opus-4-7"), false).min_tokens,
            2048.0
        );
        assert_eq!(
            rules_for(&model("openai", "gpt-5.6-sol"), false).family,
            Family::OpenAiImplicit
        );
        assert_eq!(
            rules_for(&model("openai", "gpt-5.5"), false).family,
            Family::OpenAiPrefix
        );
        assert_eq!(
            rules_for(&model("openrouter", "anthropic/claude-sonnet-4.5"), false).family,
            Family::OpenRouter
        );
    }

    /// Which models keep earlier turns' thinking, and which run preserved
    /// thinking's prefix check (docs/REPLAY.md's table).
    #[test]
    fn thinking_rules_per_model() {
        let rule = |id: &str| {
            let r = rules_for(&model("anthropic", id), false);
            (r.keeps_thinking, r.prefix_check)
        };
        for (id, keeps, checks) in [
            ("claude-sonnet-4-5", false, false),
            ("claude-haiku-4-5", false, false),
            ("claude-opus-4-1", false, false),
            ("claude-sonnet-4-6", true, false),
            ("claude-opus-4-6", true, false),
            ("claude-opus-5", true, false),
            ("claude-sonnet-5", true, false),
            ("claude-fable-5", true, false),
            ("claude-mythos-5-1", true, false),
            ("claude-opus-5-5", true, true),
            ("claude-sonnet-5-5", true, true),
            ("claude-haiku-5-5", true, true),
            ("claude-fable-5-1", true, true),
            ("claude-fable-5-2", true, true),
            ("claude-mythos-5-2", true, true),
        ] {
            assert_eq!(rule(id), (keeps, checks), "{id}");
        }
        assert!(!rules_for(&model("openai", "gpt-5.5"), false).prefix_check);
    }

    #[test]
    fn tiers_by_whole_prompt() {
        let e = ModelEntry {
            rates: DEFAULT_RATES,
            tiers: vec![(
                200_000.0,
                Rates {
                    input: 6.0,
                    ..DEFAULT_RATES
                },
            )],
            images: true,
            effort: false,
            api: Box::default(),
            context_window: None,
            lifetime_ms: [Some(300_000.0), Some(3_600_000.0)],
            reasoning: true,
            adaptive_thinking: false,
        };
        assert_eq!(e.rates_for(200_000.0).input, 3.0);
        assert_eq!(e.rates_for(200_001.0).input, 6.0);
    }
}
