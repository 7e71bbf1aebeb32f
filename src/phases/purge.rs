//! Phase 2: arguments of calls that failed long enough ago are replaced by a
//! marker that keeps their size.

use std::borrow::Cow;
use std::collections::HashMap;

use super::{has_role, owned_object, Stats};
use crate::config::PurgeConfig;
use crate::error::{PruneError, Result};
use crate::jsjson::utf16_len;
use crate::value::{Key, Ty, Val};

pub fn run(msgs: &mut [Val<'_>], cfg: &PurgeConfig, stats: &mut Stats) -> Result<bool> {
    // (message index, block index, JSON length of the arguments)
    let mut edits: Vec<(usize, usize, usize)> = Vec::new();
    {
        let mut errored_at: HashMap<Key<'_>, usize> = HashMap::new();
        let mut turn = 0usize;
        for m in msgs.iter() {
            let v = m.view();
            if has_role(v, "assistant") {
                turn += 1;
            } else if has_role(v, "toolResult")
                && v.get("isError").is_some_and(|e| e.ty() == Ty::Bool(true))
            {
                errored_at.insert(Key::of(v.get("toolCallId")), turn);
            }
        }
        if errored_at.is_empty() {
            return Ok(false);
        }
        let current = turn;
        for (i, m) in msgs.iter().enumerate() {
            let v = m.view();
            if !has_role(v, "assistant") {
                continue;
            }
            let content = v.get("content");
            if content.map(|c| c.ty()) != Some(Ty::Arr) {
                return Err(PruneError::bad_message(
                    i,
                    "content",
                    "is not an array (assistant content is mapped once any call failed)",
                ));
            }
            for (j, block) in content.into_iter().flat_map(|c| c.elements()).enumerate() {
                if block.ty() == Ty::Null {
                    return Err(PruneError::bad_message(
                        i,
                        &format!("content[{j}]"),
                        "is null",
                    ));
                }
                if !block.get("type").is_some_and(|t| t.is_str("toolCall")) {
                    continue;
                }
                let Some(&at) = errored_at.get(&Key::of(block.get("id"))) else {
                    continue;
                };
                if ((current - at) as f64) < cfg.cooldown_turns {
                    continue;
                }
                let Some(args) = block.get("arguments") else {
                    return Err(PruneError::bad_message(
                        i,
                        &format!("content[{j}].arguments"),
                        "is missing on a failed call past its cooldown",
                    ));
                };
                let len = utf16_len(&args.to_json());
                if (len as f64) < cfg.min_arg_chars {
                    continue;
                }
                edits.push((i, j, len));
            }
        }
    }
    for &(i, j, len) in &edits {
        let entries = owned_object(&mut msgs[i]);
        let Some((_, content)) = entries.iter_mut().find(|(k, _)| k == "content") else {
            continue;
        };
        if let Val::Raw(r) = *content {
            *content = Val::Arr(r.elements().map(Val::Raw).collect());
        }
        let Val::Arr(blocks) = content else { continue };
        let block = owned_object(&mut blocks[j]);
        let marker = format!("<purged-errored-args size=\"{len}\"/>");
        Val::set(
            block,
            "arguments",
            Val::Obj(vec![(Cow::Borrowed("_purged"), Val::str(marker))]),
        );
        stats.purged_args += 1;
    }
    Ok(!edits.is_empty())
}
