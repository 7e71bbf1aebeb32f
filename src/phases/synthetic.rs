//! What both dialects' chain phases share: the synthetic block that stands
//! for a compressed chain (SPEC 3, phase 3 step 4), the text of a tool
//! result it quotes as a protected output, JavaScript's iteration and Set
//! semantics over the entries' id lists. The JS oracle's copies are in
//! js/pure/rules.js (`protectedOutputText`, `syntheticMessage`,
//! `substituteBlockRefs`, `hasThinking`).

use super::log_index::LogIndex;
use super::put;
use super::stub::StubCache;
use super::text::write_scalar;
use super::Inputs;
use crate::error::{PruneError, Result};

use crate::json::parse_value;
use crate::json::value::{characters, write_joined, write_value};
use crate::json::Json;
use crate::record::{Content, ElementKind};
use crate::script::{Op, Slot};
use std::rc::Rc;

/// A synthetic text and the protected outputs it quotes.
type Quoting = (Vec<ProtectedOutput>, Rc<[u8]>);

/// What the chain phases keep between renders of the synthetic blocks:
/// each entry's head and whole text.
#[derive(Default)]
pub struct SyntheticCache {
    /// Each chain entry's synthetic block head (`synthetic_head`).
    heads: Vec<Option<Rc<[u8]>>>,
    /// Each chain entry's whole synthetic text, with the protected outputs
    /// it quotes (as message and stub text), to build it again only when
    /// they change.
    texts: Vec<Option<Quoting>>,
}

impl SyntheticCache {
    /// Forgets everything: the state or the config changed.
    pub fn clear(&mut self) {
        self.heads.clear();
        self.texts.clear();
    }

    /// Forgets what was built for the chain entries from `from` on.
    pub fn keep_entries(&mut self, from: usize) {
        self.heads.truncate(from);
        self.texts.truncate(from);
    }

    /// Forgets the texts quoting messages `from` and after (about to be
    /// re-sent): they are built again.
    pub fn truncate(&mut self, from: usize) {
        for quoting in &mut self.texts {
            if quoting
                .as_ref()
                .is_some_and(|(outputs, _)| outputs.iter().any(|o| o.input as usize >= from))
            {
                *quoting = None;
            }
        }
    }

    /// The synthetic block head of the `n`-th chain entry, once per
    /// generation (built only when asked: 2.9.1 builds accepted entries'
    /// only, and a bad entry throws only then).
    fn head(&mut self, inputs: &Inputs<'_>, n: usize) -> Result<Rc<[u8]>> {
        if let Some(Some(h)) = self.heads.get(n) {
            return Ok(h.clone());
        }
        let summary = inputs.state.entry_summary(n)?;
        let entries = inputs.state.chain_entries();
        let head: Rc<[u8]> = synthetic_head(inputs, entries[n], &summary)?.into();
        put(&mut self.heads, n, head.clone());
        Ok(head)
    }

    /// The synthetic text of the `n`-th chain entry quoting `outputs`,
    /// built again only when they differ from last time.
    pub fn text(
        &mut self,
        inputs: &Inputs<'_>,
        stubs: &StubCache,
        n: usize,
        outputs: &[ProtectedOutput],
    ) -> Result<Rc<[u8]>> {
        if let Some(Some((quoted, text))) = self.texts.get(n) {
            if quoted.as_slice() == outputs {
                return Ok(text.clone());
            }
        }
        let head = self.head(inputs, n)?;
        let text: Rc<[u8]> = synthetic_text(inputs, stubs, &head, outputs)?.into();
        put(&mut self.texts, n, (outputs.to_vec(), text.clone()));
        Ok(text)
    }
}

/// What both chain phases read and fill besides their own cache: the
/// synthetic texts, phase 1's stub texts they quote, the messages' index.
pub struct ChainCaches<'m> {
    pub synthetic: &'m mut SyntheticCache,
    pub stubs: &'m StubCache,
    pub log_index: &'m mut LogIndex,
}

impl ChainCaches<'_> {
    /// The synthetic text of the `n`-th chain entry quoting `outputs`.
    pub fn synthetic_text(
        &mut self,
        inputs: &Inputs<'_>,
        n: usize,
        outputs: &[ProtectedOutput],
    ) -> Result<Rc<[u8]>> {
        self.synthetic.text(inputs, self.stubs, n, outputs)
    }
}

/// One `<protected-output>`: the tool result it quotes, and its stub text
/// when phase 1 stubbed it (what phase 3 reads is phase 2's output).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtectedOutput {
    pub input: u32,
    pub stub: Option<u32>,
}

/// `extractToolResultText` of a quoted tool result after phase 2: its text
/// blocks' texts joined with a newline (a stub's is its stub text).
pub fn result_text(
    inputs: &Inputs<'_>,
    stubs: &StubCache,
    quoted: ProtectedOutput,
) -> Result<Vec<u8>> {
    if let Some(text) = quoted.stub {
        return Ok(stubs.text(text).to_vec());
    }
    let i = quoted.input as usize;
    let rec = &inputs.log.records[i];
    let mut out = Vec::new();
    if rec.content != Content::Array {
        return Ok(out);
    }
    let text = inputs.message_text(i);
    let mut first = true;
    for b in inputs.object_blocks(i) {
        let (_, b) = b?;
        if b.ty != crate::record::BlockType::Text {
            continue;
        }
        if !first {
            out.extend_from_slice(b"\\n");
        }
        first = false;
        if let Some(span) = b.text {
            let v = &text[span.range()];
            match v.first() {
                Some(b'"') => out.extend_from_slice(&v[1..v.len() - 1]),
                _ => {
                    let value = parse_value(v).unwrap_or_default();
                    write_joined(&mut out, std::iter::once(Some(&value)), b"");
                }
            }
        }
    }
    Ok(out)
}

/// An entry's blockId as a `Map` key: primitives by value, an array or
/// object by identity (each entry holds its own), absent as `undefined`.
#[derive(Debug, Clone)]
pub enum BlockKey {
    Undefined,
    Value(Json),
    Entry(usize),
}

impl BlockKey {
    /// The key of the `n`-th entry of `chainEntries()`.
    pub fn of(entry: &Json, n: usize) -> Self {
        match entry.get("blockId") {
            None => BlockKey::Undefined,
            Some(Json::Arr(_) | Json::Obj(_)) => BlockKey::Entry(n),
            Some(v) => BlockKey::Value(v.clone()),
        }
    }

    pub fn same(&self, other: &BlockKey) -> bool {
        match (self, other) {
            (BlockKey::Undefined, BlockKey::Undefined) => true,
            (BlockKey::Value(a), BlockKey::Value(b)) => crate::config::same_value_zero(a, b),
            (BlockKey::Entry(a), BlockKey::Entry(b)) => a == b,
            _ => false,
        }
    }
}

/// Protected outputs collected per blockId.
#[derive(Default)]
pub struct Pools(Vec<(BlockKey, Vec<ProtectedOutput>)>);

impl Pools {
    pub fn add(&mut self, key: &BlockKey, out: ProtectedOutput) {
        match self.0.iter_mut().find(|(k, _)| k.same(key)) {
            Some((_, list)) => list.push(out),
            None => self.0.push((key.clone(), vec![out])),
        }
    }

    pub fn get(&self, key: &BlockKey) -> &[ProtectedOutput] {
        self.0
            .iter()
            .find(|(k, _)| k.same(key))
            .map_or(&[], |(_, list)| list.as_slice())
    }
}

/// Whether a content array holds a thinking block.
pub fn has_thinking(blocks: &[crate::record::Block]) -> bool {
    blocks
        .iter()
        .any(|b| b.kind == ElementKind::Object && b.ty == crate::record::BlockType::Thinking)
}

/// `for (const x of value)`: an array's elements, a string's characters;
/// anything else throws in the reference.
pub fn iterate(value: Option<&Json>, what: &str) -> Result<Vec<Json>> {
    match value {
        Some(Json::Arr(items)) => Ok(items.clone()),
        Some(Json::Str(t)) => Ok(characters(t)),
        _ => Err(PruneError::bad_state(format!("{what} is not iterable"))),
    }
}

/// The start of an entry's synthetic block text (canonical), up to and
/// including its summary with the `{bN}` references substituted: what the
/// state alone decides, so a kept engine builds it once per state.
pub fn synthetic_head(inputs: &Inputs<'_>, entry: &Json, summary: &Json) -> Result<Vec<u8>> {
    let Json::Str(summary) = summary else {
        return Err(PruneError::bad_state(
            "a chain entry's summary is not a string (the reference calls a string method on it)",
        ));
    };
    let Some(Json::Arr(tool_refs)) = entry.get("toolRefs") else {
        return Err(PruneError::bad_state(
            "a chain entry's toolRefs is not an array (the reference joins it)",
        ));
    };
    let block_id = entry.get("blockId");
    let mut t = Vec::new();
    t.extend_from_slice(br#"<compressed-chain id=\""#);
    write_value(&mut t, block_id);
    t.extend_from_slice(br#"\" tools=\""#);
    write_joined(&mut t, tool_refs.iter().map(Some), b",");
    t.extend_from_slice(br#"\">\n"#);
    substitute_block_refs(inputs, &mut t, summary, block_id)?;
    Ok(t)
}

/// The synthetic block's whole text: its head and its protected outputs.
pub fn synthetic_text(
    inputs: &Inputs<'_>,
    stubs: &StubCache,
    head: &[u8],
    outputs: &[ProtectedOutput],
) -> Result<Vec<u8>> {
    let mut t = Vec::with_capacity(head.len() + 24);
    t.extend_from_slice(head);
    for &p in outputs {
        t.extend_from_slice(br#"\n\n<protected-output tool=\""#);
        write_scalar(
            &mut t,
            &inputs.log.records[p.input as usize].tool_name,
            &inputs.log.syms,
        );
        t.extend_from_slice(br#"\">\n"#);
        t.extend(result_text(inputs, stubs, p)?);
        t.extend_from_slice(br#"\n</protected-output>"#);
    }
    t.extend_from_slice(br#"\n</compressed-chain>"#);
    Ok(t)
}

/// One pass of `/\{b(\d+)\}/g` (ASCII digits): each reference to another
/// block with a truthy summary becomes that summary; substituted text is
/// not scanned again.
fn substitute_block_refs(
    inputs: &Inputs<'_>,
    out: &mut Vec<u8>,
    text: &[u8],
    self_block: Option<&Json>,
) -> Result<()> {
    let mut at = 0;
    let mut copied = 0;
    while let Some(off) = memchr::memchr(b'{', &text[at..]) {
        let start = at + off;
        let digits = text[start + 1..].strip_prefix(b"b").map_or(0, |rest| {
            rest.iter().take_while(|c| c.is_ascii_digit()).count()
        });
        let close = start + 2 + digits;
        if digits == 0 || text.get(close) != Some(&b'}') {
            at = start + 1;
            continue;
        }
        let id = &text[start + 1..close];
        let is_self = self_block.and_then(Json::as_text) == Some(id);
        let replacement = if is_self {
            None
        } else {
            inputs.state.block_lookup(id)?
        };
        if let Some(r) = replacement {
            out.extend_from_slice(&text[copied..start]);
            r.write_js_string(out);
            copied = close + 1;
        }
        at = close + 1;
    }
    out.extend_from_slice(&text[copied..]);
    Ok(())
}

/// The protected output a tool result slot gives.
pub fn protected_output(slot: &Slot) -> ProtectedOutput {
    ProtectedOutput {
        input: slot.input,
        stub: (slot.op == Op::Stub).then_some(slot.text),
    }
}
