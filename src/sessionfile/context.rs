//! The messages pi hands a `context` handler (A.7, A.8) at every position of
//! a path, advanced one entry at a time: a replay asks for them at every
//! model call, so nothing is rebuilt or copied per call. Messages live once
//! in a table (each is its JSON.stringify text, borrowed from the file where
//! possible); the view is a list of indices into it. Appending an entry
//! appends its messages; only a compaction or a context edit rebuilds the
//! list, from cached projections, so its unchanged messages keep their ids.
//! `take_changed_from` tells the first view index that changed since it was
//! last asked, which is where an incremental renderer must resync.

use std::ops::Range;

use super::error::Result;
use super::file::{Entry, SessionFile};
use super::key::JsKey;
use super::project::{missing_message, project, Projected};
use crate::hash::HashMap;
use crate::json::value::write_list;

/// The handler view along one path.
pub struct ContextView<'s> {
    file: &'s SessionFile<'s>,
    path: Vec<u32>,
    /// Path entries applied so far (the view is at `path[applied - 1]`).
    applied: usize,
    /// The latest compaction applied.
    compaction: Option<CompactionInForce>,
    /// Which compactions apply: the file's (None), or a plan's.
    plan: Option<Plan>,
    /// Context edits in force: target id to the edit's entry index.
    edits: HashMap<JsKey<'s>, u32>,
    table: Vec<Projected<'s>>,
    cache: HashMap<(u32, Option<u32>, bool), Range<u32>>,
    view: Vec<u32>,
    changed_from: usize,
}

/// A compaction in force: the file's entry at a path position, or one a
/// plan made (its index in the plan).
#[derive(Debug, Clone, Copy, PartialEq)]
enum CompactionInForce {
    File(usize),
    Made(usize),
}

/// The compactions a view applies when it follows a plan (a replayed
/// policy compacts where its own context says, not where the file did):
/// the file's compaction entries it makes, by path position, and those it
/// makes where the file has none.
#[derive(Debug, Default)]
struct Plan {
    file: Vec<usize>,
    made: Vec<MadeCompaction>,
}

/// A compaction a plan makes where the file has none: applied once the
/// first `after` path entries are, keeping from path position
/// `first_kept`, with its `compactionSummary` message.
#[derive(Debug)]
struct MadeCompaction {
    after: usize,
    first_kept: usize,
    head: u32,
}

impl<'s> ContextView<'s> {
    /// A view before the first entry of `path` (entry indices, root first).
    pub fn new(file: &'s SessionFile<'s>, path: &[u32]) -> Self {
        ContextView {
            file,
            path: path.to_vec(),
            applied: 0,
            compaction: None,
            plan: None,
            edits: HashMap::default(),
            table: Vec::new(),
            cache: HashMap::default(),
            view: Vec::new(),
            changed_from: 0,
        }
    }

    /// The handler view: indices into [`Self::message`].
    pub fn messages(&self) -> &[u32] {
        &self.view
    }

    pub fn message(&self, id: u32) -> &Projected<'s> {
        &self.table[id as usize]
    }

    /// The first view index that differs from the view when this was last
    /// called (the view's length when nothing changed).
    pub fn take_changed_from(&mut self) -> usize {
        let from = self.changed_from.min(self.view.len());
        self.changed_from = self.view.len();
        from
    }

    /// A view that applies only the compactions it is told to make
    /// (`make_file_compaction`, `make_compaction`), not the file's.
    pub fn planned(file: &'s SessionFile<'s>, path: &[u32]) -> Self {
        ContextView {
            plan: Some(Plan::default()),
            ..ContextView::new(file, path)
        }
    }

    /// Path entries applied so far.
    pub fn applied(&self) -> usize {
        self.applied
    }

    /// A planned view makes the file's compaction entry at path position
    /// `at` (not applied yet) when it gets there.
    pub fn make_file_compaction(&mut self, at: usize) {
        if let Some(plan) = &mut self.plan {
            plan.file.push(at);
        }
    }

    /// A planned view makes a compaction once the first `after` path entries
    /// are applied (now, when they are), keeping from path position
    /// `first_kept`, its summary message the JSON text `summary`.
    pub fn make_compaction(
        &mut self,
        after: usize,
        first_kept: usize,
        summary: Vec<u8>,
    ) -> Result<()> {
        let Some(plan) = &mut self.plan else {
            return Ok(());
        };
        let entry = self.path[after.saturating_sub(1).min(self.path.len() - 1)];
        let head = self.table.len() as u32;
        self.table.push(Projected {
            json: summary.into(),
            entry,
            system: false,
        });
        plan.made.push(MadeCompaction {
            after,
            first_kept,
            head,
        });
        if after == self.applied {
            self.make_due()?;
        }
        Ok(())
    }

    /// Moves the view to the leaf `path[position]`. Going back rebuilds from
    /// the root (a replay only moves forward).
    pub fn seek(&mut self, position: usize) -> Result<()> {
        if position + 1 < self.applied {
            self.applied = 0;
            self.compaction = None;
            self.edits.clear();
            let old = std::mem::take(&mut self.view);
            self.changed_from = 0;
            while self.applied <= position {
                self.step()?;
            }
            self.make_due()?;
            self.changed_from = common_prefix(&old, &self.view);
            return Ok(());
        }
        while self.applied <= position && self.applied < self.path.len() {
            self.step()?;
        }
        self.make_due()
    }

    /// Makes the planned compaction due once the entries applied so far
    /// are, unless it is the one in force.
    fn make_due(&mut self) -> Result<()> {
        match self.made_at(self.applied) {
            Some(m) if self.compaction != Some(CompactionInForce::Made(m)) => {
                self.compaction = Some(CompactionInForce::Made(m));
                self.rebuild()
            }
            _ => Ok(()),
        }
    }

    /// The planned compaction made once `applied` entries are, if any.
    fn made_at(&self, applied: usize) -> Option<usize> {
        let made = &self.plan.as_ref()?.made;
        made.iter().rposition(|m| m.after == applied)
    }

    /// Applies every entry of the path.
    pub fn finish(&mut self) -> Result<()> {
        match self.path.len() {
            0 => Ok(()),
            n => self.seek(n - 1),
        }
    }

    fn entry_at(&self, position: usize) -> Entry<'s> {
        self.file.entry(self.path[position] as usize)
    }

    /// Applies the next path entry.
    fn step(&mut self) -> Result<()> {
        let position = self.applied;
        self.make_due()?;
        let entry = self.entry_at(position);
        self.applied += 1;
        // pi reads every path message's role for the settings (A.7 step 1).
        if entry.is("message") && entry.message().is_none_or(|m| m.is_null()) {
            return Err(missing_message(&entry));
        }
        if entry.is("compaction") {
            let made = match &self.plan {
                None => true,
                Some(plan) => plan.file.contains(&position),
            };
            if !made {
                return Ok(());
            }
            self.compaction = Some(CompactionInForce::File(position));
            return self.rebuild();
        }
        if entry.is("context_edit") {
            return self.rebuild();
        }
        let edit = if self.edits.is_empty() {
            None
        } else {
            self.edits.get(&entry.id()).copied()
        };
        let ids = self.projection(entry, false, edit)?;
        let before = self.view.len();
        self.push_visible(ids);
        if self.view.len() > before {
            self.changed_from = self.changed_from.min(before);
        }
        Ok(())
    }

    fn push_visible(&mut self, ids: Range<u32>) {
        let table = &self.table;
        self.view
            .extend(ids.filter(|&id| !table[id as usize].system));
    }

    /// The cached messages of an entry.
    fn projection(
        &mut self,
        entry: Entry<'s>,
        head: bool,
        edit: Option<u32>,
    ) -> Result<Range<u32>> {
        let key = (entry.index, edit, head);
        if let Some(r) = self.cache.get(&key) {
            return Ok(r.clone());
        }
        let edit_entry = edit.map(|e| self.file.entry(e as usize));
        let messages = project(entry, head, edit_entry)?;
        let start = self.table.len() as u32;
        self.table.extend(messages);
        let range = start..self.table.len() as u32;
        self.cache.insert(key, range.clone());
        Ok(range)
    }

    /// The selection of A.7 step 2 over the applied prefix, as path
    /// positions (a file compaction's entry first; a made one's head is not
    /// an entry).
    fn selection(&self) -> Vec<usize> {
        let (head, from, after) = match self.compaction {
            None => return (0..self.applied).collect(),
            Some(CompactionInForce::File(c)) => {
                let first_kept = self.entry_at(c).first_kept_entry_id();
                let from = (0..c).find(|&i| {
                    self.entry_at(i).id() == first_kept && !matches!(first_kept, JsKey::Object(_))
                });
                (Some(c), from.map(|f| f..c), c + 1)
            }
            Some(CompactionInForce::Made(m)) => {
                let made = &self.plan.as_ref().expect("made by a plan").made[m];
                (None, Some(made.first_kept..made.after), made.after)
            }
        };
        let mut selected: Vec<usize> = head.into_iter().collect();
        for i in from.unwrap_or(0..0) {
            let e = self.entry_at(i);
            if !(e.is("message") && e.message_role_is("system")) {
                selected.push(i);
            }
        }
        selected.extend(after..self.applied);
        selected
    }

    fn rebuild(&mut self) -> Result<()> {
        let selected = self.selection();
        self.edits.clear();
        for &i in &selected {
            let e = self.entry_at(i);
            if e.is("context_edit") {
                let target = JsKey::of(e.get("targetId"));
                self.edits.insert(target, e.index);
            }
        }
        let old = std::mem::take(&mut self.view);
        if let Some(CompactionInForce::Made(m)) = self.compaction {
            let head = self.plan.as_ref().expect("made by a plan").made[m].head;
            self.view.push(head);
        }
        let file_head = matches!(self.compaction, Some(CompactionInForce::File(_)));
        for (k, &i) in selected.iter().enumerate() {
            let e = self.entry_at(i);
            let head = k == 0 && file_head;
            if e.is("compaction") && !head {
                continue;
            }
            let edit = self.edits.get(&e.id()).copied();
            let ids = self.projection(e, head, edit)?;
            self.push_visible(ids);
        }
        self.changed_from = self.changed_from.min(common_prefix(&old, &self.view));
        Ok(())
    }

    /// The view as one JSON array text.
    pub fn to_json(&self) -> Vec<u8> {
        let total: usize = self
            .view
            .iter()
            .map(|&id| self.table[id as usize].json.len() + 1)
            .sum();
        let mut out = Vec::with_capacity(total + 2);
        write_list(&mut out, b"[]", &self.view, |out, &id| {
            out.extend_from_slice(&self.table[id as usize].json)
        });
        out
    }
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessionfile::condense::{state_json, CondenseState, Dialect};
    use crate::sessionfile::path::{path_to, Leaf};

    fn texts(view: &ContextView<'_>) -> Vec<Vec<u8>> {
        view.messages()
            .iter()
            .map(|&id| view.message(id).json.to_vec())
            .collect()
    }

    /// At every position of the sample's path, the view advanced entry by
    /// entry equals a view built from scratch there, `take_changed_from`
    /// never claims a changed message is unchanged, and the state advanced
    /// entry by entry equals a rebuild over the branch up to there.
    #[test]
    fn incremental_equals_fresh_at_every_position() {
        for bytes in [
            &include_bytes!("../../sample/session.jsonl")[..],
            &include_bytes!("../../__test__/fixtures/sessionfile/flushes.jsonl")[..],
        ] {
            let file = SessionFile::parse(bytes).unwrap();
            let path = path_to(&file, &Leaf::Active).unwrap();
            let mut view = ContextView::new(&file, &path.entries);
            let mut state = CondenseState::new(Dialect::V2_9);
            let mut before: Vec<Vec<u8>> = Vec::new();
            let mut compactions = 0;
            for p in 0..path.entries.len() {
                view.seek(p).unwrap();
                let now = texts(&view);
                let from = view.take_changed_from();
                assert!(
                    before.iter().zip(&now).take(from).all(|(a, b)| a == b),
                    "position {p}"
                );
                let mut fresh = ContextView::new(&file, &path.entries);
                fresh.seek(p).unwrap();
                assert_eq!(now, texts(&fresh), "position {p}");
                let version = state.version();
                let entry = file.entry(path.entries[p] as usize);
                state.apply(entry).unwrap();
                let mut rebuilt = CondenseState::new(Dialect::V2_9);
                for &e in &path.entries[..=p] {
                    rebuilt.apply(file.entry(e as usize)).unwrap();
                }
                assert_eq!(state_json(&state), state_json(&rebuilt), "position {p}");
                if entry.custom_type_is("context-prune-index") {
                    assert!(state.version() > version);
                }
                compactions += usize::from(entry.is("compaction"));
                before = now;
            }
            // Going back rebuilds from the root.
            view.seek(0).unwrap();
            let mut fresh = ContextView::new(&file, &path.entries);
            fresh.seek(0).unwrap();
            assert_eq!(texts(&view), texts(&fresh));
            assert!(compactions <= 1);
        }
    }

    #[test]
    fn compaction_keeps_from_first_kept_and_edits_apply() {
        let lines = [
            r#"{"type":"session","version":3,"id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"user","content":"one","timestamp":1}}"#,
            r#"{"type":"message","id":"sys","parentId":"a","timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"system","content":"p","timestamp":1}}"#,
            r#"{"type":"message","id":"b","parentId":"sys","timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"two"}],"timestamp":2}}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"user","content":"three","timestamp":3}}"#,
            r#"{"type":"compaction","id":"k","parentId":"c","timestamp":"2024-01-01T00:00:01.000Z","summary":"S","firstKeptEntryId":"sys","tokensBefore":9}"#,
            r#"{"type":"context_edit","id":"e","parentId":"k","timestamp":"2024-01-01T00:00:02.000Z","targetId":"b","replacement":{"content":"edited"}}"#,
        ];
        let file = SessionFile::parse(lines.join("\n").into_bytes()).unwrap();
        let path = path_to(&file, &Leaf::Active).unwrap();
        let mut view = ContextView::new(&file, &path.entries);
        view.seek(3).unwrap();
        assert_eq!(view.messages().len(), 3);
        view.take_changed_from();
        // The compaction replaces the first message; the edit the second.
        view.seek(4).unwrap();
        assert_eq!(view.take_changed_from(), 0);
        view.finish().unwrap();
        assert_eq!(view.take_changed_from(), 1);
        let got: Vec<String> = texts(&view)
            .into_iter()
            .map(|t| String::from_utf8(t).unwrap())
            .collect();
        // node: buildSessionContext at "e", system messages removed.
        assert_eq!(
            got,
            [
                r#"{"role":"compactionSummary","summary":"S","tokensBefore":9,"timestamp":1704067201000}"#,
                r#"{"role":"assistant","content":[{"type":"text","text":"edited"}],"timestamp":2}"#,
                r#"{"role":"user","content":"three","timestamp":3}"#,
            ]
        );
    }

    /// A planned view makes a compaction where the file has none as pi
    /// would have (the same selection as the file's entry there), leaves
    /// out the file's compactions it does not make, and makes those it is
    /// told to.
    #[test]
    fn a_planned_view_makes_its_own_compactions() {
        let base = [
            r#"{"type":"session","version":3,"id":"s"}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"user","content":"one","timestamp":1}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"two"}],"timestamp":2}}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"2024-01-01T00:00:00.000Z","message":{"role":"user","content":"three","timestamp":3}}"#,
        ];
        let compaction = r#"{"type":"compaction","id":"k","parentId":"c","timestamp":"2024-01-01T00:00:01.000Z","summary":"S","firstKeptEntryId":"b","tokensBefore":9}"#;
        let after = r#"{"type":"message","id":"d","parentId":"k","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"four"}],"timestamp":4}}"#;
        let with: Vec<&str> = base.iter().copied().chain([compaction, after]).collect();
        let with = SessionFile::parse(with.join("\n").into_bytes()).unwrap();
        let with_path = path_to(&with, &Leaf::Active).unwrap();
        let mut recorded = ContextView::new(&with, &with_path.entries);
        recorded.finish().unwrap();
        let want = texts(&recorded);
        assert_eq!(want.len(), 4, "the summary, b, c, then d");

        // The same session without the entry: made at the same place.
        let reparented = after.replace("\"k\"", "\"c\"");
        let without: Vec<&str> = base.iter().copied().chain([reparented.as_str()]).collect();
        let without = SessionFile::parse(without.join("\n").into_bytes()).unwrap();
        let path = path_to(&without, &Leaf::Active).unwrap();
        let mut planned = ContextView::planned(&without, &path.entries);
        planned.seek(2).unwrap();
        planned.take_changed_from();
        planned.make_compaction(3, 1, want[0].clone()).unwrap();
        assert_eq!(planned.take_changed_from(), 0, "the summary comes first");
        planned.finish().unwrap();
        assert_eq!(texts(&planned), want);

        // The file's entry, not made: the view goes on as if it were not there.
        let mut skipped = ContextView::planned(&with, &with_path.entries);
        skipped.finish().unwrap();
        let skipped = texts(&skipped);
        assert_eq!(skipped.len(), 4);
        assert_eq!(
            skipped[0],
            br#"{"role":"user","content":"one","timestamp":1}"#
        );
        assert_eq!(skipped[1..], want[1..]);
        let mut made = ContextView::planned(&with, &with_path.entries);
        made.make_file_compaction(3);
        made.finish().unwrap();
        assert_eq!(texts(&made), want);
    }
}
