'use strict';

// pi-ai's model catalog, for the replay's prices: read from the installed
// `@earendil-works/pi-ai` (its `dist/providers/data/<provider>.json`, the
// files pi-ai itself loads), never copied into this package. Each model
// becomes `{api, input, output, cacheRead, cacheWrite, tiers?, images,
// effort}` under `provider/id` (USD per million tokens), the shape
// src/cost/catalog.rs reads. Without pi-ai installed the replay prices
// every model at its documented defaults and names them in the report.

const fs = require('node:fs');
const path = require('node:path');

let cached;

function dataFolder() {
  // pi-ai's exports map hides its files from require.resolve: look in each
  // node_modules folder Node would search, and in pi's own copy.
  const roots = [];
  for (const dir of require.resolve.paths('@earendil-works/pi-ai') ?? []) {
    roots.push(path.join(dir, '@earendil-works', 'pi-ai'));
    roots.push(path.join(dir, '@earendil-works', 'pi-coding-agent', 'node_modules', '@earendil-works', 'pi-ai'));
  }
  for (const root of roots) {
    const dir = path.join(root, 'dist', 'providers', 'data');
    if (fs.existsSync(dir)) return dir;
  }
  return null;
}

/**
 * One pi-ai model object (a catalog file's, or pi's `ctx.model`) as the
 * catalog the native side reads: `{ "provider/id": entry }`, or `{}` when it
 * names no provider, id or cost.
 */
function catalogOf(m) {
  if (!m || typeof m.id !== 'string' || typeof m.provider !== 'string' || !m.cost) return {};
  return {
    [`${m.provider}/${m.id}`]: {
      api: m.api,
      input: m.cost.input,
      output: m.cost.output,
      cacheRead: m.cost.cacheRead,
      cacheWrite: m.cost.cacheWrite,
      ...(m.cost.tiers ? { tiers: m.cost.tiers } : {}),
      images: Array.isArray(m.input) ? m.input.includes('image') : true,
      effort: m.compat?.supportsMidConvoEffort === true,
      ...(typeof m.contextWindow === 'number' ? { contextWindow: m.contextWindow } : {}),
      // What pi's cache warmer reads (src/replay/warmer.rs): the cache
      // lifetimes, and whether a thinking request can be sent again.
      ...(m.promptCache && typeof m.promptCache === 'object' ? { promptCache: m.promptCache } : {}),
      reasoning: m.reasoning === true,
      adaptiveThinking: m.compat?.forceAdaptiveThinking === true,
    },
  };
}

/** The catalog object the native replay takes (empty when pi-ai is absent). */
function loadCatalog() {
  if (cached !== undefined) return cached;
  const out = {};
  const dir = dataFolder();
  if (dir !== null) {
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      let data;
      try {
        data = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
      } catch {
        continue;
      }
      for (const byId of Object.values(data)) {
        for (const m of Object.values(byId ?? {})) Object.assign(out, catalogOf(m));
      }
    }
  }
  cached = out;
  return out;
}

module.exports = { loadCatalog, catalogOf };
