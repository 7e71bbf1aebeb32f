//! What pi would have done under each policy: its automatic compaction
//! (pi 1.6.0, `core/compaction/compaction.js` and `core/agent-session.js`).
//! Before each request pi compares the context's size with the model's
//! window less `compaction.reserveTokens` (`shouldCompact`): the size is the
//! usage the last answer recorded (the request as it was sent, so a policy
//! that sent less compacts later) plus its own chars/4 estimate of the
//! messages appended since (`estimateTokens`), and when it passes, pi cuts
//! the history where `keepRecentTokens` of recent messages stay
//! (`findProjectedCutPoint`), summarizes the rest in one request of its own
//! (`generateSummaryWithUsage`, sent with `cacheRetention: "none"`), and the
//! context goes on from the summary and what it kept.
//!
//! The replay decides that per policy, at every call, from what the policy
//! itself sent (`decide`). A compaction the file recorded is pi's own: the
//! policy the session was recorded under makes each one where the file did;
//! one recorded below the threshold (its `tokensBefore`) was asked for (a
//! `/compact`) and every policy makes it; one above is made by another
//! policy only where its own size passed the threshold. Sizes and rules are
//! pi's, over the messages as pi holds them (not as pi-condense renders
//! them): the compaction reads the session, not the pruned context.

use std::ops::Range;

use crate::error::{PruneError, Result};
use crate::json::text::units;
use crate::json::utf16_len;
use crate::json::{parse_value, Json};
use crate::sessionfile::project::project;
use crate::sessionfile::SessionFile;

/// pi's defaults (`core/settings-defaults.js`).
const DEFAULT_RESERVE_TOKENS: f64 = 16_384.0;
const DEFAULT_KEEP_RECENT_TOKENS: f64 = 20_000.0;
/// pi's `estimateTokens` counts an image as this many characters.
const IMAGE_CHARS: f64 = 4_800.0;
/// `serializeConversation` keeps this much of a tool result
/// (`core/compaction/utils.js` `TOOL_RESULT_MAX_CHARS`).
const TOOL_RESULT_MAX_CHARS: f64 = 2_000.0;
/// The characters of a summarization request besides the conversation, in
/// pi 1.6.0 (the lengths of `SUMMARIZATION_SYSTEM_PROMPT`, of the
/// `<conversation>` wrapper with `SUMMARIZATION_PROMPT`, of the update
/// prompt with its `<previous-summary>` wrapper, and of the turn-prefix
/// prompt): `__test__/compaction.test.js` measures them on the installed
/// pi.
pub const SYSTEM_PROMPT_CHARS: f64 = 310.0;
pub const SUMMARY_PROMPT_CHARS: f64 = 912.0;
pub const UPDATE_PROMPT_CHARS: f64 = 1_331.0;
pub const TURN_PREFIX_PROMPT_CHARS: f64 = 696.0;
/// A summary's size when the session recorded none to go by: 8,000
/// characters, an assumption (pi caps a summary only at the model's output
/// limit; docs/REPLAY.md says so and `compaction.summaryChars` sets it).
pub const DEFAULT_SUMMARY_CHARS: f64 = 8_000.0;

/// pi's `compaction` settings, as `getCompactionSettings(model)` resolves
/// them: a model's override, else the setting, else pi's default.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionSettings {
    pub enabled: bool,
    reserve_tokens: Option<f64>,
    keep_recent_tokens: Option<f64>,
    /// `modelOverrides`: per `provider/id`, its reserve and keep.
    overrides: Vec<(String, Option<f64>, Option<f64>)>,
    /// The size of a summary the replay makes up (None: the session's own,
    /// else `DEFAULT_SUMMARY_CHARS`).
    pub summary_chars: Option<f64>,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: None,
            keep_recent_tokens: None,
            overrides: Vec::new(),
            summary_chars: None,
        }
    }
}

/// A token setting as pi checks it: a non-negative safe integer.
fn tokens_setting(v: Option<&Json>, path: &str) -> Result<Option<f64>> {
    match v {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Num(n)) if *n >= 0.0 && n.fract() == 0.0 && *n <= 9_007_199_254_740_991.0 => {
            Ok(Some(*n))
        }
        Some(_) => Err(PruneError::bad_config(format!(
            "{path} must be a non-negative whole number of tokens"
        ))),
    }
}

impl CompactionSettings {
    /// From pi's `compaction` settings object (`{enabled?, reserveTokens?,
    /// keepRecentTokens?, modelOverrides?}`) and the replay's own
    /// `summaryChars`; None: pi's defaults.
    pub fn from_json(v: Option<&Json>) -> Result<Self> {
        let mut s = CompactionSettings::default();
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return Ok(s);
        };
        let Json::Obj(_) = v else {
            return Err(PruneError::bad_config("compaction must be an object"));
        };
        match v.get("enabled") {
            None | Some(Json::Null) => {}
            Some(Json::Bool(b)) => s.enabled = *b,
            Some(_) => {
                return Err(PruneError::bad_config(
                    "compaction.enabled must be a boolean",
                ))
            }
        }
        s.reserve_tokens = tokens_setting(v.get("reserveTokens"), "compaction.reserveTokens")?;
        s.keep_recent_tokens =
            tokens_setting(v.get("keepRecentTokens"), "compaction.keepRecentTokens")?;
        match v.get("modelOverrides") {
            None | Some(Json::Null) => {}
            Some(Json::Obj(models)) => {
                for (name, o) in models {
                    let name = String::from_utf8_lossy(name).into_owned();
                    let path = format!("compaction.modelOverrides[\"{name}\"]");
                    if !matches!(o, Json::Obj(_)) {
                        return Err(PruneError::bad_config(format!("{path} must be an object")));
                    }
                    let reserve =
                        tokens_setting(o.get("reserveTokens"), &format!("{path}.reserveTokens"))?;
                    let keep = tokens_setting(
                        o.get("keepRecentTokens"),
                        &format!("{path}.keepRecentTokens"),
                    )?;
                    s.overrides.push((name, reserve, keep));
                }
            }
            Some(_) => {
                return Err(PruneError::bad_config(
                    "compaction.modelOverrides must be an object",
                ))
            }
        }
        s.summary_chars = match v.get("summaryChars") {
            None | Some(Json::Null) => None,
            Some(Json::Num(n)) if *n > 0.0 => Some(*n),
            Some(_) => {
                return Err(PruneError::bad_config(
                    "compaction.summaryChars must be a number of characters above 0",
                ))
            }
        };
        Ok(s)
    }

    /// `reserveTokens` and `keepRecentTokens` for the model `provider/id`.
    pub fn for_model(&self, name: &str) -> (f64, f64) {
        let o = self.overrides.iter().find(|(n, _, _)| n == name);
        let reserve = o
            .and_then(|o| o.1)
            .or(self.reserve_tokens)
            .unwrap_or(DEFAULT_RESERVE_TOKENS);
        let keep = o
            .and_then(|o| o.2)
            .or(self.keep_recent_tokens)
            .unwrap_or(DEFAULT_KEEP_RECENT_TOKENS);
        (reserve, keep)
    }
}

/// What pi's compaction reads of one path entry's messages (as the entry
/// projects when it is not a compaction's head, without context edits).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EntryFacts {
    /// `estimateTokens` summed over its messages.
    pub tokens: f64,
    /// It holds a message pi may cut at (`isCutPointMessage`).
    pub cut_point: bool,
    /// It holds a message that starts a turn (`isTurnStartMessage`).
    pub turn_start: bool,
    /// It projects to a message at all.
    pub visible: bool,
    /// Its characters in `serializeConversation`'s text.
    pub serialized: f64,
    /// A user message: a prompt that starts a run.
    pub user: bool,
    /// An assistant message.
    pub assistant: bool,
    /// `JSON.stringify` characters of its messages (what it adds to a
    /// request).
    pub chars: f64,
}

/// A compaction the file recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordedCompaction {
    /// Its path position, and that of the first entry it keeps (its own
    /// next one when it keeps nothing before it).
    pub at: usize,
    pub first_kept: usize,
    pub tokens_before: f64,
    pub summary_chars: f64,
}

/// What the compaction rules read of a session's path, once per file.
#[derive(Debug, Default)]
pub struct PathFacts {
    pub entries: Vec<EntryFacts>,
    pub recorded: Vec<RecordedCompaction>,
    /// The size a made-up summary takes: the recorded ones' mean, else the
    /// default.
    pub summary_chars: f64,
}

/// A JS string's length (UTF-16 units) of a string value, else 0.
fn js_len(v: Option<&Json>) -> f64 {
    match v {
        Some(Json::Str(t)) => units(t).count() as f64,
        _ => 0.0,
    }
}

/// `estimateTextAndImageContentChars`, and the length of the text
/// `contentText(content, "")` joins: a string, or the text blocks of an
/// array.
fn content_chars(content: Option<&Json>) -> (f64, f64) {
    match content {
        Some(s @ Json::Str(_)) => {
            let n = js_len(Some(s));
            (n, n)
        }
        Some(Json::Arr(blocks)) => {
            let (mut chars, mut text) = (0.0, 0.0);
            for b in blocks {
                match b.get("type") {
                    Some(t) if t.is_str("text") => {
                        let n = js_len(b.get("text"));
                        chars += n;
                        text += n;
                    }
                    Some(t) if t.is_str("image") => chars += IMAGE_CHARS,
                    _ => {}
                }
            }
            (chars, text)
        }
        _ => (0.0, 0.0),
    }
}

/// `serializeConversation`'s `name(k=JSON.stringify(v), ...)` of a tool
/// call.
fn tool_call_chars(b: &Json) -> f64 {
    let args: Vec<f64> = match b.get("arguments") {
        Some(Json::Obj(members)) => members
            .iter()
            .map(|(k, v)| units(k).count() as f64 + 1.0 + utf16_len(&v.to_json()) as f64)
            .collect(),
        _ => Vec::new(),
    };
    js_len(b.get("name"))
        + 2.0
        + args.iter().sum::<f64>()
        + 2.0 * args.len().saturating_sub(1) as f64
}

/// pi's `estimateTokens` of one message, and its characters in
/// `serializeConversation`.
fn message_facts(m: &Json) -> EntryFacts {
    let role = |r: &str| m.get("role").is_some_and(|v| v.is_str(r));
    let mut f = EntryFacts {
        visible: true,
        ..EntryFacts::default()
    };
    // `serializeConversation`'s parts: `[User]: `, `[Assistant]: ` (text
    // blocks joined by a line break), `[Assistant tool calls]: ` (calls
    // joined by `; `), `[Tool result]: ` (cut at 2,000 characters, with a
    // marker); pi's other roles reach it as user text (`convertToLlm`).
    let chars = if role("user") || role("custom") {
        f.user = role("user");
        let (chars, text) = content_chars(m.get("content"));
        f.serialized = if text > 0.0 { 8.0 + text } else { 0.0 };
        chars
    } else if role("assistant") {
        f.assistant = true;
        let (mut chars, mut text, mut texts, mut calls) = (0.0, 0.0, 0usize, Vec::new());
        for b in m.get("content").and_then(Json::as_array).unwrap_or(&[]) {
            let ty = |t: &str| b.get("type").is_some_and(|v| v.is_str(t));
            if ty("text") {
                let n = js_len(b.get("text"));
                chars += n;
                text += n;
                texts += 1;
            } else if ty("thinking") {
                chars += js_len(b.get("thinking"));
            } else if ty("toolCall") {
                let args = b.get("arguments").map_or(0, |a| utf16_len(&a.to_json())) as f64;
                chars += js_len(b.get("name")) + args;
                calls.push(tool_call_chars(b));
            }
        }
        if texts > 0 {
            f.serialized += 13.0 + text + (texts - 1) as f64;
        }
        if !calls.is_empty() {
            let joined = calls.iter().sum::<f64>() + 2.0 * (calls.len() - 1) as f64;
            f.serialized += 24.0 + joined + if texts > 0 { 2.0 } else { 0.0 };
        }
        chars
    } else if role("toolResult") {
        let (chars, text) = content_chars(m.get("content"));
        if text > 0.0 {
            let cut = text - TOOL_RESULT_MAX_CHARS;
            let marker = if cut > 0.0 {
                34.0 + cut.to_string().len() as f64
            } else {
                0.0
            };
            f.serialized = 15.0 + text.min(TOOL_RESULT_MAX_CHARS) + marker;
        }
        chars
    } else if role("bashExecution") {
        let (command, output) = (js_len(m.get("command")), js_len(m.get("output")));
        // `bashExecutionToText`: the command in backticks, the output fenced
        // (or "(no output)").
        f.serialized = 8.0 + 7.0 + command + if output > 0.0 { 8.0 + output } else { 11.0 };
        command + output
    } else if role("branchSummary") || role("compactionSummary") {
        let chars = js_len(m.get("summary"));
        // The user text `convertToLlm` wraps a summary in.
        let wrapper = if role("branchSummary") { 107.0 } else { 115.0 };
        f.serialized = wrapper + chars;
        chars
    } else {
        0.0
    };
    f.tokens = (chars / 4.0).ceil();
    f.cut_point = [
        "user",
        "assistant",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
    ]
    .iter()
    .any(|r| role(r));
    f.turn_start = f.cut_point && !f.assistant;
    f
}

/// Reads the compaction facts of every entry of `path`.
pub fn path_facts(file: &SessionFile<'_>, path: &[u32], summary_chars: Option<f64>) -> PathFacts {
    let mut facts = PathFacts::default();
    for (at, &e) in path.iter().enumerate() {
        let entry = file.entry(e as usize);
        if entry.is("compaction") {
            let number = |k: &str| entry.get(k).and_then(|v| v.number()).unwrap_or(0.0);
            let summary = entry
                .get("summary")
                .and_then(|s| s.string())
                .map_or(0.0, |s| units(&s).count() as f64);
            let kept = entry.first_kept_entry_id();
            let first_kept = (0..at)
                .find(|&i| file.entry(path[i] as usize).id() == kept)
                .unwrap_or(at + 1);
            facts.recorded.push(RecordedCompaction {
                at,
                first_kept,
                tokens_before: number("tokensBefore"),
                summary_chars: summary,
            });
            facts.entries.push(EntryFacts::default());
            continue;
        }
        let mut f = EntryFacts::default();
        for m in project(entry, false, None).unwrap_or_default() {
            if m.system {
                continue;
            }
            f.chars += utf16_len(&m.json) as f64;
            let Ok(v) = parse_value(&m.json) else {
                continue;
            };
            let g = message_facts(&v);
            f.tokens += g.tokens;
            f.cut_point |= g.cut_point;
            f.turn_start |= g.turn_start;
            f.visible |= g.visible;
            f.serialized += g.serialized;
            f.user |= g.user;
            f.assistant |= g.assistant;
        }
        facts.entries.push(f);
    }
    let recorded: Vec<f64> = facts.recorded.iter().map(|c| c.summary_chars).collect();
    facts.summary_chars = summary_chars.unwrap_or(if recorded.is_empty() {
        DEFAULT_SUMMARY_CHARS
    } else {
        recorded.iter().sum::<f64>() / recorded.len() as f64
    });
    facts
}

/// Where pi cuts a history that runs from path position `start` up to
/// `end` (exclusive), keeping `keep` tokens (`findProjectedCutPoint`): the
/// first kept position, and the turn's start when the cut splits a turn.
/// None when nothing lies before the cut (pi makes no compaction).
pub fn cut_point(
    facts: &[EntryFacts],
    start: usize,
    end: usize,
    keep: f64,
) -> Option<(usize, Option<usize>)> {
    let cut_points: Vec<usize> = (start..end).filter(|&i| facts[i].cut_point).collect();
    let mut cut = *cut_points.first()?;
    let mut accumulated = 0.0;
    for i in (start..end).rev() {
        if facts[i].tokens == 0.0 {
            continue;
        }
        accumulated += facts[i].tokens;
        if accumulated >= keep {
            cut = cut_points
                .iter()
                .copied()
                .find(|&c| c >= i)
                .unwrap_or(*cut_points.last()?);
            break;
        }
    }
    // Entries that project nothing just before the cut stay with it.
    while cut > start && !facts[cut - 1].visible {
        cut -= 1;
    }
    let split = (!facts[cut].turn_start)
        .then(|| (start..=cut).rev().find(|&i| facts[i].turn_start))
        .flatten();
    let history_end = split.unwrap_or(cut);
    let summarized = (start..history_end).any(|i| facts[i].visible)
        || split.is_some_and(|s| (s..cut).any(|i| facts[i].visible));
    summarized.then_some((cut, split))
}

/// The requests of a compaction: the history's summary (its input: pi's
/// system prompt, the prompt and the conversation, with the previous
/// summary when there is one) and, when the cut splits a turn, the turn
/// prefix's; each the path entries it summarizes and its input characters.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequests {
    pub history: Option<(Range<usize>, f64)>,
    pub turn_prefix: Option<(Range<usize>, f64)>,
}

impl SummaryRequests {
    pub fn each(&self) -> impl Iterator<Item = &(Range<usize>, f64)> {
        self.history.iter().chain(&self.turn_prefix)
    }
}

/// The requests of a compaction summarizing `start..` up to the cut
/// (`cut`, `split`), with `previous` the previous summary's characters.
pub fn summary_requests(
    facts: &[EntryFacts],
    start: usize,
    (cut, split): (usize, Option<usize>),
    previous: Option<f64>,
) -> SummaryRequests {
    // Each entry's parts are joined with a blank line, and so are entries.
    let serialized = |r: std::ops::Range<usize>| -> f64 {
        let parts: Vec<f64> = r
            .filter_map(|i| Some(facts[i].serialized).filter(|&c| c > 0.0))
            .collect();
        parts.iter().sum::<f64>() + 2.0 * parts.len().saturating_sub(1) as f64
    };
    let history_end = split.unwrap_or(cut);
    let any = (start..history_end).any(|i| facts[i].visible);
    let history = (any || split.is_none()).then(|| {
        let prompt = match previous {
            Some(p) => UPDATE_PROMPT_CHARS + p,
            None => SUMMARY_PROMPT_CHARS,
        };
        let range = start..history_end;
        let chars = SYSTEM_PROMPT_CHARS + prompt + serialized(range.clone());
        (range, chars)
    });
    let turn_prefix = split.map(|s| {
        (
            s..cut,
            SYSTEM_PROMPT_CHARS + TURN_PREFIX_PROMPT_CHARS + serialized(s..cut),
        )
    });
    SummaryRequests {
        history,
        turn_prefix,
    }
}

/// A compaction a walk makes before a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Made {
    /// The file's compaction entry at this path position.
    File { at: usize },
    /// One the file does not have: once the first `after` path entries are
    /// applied, keeping from `first_kept`.
    Simulated {
        after: usize,
        first_kept: usize,
        tokens_before: f64,
    },
}

/// A compaction made, with what its summarization costs in characters.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    pub made: Made,
    pub requests: SummaryRequests,
    /// The summary's characters (each request answers one this size).
    pub summary_chars: f64,
}

/// What pi's check reads at one model call of a walk.
pub struct Check<'a> {
    pub facts: &'a PathFacts,
    pub settings: &'a CompactionSettings,
    /// The call's model (`provider/id`) and its context window.
    pub model: &'a str,
    pub window: f64,
    /// The path entries appended since the previous call.
    pub appended: std::ops::Range<usize>,
    /// The size of the context the previous answer recorded, as the walk
    /// sent it: its prompt's tokens and the answer's (None: no call yet).
    pub usage: Option<f64>,
    /// The replay's own count of the request this call would send without a
    /// compaction (the previous one's tokens and what was appended, at the
    /// calibration's tokens per character; None: no call yet). Past the
    /// window the provider refuses it, and pi, told so, compacts and sends
    /// it again (`_checkCompaction`, overflow): a compaction before it.
    pub next_tokens: Option<f64>,
    /// The walk is the policy the session was recorded under.
    pub recorded: bool,
}

/// One walk's compactions: where the next summary starts and the last
/// summary's size (a later summary updates it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Compactions {
    start: usize,
    previous_summary: Option<f64>,
}

impl Compactions {
    /// The compactions pi makes before the call `check` describes.
    pub fn decide(&self, check: &Check<'_>) -> Vec<Compaction> {
        let (reserve, keep) = check.settings.for_model(check.model);
        let threshold = check.window - reserve;
        let in_range = |c: &&RecordedCompaction| check.appended.contains(&c.at);
        let recorded: Vec<&RecordedCompaction> =
            check.facts.recorded.iter().filter(in_range).collect();
        let mut state = self.clone();
        let mut made = Vec::new();
        // The file's: all of them under the recorded policy; the ones
        // asked for (below the threshold) under any.
        for c in &recorded {
            if check.recorded || c.tokens_before <= threshold {
                made.push(state.file(check.facts, c));
            }
        }
        if check.recorded || !check.settings.enabled || !made.is_empty() {
            return made;
        }
        let Some(usage) = check.usage else {
            return made;
        };
        // A new prompt: pi checked before appending it. Otherwise, within a
        // run, the messages after the last answer count at pi's estimate.
        let entries = &check.facts.entries;
        let (at, trailing) = match check.appended.clone().find(|&i| entries[i].user) {
            Some(user) => (user, 0.0),
            None => {
                let from = check
                    .appended
                    .clone()
                    .rev()
                    .find(|&i| entries[i].assistant)
                    .map_or(check.appended.start, |a| a + 1);
                let tokens = (from..check.appended.end).map(|i| entries[i].tokens).sum();
                (check.appended.end, tokens)
            }
        };
        let tokens_before = usage + trailing;
        let overflow = check.next_tokens.is_some_and(|t| t > check.window);
        if tokens_before <= threshold && !overflow {
            return made;
        }
        // An overflow is found sending the request: everything appended
        // is in the history pi cuts.
        let at = if tokens_before <= threshold {
            check.appended.end
        } else {
            at
        };
        if let Some(c) = recorded.first() {
            made.push(state.file(check.facts, c));
            return made;
        }
        if let Some((cut, split)) = cut_point(entries, state.start, at, keep) {
            let summary_chars = check.facts.summary_chars;
            let requests =
                summary_requests(entries, state.start, (cut, split), state.previous_summary);
            made.push(Compaction {
                made: Made::Simulated {
                    after: at,
                    first_kept: cut,
                    tokens_before,
                },
                requests,
                summary_chars,
            });
        }
        made
    }

    /// The file's compaction `c`, made.
    fn file(&mut self, facts: &PathFacts, c: &RecordedCompaction) -> Compaction {
        let end = c.first_kept.min(c.at);
        let requests = summary_requests(
            &facts.entries,
            self.start.min(end),
            (end, None),
            self.previous_summary,
        );
        self.start = c.first_kept;
        self.previous_summary = Some(c.summary_chars);
        Compaction {
            made: Made::File { at: c.at },
            requests,
            summary_chars: c.summary_chars,
        }
    }

    /// Takes what `made` (from `decide`) changed.
    pub fn settle(&mut self, facts: &PathFacts, made: &[Compaction]) {
        for c in made {
            match c.made {
                Made::File { at } => {
                    if let Some(r) = facts.recorded.iter().find(|r| r.at == at) {
                        self.file(facts, r);
                    }
                }
                Made::Simulated { first_kept, .. } => {
                    self.start = first_kept;
                    self.previous_summary = Some(c.summary_chars);
                }
            }
        }
    }
}

/// The messages of path entries `range` as pi holds them (a compaction
/// request summarizes them), as one JSON array text.
pub fn messages_json(file: &SessionFile<'_>, path: &[u32], range: Range<usize>) -> Vec<u8> {
    let mut texts: Vec<Vec<u8>> = Vec::new();
    for &e in &path[range] {
        let entry = file.entry(e as usize);
        if entry.is("compaction") {
            continue;
        }
        for m in project(entry, false, None).unwrap_or_default() {
            if !m.system {
                texts.push(m.json.into_owned());
            }
        }
    }
    let mut out = Vec::new();
    crate::json::value::write_list(&mut out, b"[]", &texts, |out, t| out.extend_from_slice(t));
    out
}

/// The `compactionSummary` message of a compaction the file does not have:
/// its summary is a stand-in of `chars` characters (the replay cannot know
/// the words, only their size).
pub fn summary_message(chars: f64, tokens_before: f64, timestamp: Option<f64>) -> Vec<u8> {
    let label = format!(
        "[a summary of {} characters: pi's compaction made here]",
        chars as u64
    );
    let pad = (chars as usize).saturating_sub(label.len());
    let mut out = Vec::with_capacity(chars as usize + 96);
    crate::json::members::object(&mut out, |o| {
        o.str("role", "compactionSummary")
            .str("summary", &format!("{label}{}", " ".repeat(pad)))
            .num("tokensBefore", tokens_before.round())
            .opt_num("timestamp", timestamp);
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(t: &str) -> Json {
        parse_value(t.as_bytes()).unwrap()
    }

    /// pi's `estimateTokens` and the length of `serializeConversation([m])`
    /// (node, pi 1.6.0) on one message of each role.
    #[test]
    fn estimates_and_serializes_as_pi_does() {
        let cases = [
            (r#"{"role":"user","content":"hello there"}"#, 3.0, 19.0),
            (
                r#"{"role":"user","content":[{"type":"text","text":"ab"},{"type":"image","data":"x"}]}"#,
                1201.0,
                10.0,
            ),
            (
                r#"{"role":"assistant","content":[{"type":"thinking","thinking":"abcd"},{"type":"text","text":"héllo"},{"type":"toolCall","id":"c","name":"read","arguments":{"path":"a.txt"}}]}"#,
                8.0,
                62.0,
            ),
            (
                r#"{"role":"toolResult","content":[{"type":"text","text":"0123456789"}]}"#,
                3.0,
                25.0,
            ),
            (
                r#"{"role":"bashExecution","command":"ls","output":"a b"}"#,
                2.0,
                28.0,
            ),
            (
                r#"{"role":"compactionSummary","summary":"twelve chars"}"#,
                3.0,
                127.0,
            ),
            (
                r#"{"role":"branchSummary","summary":"twelve chars"}"#,
                3.0,
                119.0,
            ),
            (r#"{"role":"custom","content":"abc"}"#, 1.0, 11.0),
        ];
        for (m, tokens, serialized) in cases {
            let f = message_facts(&json(m));
            assert_eq!(f.tokens, tokens, "{m}");
            assert_eq!(f.serialized, serialized, "{m}");
        }
        // A tool result past 2,000 characters: cut, with pi's marker.
        let long = format!(
            r#"{{"role":"toolResult","content":[{{"type":"text","text":"{}"}}]}}"#,
            "x".repeat(2500)
        );
        assert_eq!(message_facts(&json(&long)).serialized, 15.0 + 2000.0 + 37.0);
    }

    #[test]
    fn settings_resolve_as_pi_resolves_them() {
        let s = CompactionSettings::from_json(Some(&json(
            r#"{"reserveTokens":1000,"modelOverrides":{"anthropic/claude-opus-5":{"keepRecentTokens":5}}}"#,
        )))
        .unwrap();
        assert!(s.enabled);
        assert_eq!(s.for_model("anthropic/claude-opus-5"), (1000.0, 5.0));
        assert_eq!(s.for_model("openai/gpt-5"), (1000.0, 20_000.0));
        assert_eq!(
            CompactionSettings::default().for_model("x/y"),
            (16_384.0, 20_000.0)
        );
        for bad in [
            r#"{"enabled":"yes"}"#,
            r#"{"reserveTokens":-1}"#,
            r#"{"keepRecentTokens":1.5}"#,
            r#"{"modelOverrides":{"a/b":3}}"#,
            r#"[]"#,
        ] {
            let e = CompactionSettings::from_json(Some(&json(bad))).unwrap_err();
            assert_eq!(e.code.as_str(), "ERR_CONDENSE_INVALID_CONFIG", "{bad}");
        }
    }

    #[test]
    fn cuts_where_the_recent_tokens_start() {
        let entry = |tokens: f64, user: bool| EntryFacts {
            tokens,
            cut_point: true,
            turn_start: user,
            visible: true,
            serialized: tokens * 4.0,
            user,
            assistant: !user,
            chars: tokens * 4.0,
        };
        let result = EntryFacts {
            cut_point: false,
            turn_start: false,
            user: false,
            assistant: false,
            ..entry(100.0, false)
        };
        // user, assistant, result, user, assistant, result
        let facts = [
            entry(50.0, true),
            entry(50.0, false),
            result,
            entry(50.0, true),
            entry(50.0, false),
            result,
        ];
        // Keeping 150 tokens: the walk back reaches entry 4 (100 + 50), the
        // cut is there and splits the turn that starts at 3.
        assert_eq!(cut_point(&facts, 0, 6, 150.0), Some((4, Some(3))));
        // Keeping 200: entry 3, a turn start.
        assert_eq!(cut_point(&facts, 0, 6, 200.0), Some((3, None)));
        // Keeping everything: nothing before the cut, no compaction.
        assert_eq!(cut_point(&facts, 0, 6, 10_000.0), None);
        let r = summary_requests(&facts, 0, (3, None), None);
        assert_eq!(
            r.history,
            Some((
                0..3,
                SYSTEM_PROMPT_CHARS + SUMMARY_PROMPT_CHARS + 200.0 + 200.0 + 400.0 + 4.0
            ))
        );
        assert_eq!(r.turn_prefix, None);
    }

    /// A path of user turns: user, assistant with a tool call, its result.
    fn turns(n: usize, result_tokens: f64) -> Vec<EntryFacts> {
        let message = |tokens: f64, user: bool, assistant: bool| EntryFacts {
            tokens,
            cut_point: user || assistant,
            turn_start: user,
            visible: true,
            serialized: tokens * 4.0,
            user,
            assistant,
            chars: tokens * 4.0,
        };
        (0..n)
            .flat_map(|_| {
                [
                    message(100.0, true, false),
                    message(50.0, false, true),
                    message(result_tokens, false, false),
                ]
            })
            .collect()
    }

    fn check<'a>(
        facts: &'a PathFacts,
        settings: &'a CompactionSettings,
        appended: Range<usize>,
        usage: Option<f64>,
        recorded: bool,
    ) -> Check<'a> {
        Check {
            facts,
            settings,
            model: "anthropic/claude-sonnet-4-5",
            window: 10_000.0,
            appended,
            usage,
            next_tokens: None,
            recorded,
        }
    }

    /// pi compacts before the call whose last answer recorded more than the
    /// window less the reserve, cutting where `keepRecentTokens` stay; not
    /// below it; never when compaction is off.
    #[test]
    fn decides_as_pi_checks() {
        let facts = PathFacts {
            entries: turns(20, 1000.0),
            recorded: Vec::new(),
            summary_chars: 4000.0,
        };
        let settings = CompactionSettings::from_json(Some(&json(
            r#"{"reserveTokens":2000,"keepRecentTokens":3000}"#,
        )))
        .unwrap();
        let state = Compactions::default();
        // A new prompt at 30 (entries 30..33 appended): checked before it.
        assert!(state
            .decide(&check(&facts, &settings, 30..33, Some(7_999.0), false))
            .is_empty());
        let made = state.decide(&check(&facts, &settings, 30..33, Some(8_001.0), false));
        // Keeping 3,000 tokens back from 30: results of 1,000 and turns of
        // 150 reach it at entry 24 (the user message of turn 8).
        assert_eq!(
            made[0].made,
            Made::Simulated {
                after: 30,
                first_kept: 24,
                tokens_before: 8_001.0
            }
        );
        let (range, chars) = made[0].requests.history.clone().unwrap();
        assert_eq!(range, 0..24);
        assert!(chars > SYSTEM_PROMPT_CHARS + SUMMARY_PROMPT_CHARS);
        // Within a run (no user message appended), the results after the
        // last answer count at pi's estimate: 7,000 + 1,000 passes.
        let within = state.decide(&check(&facts, &settings, 31..33, Some(7_500.0), false));
        assert!(matches!(within[0].made, Made::Simulated { after: 33, .. }));
        let off = CompactionSettings::from_json(Some(&json(r#"{"enabled":false}"#))).unwrap();
        assert!(state
            .decide(&check(&facts, &off, 30..33, Some(1e9), false))
            .is_empty());
        // A second compaction summarizes from the first one's kept entries,
        // with the first summary.
        let mut state = state;
        state.settle(&facts, &made);
        let again = state.decide(&check(&facts, &settings, 51..54, Some(9_000.0), false));
        let (range, _) = again[0].requests.history.clone().unwrap();
        assert_eq!(range.start, 24);
    }

    /// The file's compactions: under the recorded policy each one where the
    /// file made it; under another, one below the threshold (asked for) at
    /// once, one above it only where the policy's own check passes.
    #[test]
    fn the_files_compactions() {
        let mut entries = turns(10, 1000.0);
        entries[15] = EntryFacts::default();
        entries[25] = EntryFacts::default();
        let facts = PathFacts {
            entries,
            recorded: vec![
                RecordedCompaction {
                    at: 15,
                    first_kept: 12,
                    tokens_before: 500.0,
                    summary_chars: 900.0,
                },
                RecordedCompaction {
                    at: 25,
                    first_kept: 21,
                    tokens_before: 9_500.0,
                    summary_chars: 1_100.0,
                },
            ],
            summary_chars: 1_000.0,
        };
        let settings =
            CompactionSettings::from_json(Some(&json(r#"{"reserveTokens":2000}"#))).unwrap();
        let state = Compactions::default();
        let asked = state.decide(&check(&facts, &settings, 14..18, Some(100.0), false));
        assert_eq!(
            asked.iter().map(|c| c.made.clone()).collect::<Vec<_>>(),
            [Made::File { at: 15 }]
        );
        assert_eq!(asked[0].summary_chars, 900.0);
        assert!(state
            .decide(&check(&facts, &settings, 24..27, Some(100.0), false))
            .is_empty());
        assert_eq!(
            state.decide(&check(&facts, &settings, 24..27, Some(100.0), true))[0].made,
            Made::File { at: 25 }
        );
        let passed = state.decide(&check(&facts, &settings, 24..27, Some(8_500.0), false));
        assert_eq!(passed[0].made, Made::File { at: 25 });
    }
}
