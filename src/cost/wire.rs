//! The Anthropic request pi sends for one model call, block by block: what
//! a provider's prompt cache compares and bills. pi hands pi-ai its agent
//! messages; pi-coding-agent's `convertToLlm` turns the roles only pi knows
//! into user messages, pi-ai 1.6.0's `transformMessages` drops thinking of
//! another model and errored or aborted turns and answers orphaned tool
//! calls, and `convertMessages` (api/anthropic-messages.js) writes the wire
//! blocks: blank text and thinking dropped, consecutive tool results merged
//! into one user message, the cache marker on the last block of the last
//! message when that is a user message. `__test__/wire-payload.test.js`
//! holds this file against pi-ai's own payload (`onPayload`).
//!
//! Each pi message converts on its own ([`convert_message`]); the request
//! is then assembled over the sequence (`assemble.rs`), so a replay converts
//! a message once and reuses it while it stays in the context; `payload.rs`
//! writes the whole request for the test against pi-ai.

use std::borrow::Cow;

use xxhash_rust::xxh3::xxh3_64;

use crate::json::text::{escape_units, text_of, units};
use crate::json::{utf16_len, Json};

/// What pi-ai reads of the model that answers the call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallModel {
    pub provider: Box<[u8]>,
    pub api: Box<[u8]>,
    pub id: Box<[u8]>,
    /// `input` includes `"image"`.
    pub images: bool,
    /// `compat.supportsMidConvoEffort`: effort system messages are sent.
    pub effort: bool,
    /// `compat.allowEmptySignature`: unsigned thinking stays thinking.
    pub empty_signature: bool,
    /// Every answer counts as this model's (the replay's `model` option:
    /// the session as if this model had answered it), so its thinking is
    /// sent and its effort is the one it would have recorded.
    pub answers_own: bool,
}

impl CallModel {
    /// The model's key: a hash of `provider/id`, the one the replay's calls
    /// and pi's live gate both key a model by.
    pub fn key(&self) -> u64 {
        xxhash_rust::xxh3::xxh3_64(&[&self.provider[..], b"/", &self.id[..]].concat())
    }

    /// `provider/id`, as reports name the model.
    pub fn name(&self) -> String {
        format!(
            "{}/{}",
            String::from_utf8_lossy(&self.provider),
            String::from_utf8_lossy(&self.id)
        )
    }

    /// From a pi-ai model object (`{provider, api, id, input, compat}`).
    pub fn from_json(model: &Json) -> CallModel {
        let text = |k: &str| {
            model
                .get(k)
                .and_then(Json::as_text)
                .unwrap_or_default()
                .into()
        };
        let compat = |k: &str| {
            model
                .get("compat")
                .and_then(|c| c.get(k))
                .is_some_and(|v| matches!(v, Json::Bool(true)))
        };
        CallModel {
            provider: text("provider"),
            api: text("api"),
            id: text("id"),
            images: model
                .get("input")
                .and_then(Json::as_array)
                .is_none_or(|a| a.iter().any(|v| v.is_str("image"))),
            effort: compat("supportsMidConvoEffort"),
            empty_signature: compat("allowEmptySignature"),
            answers_own: false,
        }
    }
}

/// The kind of a wire block, as the cache lookback counts positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Text,
    Image,
    Thinking,
    RedactedThinking,
    ToolUse,
    ToolResult,
    /// An effort marker (`output_config`), a message of its own.
    Effort,
}

/// One converted pi message, before the sequence rules apply. `B` is a
/// block: its JSON (`Json`) for the payload, or its digest ([`Packed`]) for
/// the replay. Tool-call ids are compared by their XXH3 hash.
#[derive(Debug, Clone, PartialEq)]
pub enum Converted<B> {
    /// Nothing reaches the wire.
    Nothing,
    /// A user message (text or images: it opens a user turn). A string
    /// content is one text block with `string_content` set.
    User {
        blocks: Vec<B>,
        string_content: bool,
    },
    /// An assistant message's blocks; per tool call, its id and the
    /// `No result provided` block pi-ai answers it with when no result
    /// follows; its effort level for effort-managed models; the answer it
    /// is (its `timestamp`'s bits: what its thinking is bound to, see
    /// `request.rs` `Bindings`).
    Assistant {
        blocks: Vec<B>,
        tool_calls: Vec<(u64, B)>,
        errored: bool,
        effort: Option<Json>,
        produced: Option<u64>,
    },
    /// One `tool_result` block and the error images that follow the run.
    ToolResult { id: u64, block: B, images: Vec<B> },
}

/// A block as the cache sees it: its kind, XXH3-64 of its JSON text
/// (without `cache_control`) and that text's UTF-16 length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packed {
    pub kind: BlockKind,
    pub hash: u64,
    pub chars: u32,
}

/// Characters an image block counts as: Anthropic bills an image by its
/// pixels, about 1,600 tokens for a 1.15-megapixel one (4 chars a token).
pub const IMAGE_CHARS: u32 = 6_400;

impl Packed {
    pub fn of(block: &Json) -> Packed {
        let kind = match block.get("type").and_then(Json::as_text) {
            Some(b"image") => BlockKind::Image,
            Some(b"thinking") => BlockKind::Thinking,
            Some(b"redacted_thinking") => BlockKind::RedactedThinking,
            Some(b"tool_use") => BlockKind::ToolUse,
            Some(b"tool_result") => BlockKind::ToolResult,
            Some(_) => BlockKind::Text,
            None => BlockKind::Effort,
        };
        let text = block.to_json();
        Packed {
            kind,
            hash: xxh3_64(&text),
            chars: if kind == BlockKind::Image {
                IMAGE_CHARS
            } else {
                utf16_len(&text) as u32
            },
        }
    }
}

fn id_hash(id: &Json) -> u64 {
    xxh3_64(&id.to_json())
}

impl Converted<Json> {
    /// The same message with each block reduced to its digest.
    pub fn pack(&self) -> Converted<Packed> {
        let all = |b: &[Json]| b.iter().map(Packed::of).collect::<Vec<_>>();
        match self {
            Converted::Nothing => Converted::Nothing,
            Converted::User {
                blocks,
                string_content,
            } => Converted::User {
                blocks: all(blocks),
                string_content: *string_content,
            },
            Converted::Assistant {
                blocks,
                tool_calls,
                errored,
                effort,
                produced,
            } => Converted::Assistant {
                blocks: all(blocks),
                tool_calls: tool_calls
                    .iter()
                    .map(|(id, b)| (*id, Packed::of(b)))
                    .collect(),
                errored: *errored,
                effort: effort.clone(),
                produced: *produced,
            },
            Converted::ToolResult { id, block, images } => Converted::ToolResult {
                id: *id,
                block: Packed::of(block),
                images: all(images),
            },
        }
    }
}

const COMPACTION_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const COMPACTION_SUFFIX: &str = "\n</summary>";
const BRANCH_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const BRANCH_SUFFIX: &str = "</summary>";
const NO_RESULT: &str = "No result provided";
const IMAGE_PLACEHOLDER: &str = "(see attached image)";
const USER_IMAGE_OMITTED: &str = "(image omitted: model does not support images)";
const TOOL_IMAGE_OMITTED: &str = "(tool image omitted: model does not support images)";
const ERROR_IMAGE_PLACEHOLDER: &str = "(image attached after the tool results)";

pub(super) fn obj(fields: Vec<(&str, Json)>) -> Json {
    Json::Obj(
        fields
            .into_iter()
            .map(|(k, v)| (k.as_bytes().into(), v))
            .collect(),
    )
}

pub(super) fn s(text: &str) -> Json {
    Json::str(text)
}

/// Canonical text from literal parts and canonical texts.
enum Part<'a> {
    Lit(&'a str),
    Text(&'a [u8]),
}

fn concat(parts: &[Part<'_>]) -> Json {
    let mut out = Vec::new();
    for p in parts {
        match p {
            Part::Lit(l) => out.extend_from_slice(&text_of(l)),
            Part::Text(t) => out.extend_from_slice(t),
        }
    }
    Json::Str(out.into_boxed_slice())
}

/// JavaScript's `String.prototype.trim` white space and line terminators.
fn js_space(u: u16) -> bool {
    matches!(
        u,
        0x09..=0x0d | 0x20 | 0xa0 | 0x1680 | 0x2000..=0x200a | 0x2028 | 0x2029 | 0x202f | 0x205f
            | 0x3000 | 0xfeff
    )
}

/// `typeof v === "string" && v.trim().length === 0` is false for `v`.
fn blank(text: &[u8]) -> bool {
    units(text).all(js_space)
}

/// pi-ai's `sanitizeSurrogates`: lone surrogates removed.
fn sanitize(text: &[u8]) -> Json {
    if !text.windows(3).any(|w| w == b"\\ud" || w == b"\\uD") {
        return Json::Str(text.into());
    }
    let us: Vec<u16> = units(text).collect();
    let mut kept = Vec::with_capacity(us.len());
    let mut i = 0;
    while i < us.len() {
        let u = us[i];
        if (0xd800..0xdc00).contains(&u) {
            if us.get(i + 1).is_some_and(|n| (0xdc00..0xe000).contains(n)) {
                kept.push(u);
                kept.push(us[i + 1]);
                i += 2;
                continue;
            }
        } else if !(0xdc00..0xe000).contains(&u) {
            kept.push(u);
        }
        i += 1;
    }
    let mut out = Vec::new();
    escape_units(&mut out, &kept);
    Json::Str(out.into_boxed_slice())
}

fn text_field(v: Option<&Json>) -> &[u8] {
    v.and_then(Json::as_text).unwrap_or_default()
}

/// `String(v)` of a text field that may be absent (`"undefined"`).
fn js_text(v: Option<&Json>) -> Json {
    match v {
        Some(Json::Str(t)) => Json::Str(t.clone()),
        Some(other) => Json::Str(other.js_string().into_boxed_slice()),
        None => s("undefined"),
    }
}

fn image_block(b: &Json) -> Json {
    obj(vec![
        ("type", s("image")),
        (
            "source",
            obj(vec![
                ("type", s("base64")),
                ("media_type", b.get("mimeType").cloned().unwrap_or_default()),
                ("data", b.get("data").cloned().unwrap_or_default()),
            ]),
        ),
    ])
}

pub(super) fn is_type(b: &Json, t: &str) -> bool {
    b.get("type").is_some_and(|v| v.is_str(t))
}

/// Images replaced by one placeholder per run (pi-ai's
/// `replaceImagesWithPlaceholder`).
fn without_images(content: &[Json], placeholder: &str) -> Vec<Json> {
    let mut out = Vec::new();
    let mut after_placeholder = false;
    for b in content {
        if is_type(b, "image") {
            if !after_placeholder {
                out.push(obj(vec![("type", s("text")), ("text", s(placeholder))]));
            }
            after_placeholder = true;
            continue;
        }
        out.push(b.clone());
        after_placeholder = b.get("text").is_some_and(|t| t.is_str(placeholder));
    }
    out
}

/// A tool result's `content` on the wire (`convertContentBlocks`).
fn result_content(content: &[Json]) -> Json {
    if !content.iter().any(|c| is_type(c, "image")) {
        let mut out = Vec::new();
        for (i, c) in content.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b"\\n");
            }
            match c.get("text") {
                None | Some(Json::Null) => {}
                Some(t) => out.extend_from_slice(&t.js_string()),
            }
        }
        return sanitize(&out);
    }
    let mut blocks: Vec<Json> = content
        .iter()
        .map(|b| {
            if is_type(b, "text") {
                obj(vec![
                    ("type", s("text")),
                    ("text", sanitize(text_field(b.get("text")))),
                ])
            } else {
                image_block(b)
            }
        })
        .collect();
    if !blocks.iter().any(|b| is_type(b, "text")) {
        blocks.insert(
            0,
            obj(vec![("type", s("text")), ("text", s(IMAGE_PLACEHOLDER))]),
        );
    }
    Json::Arr(blocks)
}

/// A message's `content` blocks (none unless it is an array), borrowed.
pub(super) fn content_array(m: &Json) -> &[Json] {
    match m.get("content") {
        Some(Json::Arr(a)) => a,
        _ => &[],
    }
}

/// The user message's wire content (`None`: the message is dropped).
fn user_content(content: Option<&Json>, images: bool) -> Option<Json> {
    match content {
        Some(Json::Str(t)) => (!blank(t)).then(|| sanitize(t)),
        Some(Json::Arr(items)) => {
            let items: Cow<'_, [Json]> = if images {
                Cow::Borrowed(items)
            } else {
                Cow::Owned(without_images(items, USER_IMAGE_OMITTED))
            };
            let blocks: Vec<Json> = items
                .iter()
                .filter_map(|b| {
                    if is_type(b, "text") {
                        // Blocks are filtered after sanitizing (a string is
                        // checked before).
                        let t = sanitize(text_field(b.get("text")));
                        (!blank(t.as_text().unwrap_or_default()))
                            .then(|| obj(vec![("type", s("text")), ("text", t)]))
                    } else {
                        Some(image_block(b))
                    }
                })
                .collect();
            (!blocks.is_empty()).then_some(Json::Arr(blocks))
        }
        _ => None,
    }
}

/// pi's `bashExecutionToText`.
fn bash_text(m: &Json) -> Json {
    let command = js_text(m.get("command"));
    let mut parts = vec![
        Part::Lit("Ran `"),
        Part::Text(command.as_text().unwrap_or_default()),
        Part::Lit("`\n"),
    ];
    let output = m
        .get("output")
        .filter(|o| o.truthy())
        .map(|o| js_text(Some(o)));
    if let Some(o) = &output {
        parts.push(Part::Lit("```\n"));
        parts.push(Part::Text(o.as_text().unwrap_or_default()));
        parts.push(Part::Lit("\n```"));
    } else {
        parts.push(Part::Lit("(no output)"));
    }
    let code;
    if m.get("cancelled").is_some_and(Json::truthy) {
        parts.push(Part::Lit("\n\n(command cancelled)"));
    } else if let Some(c) = m
        .get("exitCode")
        .filter(|c| !c.is_null() && !matches!(c, Json::Num(n) if *n == 0.0))
    {
        code = c.js_string();
        parts.push(Part::Lit("\n\nCommand exited with code "));
        parts.push(Part::Text(&code));
    }
    let path;
    if m.get("truncated").is_some_and(Json::truthy) {
        if let Some(p) = m.get("fullOutputPath").filter(|p| p.truthy()) {
            path = p.js_string();
            parts.push(Part::Lit("\n\n[Output truncated. Full output: "));
            parts.push(Part::Text(&path));
            parts.push(Part::Lit("]"));
        }
    }
    concat(&parts)
}

/// pi-ai's `normalizeToolCallId` for Anthropic.
pub fn normalize_tool_call_id(id: &Json) -> Json {
    let Some(t) = id.as_text() else {
        return id.clone();
    };
    let us: Vec<u16> = units(t)
        .map(|u| {
            if u < 128 && ((u as u8).is_ascii_alphanumeric() || u == 0x5f || u == 0x2d) {
                u
            } else {
                0x5f
            }
        })
        .take(64)
        .collect();
    let mut out = Vec::new();
    escape_units(&mut out, &us);
    Json::Str(out.into_boxed_slice())
}

pub(super) fn same_model(m: &Json, model: &CallModel) -> bool {
    model.answers_own
        || text_field(m.get("provider")) == &*model.provider
            && text_field(m.get("api")) == &*model.api
            && text_field(m.get("model")) == &*model.id
}

const EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

fn assistant(m: &Json, model: &CallModel) -> Converted<Json> {
    let same = same_model(m, model);
    let errored = m
        .get("stopReason")
        .is_some_and(|r| r.is_str("error") || r.is_str("aborted"));
    let mut blocks = Vec::new();
    let mut tool_calls = Vec::new();
    for b in content_array(m) {
        let kind = b.get("type");
        if kind.is_some_and(|k| k.is_str("text")) {
            let t = text_field(b.get("text"));
            if !blank(t) {
                blocks.push(obj(vec![("type", s("text")), ("text", sanitize(t))]));
            }
        } else if kind.is_some_and(|k| k.is_str("thinking")) {
            if !same {
                continue;
            }
            let signature = b.get("thinkingSignature");
            let redacted = b.get("redacted").is_some_and(Json::truthy);
            let signed = signature.is_some_and(Json::truthy);
            // transformMessages: unsigned blank thinking goes.
            if !redacted
                && !signed
                && !b
                    .get("thinking")
                    .is_some_and(|t| t.truthy() && !blank(text_field(Some(t))))
            {
                continue;
            }
            if redacted {
                blocks.push(obj(vec![
                    ("type", s("redacted_thinking")),
                    ("data", signature.cloned().unwrap_or_default()),
                ]));
                continue;
            }
            let thinking = text_field(b.get("thinking"));
            let has_signature = signature.and_then(Json::as_text).is_some_and(|t| !blank(t));
            if blank(thinking) && !has_signature {
                continue;
            }
            if !has_signature {
                blocks.push(if model.empty_signature {
                    obj(vec![
                        ("type", s("thinking")),
                        ("thinking", sanitize(thinking)),
                        ("signature", s("")),
                    ])
                } else {
                    obj(vec![("type", s("text")), ("text", sanitize(thinking))])
                });
            } else {
                blocks.push(obj(vec![
                    ("type", s("thinking")),
                    ("thinking", sanitize(thinking)),
                    ("signature", signature.cloned().unwrap_or_default()),
                ]));
            }
        } else if kind.is_some_and(|k| k.is_str("toolCall")) {
            let raw = b.get("id").cloned().unwrap_or_default();
            let id = if same {
                raw
            } else {
                normalize_tool_call_id(&raw)
            };
            let name = b.get("name").cloned().unwrap_or_default();
            tool_calls.push((id_hash(&id), no_result(&id)));
            blocks.push(obj(vec![
                ("type", s("tool_use")),
                ("id", id),
                ("name", name),
                (
                    "input",
                    match b.get("arguments") {
                        None | Some(Json::Null) => Json::Obj(Vec::new()),
                        Some(a) => a.clone(),
                    },
                ),
            ]));
        }
    }
    let effort = if model.effort && model.answers_own {
        // The level pi-ai would have recorded: the answer's own, else the
        // request's (`high`).
        Some(
            m.get("providerThinkingLevel")
                .filter(|l| EFFORTS.iter().any(|e| l.is_str(e)))
                .cloned()
                .unwrap_or_else(|| Json::str("high")),
        )
    } else if model.effort
        && m.get("api").is_some_and(|a| a.is_str("anthropic-messages"))
        && text_field(m.get("provider")) == &*model.provider
    {
        m.get("providerThinkingLevel")
            .filter(|l| EFFORTS.iter().any(|e| l.is_str(e)))
            .cloned()
    } else {
        None
    };
    Converted::Assistant {
        blocks,
        tool_calls,
        errored,
        effort,
        produced: answer_key(m),
    }
}

/// The key of an answer: its `timestamp`'s bits (pi stamps each message
/// when its request starts; the replay's calls are timed by it too).
pub fn answer_key(m: &Json) -> Option<u64> {
    match m.get("timestamp") {
        Some(Json::Num(t)) if t.is_finite() => Some(t.to_bits()),
        _ => None,
    }
}

fn tool_result(m: &Json, model: &CallModel, normalize_id: bool) -> Converted<Json> {
    let mut content = Cow::Borrowed(content_array(m));
    if !model.images {
        content = Cow::Owned(without_images(&content, TOOL_IMAGE_OMITTED));
    }
    let raw = m.get("toolCallId").cloned().unwrap_or_default();
    let id = if normalize_id {
        normalize_tool_call_id(&raw)
    } else {
        raw
    };
    let mut images = Vec::new();
    let is_error = m.get("isError").is_some_and(Json::truthy);
    if is_error && content.iter().any(|b| is_type(b, "image")) {
        let caption = concat(&[
            Part::Lit("Images from the error result of tool call "),
            Part::Text(&id.js_string()),
            Part::Lit(" ("),
            Part::Text(&js_text(m.get("toolName")).js_string()),
            Part::Lit("):"),
        ]);
        images.push(obj(vec![("type", s("text")), ("text", caption)]));
        images.extend(
            content
                .iter()
                .filter(|b| is_type(b, "image"))
                .map(image_block),
        );
        content = Cow::Owned(without_images(&content, ERROR_IMAGE_PLACEHOLDER));
    }
    let mut fields = vec![
        ("type", s("tool_result")),
        ("tool_use_id", id.clone()),
        ("content", result_content(&content)),
    ];
    match m.get("isError") {
        None => {}
        Some(v) => fields.push(("is_error", v.clone())),
    }
    Converted::ToolResult {
        id: id_hash(&id),
        block: obj(fields),
        images,
    }
}

/// One pi message as the request would carry it. `normalize_id`: a tool
/// result answers a call whose id pi-ai normalized (another model's call).
pub fn convert_message(m: &Json, model: &CallModel, normalize_id: bool) -> Converted<Json> {
    let role = m.get("role");
    let is = |r: &str| role.is_some_and(|v| v.is_str(r));
    let user = |content: Option<&Json>| match user_content(content, model.images) {
        Some(Json::Arr(blocks)) => Converted::User {
            blocks,
            string_content: false,
        },
        Some(text) => Converted::User {
            blocks: vec![obj(vec![("type", s("text")), ("text", text)])],
            string_content: true,
        },
        None => Converted::Nothing,
    };
    if is("user") {
        match m.get("content") {
            None | Some(Json::Null) => Converted::Nothing,
            c => user(c),
        }
    } else if is("assistant") {
        assistant(m, model)
    } else if is("toolResult") {
        tool_result(m, model, normalize_id)
    } else if is("custom") {
        match m.get("content") {
            Some(Json::Str(t)) => user(Some(&Json::Arr(vec![obj(vec![
                ("type", s("text")),
                ("text", Json::Str(t.clone())),
            ])]))),
            None | Some(Json::Null) => Converted::Nothing,
            c => user(c),
        }
    } else if is("compactionSummary") || is("branchSummary") {
        let summary = js_text(m.get("summary"));
        let (p, q) = if is("compactionSummary") {
            (COMPACTION_PREFIX, COMPACTION_SUFFIX)
        } else {
            (BRANCH_PREFIX, BRANCH_SUFFIX)
        };
        let text = concat(&[
            Part::Lit(p),
            Part::Text(summary.as_text().unwrap_or_default()),
            Part::Lit(q),
        ]);
        user(Some(&Json::Arr(vec![obj(vec![
            ("type", s("text")),
            ("text", text),
        ])])))
    } else if is("bashExecution") {
        if m.get("excludeFromContext").is_some_and(Json::truthy) {
            Converted::Nothing
        } else {
            user(Some(&Json::Arr(vec![obj(vec![
                ("type", s("text")),
                ("text", bash_text(m)),
            ])])))
        }
    } else {
        Converted::Nothing
    }
}

pub(super) fn no_result(id: &Json) -> Json {
    obj(vec![
        ("type", s("tool_result")),
        ("tool_use_id", id.clone()),
        ("content", s(NO_RESULT)),
        ("is_error", Json::Bool(true)),
    ])
}

/// The system prompt text pi-ai sends (`getSystemMessageText` of the
/// leading system message), or None when there is none or it is empty.
pub fn system_text(first: &Json) -> Option<Json> {
    if !first.get("role").is_some_and(|r| r.is_str("system")) {
        return None;
    }
    let mut parts: Vec<Vec<u8>> = Vec::new();
    match first.get("content") {
        Some(Json::Str(t)) => parts.push(t.to_vec()),
        Some(Json::Arr(blocks)) => {
            let mut t = Vec::new();
            for (i, b) in blocks.iter().filter(|b| is_type(b, "text")).enumerate() {
                if i > 0 {
                    t.extend_from_slice(b"\\n");
                }
                t.extend_from_slice(&js_text(b.get("text")).js_string());
            }
            parts.push(t);
        }
        _ => parts.push(Vec::new()),
    }
    if let Some(Json::Obj(sections)) = first.get("sections") {
        for (_, v) in sections {
            if !v.is_null() {
                parts.push(v.js_string());
            }
        }
    }
    let mut out = Vec::new();
    for p in parts.iter().filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            out.extend_from_slice(b"\\n\\n");
        }
        out.extend_from_slice(p);
    }
    (!out.is_empty()).then(|| sanitize(&out))
}
