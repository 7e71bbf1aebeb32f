//! Render config (SPEC 2.3), read with the reference's JS coercions: a
//! missing limit is `undefined` (NaN in comparisons), `"2"` is 2, `enabled`
//! is tested for truthiness.

use crate::error::{PruneError, Result};
use crate::glob::Glob;
use crate::index::{parse_owned, TextFlags};
use crate::value::{Key, Ty, Val, V};

#[derive(Default)]
pub struct Config {
    pub chain: Option<ChainConfig>,
    pub purge: Option<PurgeConfig>,
    pub thinking: Option<ThinkingConfig>,
    pub protection: Protection,
    /// ToNumber(recoveryGraceTurns); NaN when absent.
    pub recovery_grace_turns: f64,
    pub flags: TextFlags,
}

pub struct ChainConfig {
    pub strip_final_assistant_thinking: bool,
}

pub struct PurgeConfig {
    pub cooldown_turns: f64,
    pub min_arg_chars: f64,
}

pub struct ThinkingConfig {
    /// The raw `keepLastTurns` as ToNumber sees it (NaN when absent).
    pub keep_last_turns: f64,
}

#[derive(Default)]
pub struct Protection {
    tools: Vec<Val<'static>>,
    paths: Vec<Glob>,
}

/// ToNumber of an optional property: undefined is NaN.
fn number(v: Option<V<'_, '_>>) -> f64 {
    v.map_or(f64::NAN, |v| v.to_number())
}

fn enabled_section<'v>(root: V<'v, 'static>, name: &str) -> Option<V<'v, 'static>> {
    let section = root.get(name)?;
    section
        .get("enabled")
        .is_some_and(|e| e.truthy())
        .then_some(section)
}

impl Config {
    pub fn from_json(json: &[u8]) -> Result<Self> {
        let (root, flags) = parse_owned(json, "config")?;
        let mut config = Self::from_val(&root)?;
        config.flags = flags;
        Ok(config)
    }

    pub fn from_val(root: &Val<'static>) -> Result<Self> {
        let r = root.view();
        match r.ty() {
            Ty::Null => return Ok(Self::default()),
            Ty::Obj => {}
            _ => return Err(PruneError::bad_config("must be an object")),
        }
        Ok(Config {
            chain: enabled_section(r, "chainCompression").map(|s| ChainConfig {
                strip_final_assistant_thinking: s
                    .get("stripFinalAssistantThinking")
                    .is_some_and(|v| v.truthy()),
            }),
            purge: enabled_section(r, "errorPurge").map(|s| PurgeConfig {
                cooldown_turns: number(s.get("cooldownTurns")),
                min_arg_chars: number(s.get("minArgChars")),
            }),
            thinking: enabled_section(r, "thinkingStrip").map(|s| ThinkingConfig {
                keep_last_turns: number(s.get("keepLastTurns")),
            }),
            protection: Protection::from_section(r.get("protection"))?,
            recovery_grace_turns: number(r.get("recoveryGraceTurns")),
            flags: TextFlags::default(),
        })
    }
}

impl Protection {
    fn from_section(section: Option<V<'_, 'static>>) -> Result<Self> {
        let Some(s) = section.filter(|s| s.ty() != Ty::Null) else {
            return Ok(Self::default());
        };
        let list = |field: &str| -> Result<Vec<Val<'static>>> {
            match s.get(field) {
                None => Ok(Vec::new()),
                Some(v) if v.ty() == Ty::Null => Ok(Vec::new()),
                Some(V::O(Val::Arr(items))) => Ok(items.clone()),
                Some(_) => Err(PruneError::bad_config(format!(
                    "protection.{field} must be an array"
                ))),
            }
        };
        let tools = list("protectedTools")?;
        let mut paths = Vec::new();
        for (i, p) in list("protectedPaths")?.iter().enumerate() {
            match p.view().as_str() {
                Some(glob) => paths.push(Glob::new(glob)),
                None => {
                    return Err(PruneError::bad_config(format!(
                        "protection.protectedPaths[{i}] must be a string"
                    )))
                }
            }
        }
        Ok(Self { tools, paths })
    }

    /// SPEC 5: by tool name, else by `args.path` (backslashes as slashes)
    /// against the globs.
    pub fn protects(&self, tool_name: Option<V<'_, '_>>, args: Option<V<'_, '_>>) -> bool {
        let name = Key::of(tool_name);
        if self.tools.iter().any(|t| t.view().key() == name) {
            return true;
        }
        if self.paths.is_empty() {
            return false;
        }
        let Some(path) = args.and_then(|a| a.get("path")).and_then(|p| p.as_str()) else {
            return false;
        };
        let path = path.replace('\\', "/");
        self.paths.iter().any(|g| g.matches(&path))
    }
}
