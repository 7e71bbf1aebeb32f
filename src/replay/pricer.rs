//! One policy's calls priced, under either cache model, through one bill
//! (`bill.rs`). Per call the pricer takes the render's output digests and
//! hands back a [`Priced`]: what the cache read and wrote, the call's class
//! and cause, and its USD. Under the provider model the output becomes the
//! wire request (`requests.rs`) and goes through the model's cache
//! (`cache.rs`); pi's cache warms since the previous call (`warmer.rs`,
//! simulated for the policy's own requests) re-send that call's request
//! first. Under the prefix rule (`prefix.rs`) the output's
//! unchanged prefix is read. Both feed the same class rule, the same
//! cause decision (`cause.rs`) and the same sums.
//!
//! [`Pricer::quote`] answers what sending a request would cost on a call's
//! model given the cache as it stands, changing nothing; [`Pricer::gate`]
//! quotes the gate's two candidates with it (`gate.rs`), in tokens per
//! character fitted on the answers before the call (`Rolling`, as pi's
//! live gate fits them), while the bill uses the whole file's fit.

use super::calls::CallMeta;
use super::cause::{decide, Change, Rewrite, Seen};
use super::compaction::Compaction;
use super::requests::{Conversions, Draft, Requests};
use super::warmer::{WarmRun, WarmingMode};
use crate::cost::bill::{
    classify, price_uncached, BillTotals, CacheModel, CallBill, CallClass, Reads, Tariff,
};
use crate::cost::cache::{Cache, Outcome};
use crate::cost::calibration::{Calibration, Rolling, SizePoint};
use crate::cost::catalog::{rules_for, Catalog, Family, Rules, DEFAULT_CONTEXT_WINDOW};
use crate::cost::digest::Digest;
use crate::cost::kept::MessageValues;
use crate::cost::prefix::{PrefixCall, PrefixRule, PrefixSums};
use crate::cost::request::{Preamble, Request, Update};
use crate::error::Result;
use crate::gate::rule::{warm_inputs, Carried, GateInputs, Quoted};
use crate::hash::HashMap;

/// One priced call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Priced {
    pub bill: CallBill,
    pub class: CallClass,
    pub cause: Option<Rewrite>,
    /// Leading output messages the read covers.
    pub read_messages: u32,
    /// The prefix rule's characters (under that model only).
    pub prefix: Option<PrefixCall>,
    /// Above the model's context window: the provider would refuse it, so
    /// nothing is billed and the cache does not change.
    pub over_window: bool,
    /// The request's tokens (what the answer's usage records of it).
    pub prompt_tokens: f64,
    /// Thinking blocks the API dropped from the request under preserved
    /// thinking's prefix check, and their tokens (not billed).
    pub thinking_dropped: (u32, f64),
}

/// One call's render, as the pricer takes it.
pub struct Sent<'o> {
    /// The output messages' digests.
    pub out: &'o [Digest],
    /// Where the messages the request has not converted yet are read.
    pub values: &'o dyn MessageValues<Digest>,
    /// The first output message that differs from the previous call's.
    pub break_index: usize,
    /// When the call was made (ms; None: no time known).
    pub time: Option<f64>,
    pub change: Change,
}

/// What a call keeps of the previous request on its model.
struct PreviousRequest {
    time: f64,
    preamble: Preamble,
    total_chars: u64,
    /// Its last cacheable breakpoint: index and prefix hash.
    last_bp: Option<(usize, u64)>,
    /// Its last content position (an effort marker left out).
    last_content: Option<(usize, u64)>,
}

/// Whether `r` holds the same prefix at the position `at` had.
fn holds(r: &Request, at: Option<(usize, u64)>) -> bool {
    at.is_some_and(|(i, h)| r.positions.get(i).is_some_and(|p| p.hash == h))
}

/// The latest request sent (kept in `requests`), for pi's warms.
#[derive(Debug, Clone, Copy)]
struct Latest {
    call: usize,
    key: u64,
    rules: Rules,
    time: f64,
    prompt_tokens: f64,
}

/// The provider model's state: the request, and per model its cache and
/// what the previous call on it left.
struct Provider<'a> {
    requests: Requests<'a>,
    caches: HashMap<u64, Cache>,
    previous: HashMap<u64, PreviousRequest>,
    last_model: Option<u64>,
    /// The latest request sent (None after one the provider refused).
    latest: Option<Latest>,
    /// The call whose warms have been sent.
    warmed: Option<usize>,
    /// Tokens per character on the answers so far, for the gate's quotes,
    /// and the latest request's message and preamble characters (what its
    /// answer's usage is fitted against).
    rolling: Rolling,
    last_sizes: Option<(f64, f64)>,
    /// A gated policy's cache as the gate sees it (as pi's live gate keeps
    /// it): the same requests sent in the rolling tokens per character,
    /// for the model of the latest call only. None for a policy without
    /// the gate.
    gate_cache: Option<(u64, Cache)>,
    /// The gate's other candidate (the release's request), kept while the
    /// gate holds it back.
    draft: Option<Draft>,
}

impl Provider<'_> {
    /// When a call was made: its time, or (none known) the latest
    /// request's.
    fn now(&self, time: Option<f64>) -> f64 {
        time.unwrap_or_else(|| self.latest.as_ref().map_or(0.0, |l| l.time))
    }
}

/// The prefix rule's state: the previous call's output length and time.
struct Prefix {
    rule: PrefixRule,
    calls: usize,
    previous_len: usize,
    time: Option<f64>,
    sums: PrefixSums,
}

enum Model<'a> {
    Provider(Box<Provider<'a>>),
    Prefix(Prefix),
}

pub struct Pricer<'a> {
    meta: &'a [CallMeta],
    catalog: &'a Catalog,
    calibration: &'a Calibration,
    long: bool,
    /// pi's `cacheWarming` mode.
    warming: WarmingMode,
    model: Model<'a>,
    totals: BillTotals,
    /// Size points for the calibration.
    points: Vec<SizePoint>,
}

impl<'a> Pricer<'a> {
    pub fn new(
        cache_model: &CacheModel,
        meta: &'a [CallMeta],
        catalog: &'a Catalog,
        calibration: &'a Calibration,
        (long, warming): (bool, WarmingMode),
        shared: &'a Conversions,
    ) -> Self {
        let model = match cache_model {
            CacheModel::Provider => Model::Provider(Box::new(Provider {
                requests: Requests::new(meta, shared),
                caches: HashMap::default(),
                previous: HashMap::default(),
                last_model: None,
                latest: None,
                warmed: None,
                rolling: Rolling::default(),
                last_sizes: None,
                gate_cache: None,
                draft: None,
            })),
            CacheModel::Prefix(rule) => Model::Prefix(Prefix {
                rule: *rule,
                calls: 0,
                previous_len: 0,
                time: None,
                sums: PrefixSums::default(),
            }),
        };
        Pricer {
            meta,
            catalog,
            calibration,
            long,
            warming,
            model,
            totals: BillTotals::default(),
            points: Vec::new(),
        }
    }

    /// The sums and the size points.
    pub fn finish(self) -> (BillTotals, Vec<SizePoint>) {
        let mut totals = self.totals;
        if let Model::Prefix(p) = self.model {
            totals.prefix = Some((p.rule, p.sums));
        }
        (totals, self.points)
    }

    fn tokens_per_char(&self, key: u64) -> f64 {
        self.calibration.factor(key).tokens_per_char
    }

    /// Call `k`'s tools and system, sized as the calibration found them.
    fn preamble(&self, k: usize) -> Preamble {
        let meta = &self.meta[k];
        self.calibration.factor(meta.model_key).sized(meta.preamble)
    }

    /// Call `k`'s model's prices, writes at the write rate or not.
    fn tariff(&self, k: usize, premium: bool) -> Tariff<'_> {
        let meta = &self.meta[k];
        Tariff {
            entry: self.catalog.get(&meta.model.provider, &meta.model.id),
            tokens_per_char: self.tokens_per_char(meta.model_key),
            long: self.long,
            premium,
        }
    }

    /// The bill of tokens (input, read, write) on call `model_of`'s rates.
    fn bill(&self, model_of: usize, tokens: (f64, f64, f64), premium: bool) -> CallBill {
        self.tariff(model_of, premium).bill(tokens)
    }

    /// What sending `request` on call `k`'s model at `now` would read,
    /// write and cost, given the cache as it stands (provider model;
    /// nothing changes).
    pub fn quote(&self, k: usize, request: &Request, now: f64) -> Option<(Outcome, CallBill)> {
        let Model::Provider(p) = &self.model else {
            return None;
        };
        let key = self.meta[k].model_key;
        let tariff = self.tariff(k, rules_for(&self.meta[k].model, self.long).write_premium);
        Some(self.quote_on(p.caches.get(&key), k, request, now, &tariff))
    }

    /// What sending `request` on call `k`'s model at `now` would read from
    /// `cache` (None: an empty one), in `tariff`.
    fn quote_on(
        &self,
        cache: Option<&Cache>,
        k: usize,
        request: &Request,
        now: f64,
        tariff: &Tariff<'_>,
    ) -> (Outcome, CallBill) {
        let rules = rules_for(&self.meta[k].model, self.long);
        let tpc = tariff.tokens_per_char;
        let o = match cache {
            Some(cache) => cache.look(request, &rules, tpc, now),
            None => Cache::default().look(request, &rules, tpc, now),
        };
        (o, tariff.outcome(&o))
    }

    /// The gate decides on this policy's calls: it keeps the cache as the
    /// gate sees it.
    pub fn track_gate(&mut self) {
        if let Model::Provider(p) = &mut self.model {
            p.gate_cache = Some((0, Cache::default()));
        }
    }

    /// Sends `request` (of call `k`'s model) at `now` through the gate's
    /// cache, in the rolling tokens per character (another model: the
    /// cache starts empty, as pi's live gate's does).
    fn gate_send(p: &mut Provider<'_>, key: u64, rules: &Rules, now: f64) {
        let tpc = p.rolling.factor().tokens_per_char;
        if let Some((model, cache)) = p.gate_cache.as_mut() {
            if *model != key {
                *model = key;
                *cache = Cache::default();
            }
            cache.send(p.requests.request(), rules, tpc, now);
        }
    }

    /// The gate's inputs at call `k` (provider model): the release's render
    /// `apply` and the hold (the previous request's output, which the kept
    /// request was built from, and the appended messages) quoted on the
    /// cache as it stands after pi's warms (the walk has found the context
    /// warm: an append on the same model), in tokens per character fitted
    /// on the answers so far, the previous one's usage included (as pi's
    /// live gate fits them). The kept request becomes the hold's;
    /// [`Pricer::settle`] adopts the release's instead when the gate
    /// applies.
    pub fn gate(
        &mut self,
        k: usize,
        (apply, apply_values): (&[Digest], &dyn MessageValues<Digest>),
        (sent, appended, hold_values): (&[Digest], &[Digest], &dyn MessageValues<Digest>),
        time: Option<f64>,
        (carried, reserve): (&Carried, Option<f64>),
    ) -> Result<GateInputs> {
        let usage = k
            .checked_sub(1)
            .and_then(|j| self.meta[j].usage)
            .map(|u| u.total());
        if let (Model::Provider(p), Some(tokens)) = (&mut self.model, usage) {
            if let Some((messages, preamble)) = p.last_sizes {
                p.rolling.observe(messages, preamble, tokens);
            }
        }
        let rules = rules_for(&self.meta[k].model, self.long);
        let preamble = self.preamble(k);
        let same = apply.len() == sent.len() + appended.len()
            && apply[..sent.len()] == *sent
            && apply[sent.len()..] == *appended;
        let p = self.provider_mut();
        let now = p.now(time);
        let previous = p.draft.take();
        let at = (&preamble, &rules);
        p.draft = match same {
            true => None,
            false => Some(p.requests.draft(previous, k, apply, apply_values, at)?),
        };
        p.requests.append(k, (sent, appended), hold_values, at)?;
        let p = self.provider();
        let tariff = Tariff {
            tokens_per_char: p.rolling.factor().tokens_per_char,
            ..self.tariff(k, rules.write_premium)
        };
        let key = self.meta[k].model_key;
        let cache = p
            .gate_cache
            .as_ref()
            .filter(|(model, _)| *model == key)
            .map(|(_, c)| c);
        let quote = |r: &Request| {
            let (outcome, bill) = self.quote_on(cache, k, r, now, &tariff);
            Quoted::of(r, outcome, bill, tariff.tokens_per_char)
        };
        let hold = quote(p.requests.request());
        let apply = p.draft.as_ref().map(|d| quote(d.request()));
        Ok(warm_inputs(
            &hold,
            apply.as_ref(),
            &tariff,
            carried,
            reserve,
        ))
    }

    /// The gate's decision at the call [`Pricer::gate`] quoted: `apply`
    /// keeps the release's request for the call to be priced with; a hold
    /// keeps it aside for the next call's quote.
    pub fn settle(&mut self, apply: bool) {
        let p = self.provider_mut();
        if apply {
            if let Some(draft) = p.draft.take() {
                p.requests.adopt(draft);
            }
        }
    }

    /// A call the gate did not quote (a cold one): the release's request
    /// kept aside is stale.
    pub fn forget_draft(&mut self) {
        if let Model::Provider(p) = &mut self.model {
            p.draft = None;
        }
    }

    /// The size point of call `k` whose messages take `message_chars`:
    /// wire chars under the provider model, the rendered JSON's under the
    /// prefix rule (there only to judge whether the recorded usage
    /// describes the file).
    fn note_size(&mut self, k: usize, message_chars: u64) {
        let meta = &self.meta[k];
        let preamble = (meta.preamble.tools_chars + meta.preamble.system_chars) as f64;
        self.points.push(SizePoint {
            model_key: meta.model_key,
            message_chars: message_chars as f64,
            preamble_chars: preamble,
            recorded: meta.usage.map(|u| u.total()),
        });
    }

    /// The calibration pass: the size point of call `k` (provider model).
    pub fn measure(
        &mut self,
        k: usize,
        out: &[Digest],
        values: &dyn MessageValues<Digest>,
    ) -> Result<()> {
        let rules = rules_for(&self.meta[k].model, self.long);
        let preamble = self.preamble(k);
        if let Model::Provider(p) = &mut self.model {
            p.requests.update(k, out, values, (&preamble, &rules))?;
            let chars = p.requests.request().message_chars;
            self.note_size(k, chars);
        }
        Ok(())
    }

    /// Prices call `k`.
    pub fn price(&mut self, k: usize, sent: Sent<'_>) -> Result<Priced> {
        match self.model {
            Model::Provider(_) => self.price_provider(k, sent),
            Model::Prefix(_) => Ok(self.price_prefix(k, sent)),
        }
    }

    /// The prefix rule's price of call `k`.
    fn price_prefix(&mut self, k: usize, sent: Sent<'_>) -> Priced {
        let Model::Prefix(p) = &mut self.model else {
            unreachable!("priced under the prefix rule")
        };
        let first = p.calls == 0;
        let call = p
            .rule
            .send(sent.out, sent.break_index, first, p.time, sent.time);
        let class = classify(Reads {
            previous: !first,
            lapsed: call.expired,
            reached_previous: sent.break_index >= p.previous_len,
            within_preamble: true,
        });
        p.sums.add(&call);
        p.calls += 1;
        p.previous_len = sent.out.len();
        p.time = sent.time;
        let tpc = 1.0 / p.rule.chars_per_token;
        let tokens = (
            0.0,
            call.read_chars as f64 * tpc,
            call.write_chars as f64 * tpc,
        );
        let bill = self.bill(k, tokens, true);
        self.totals.add(&bill, class);
        self.note_size(k, call.read_chars + call.write_chars);
        Priced {
            bill,
            class,
            cause: None,
            read_messages: sent.break_index as u32,
            prefix: Some(call),
            over_window: false,
            prompt_tokens: tokens.1 + tokens.2,
            thinking_dropped: (0, 0.0),
        }
    }

    /// pi's warms before call `k` (made at `time`; `compacted`: pi
    /// compacted before it): the latest request sent again when pi's
    /// warmer would have sent it (`warmer.rs`), through its model's cache,
    /// each billed as its read and one output token. Once per call; the
    /// warms' times, for the walk to write.
    pub fn warm(&mut self, k: usize, time: Option<f64>, compacted: bool) -> Vec<f64> {
        let Model::Provider(p) = &mut self.model else {
            return Vec::new();
        };
        if p.warmed == Some(k) {
            return Vec::new();
        }
        p.warmed = Some(k);
        let (Some(latest), Some(now)) = (p.latest, time) else {
            return Vec::new();
        };
        let of = &self.meta[latest.call];
        let mut until = self.meta[k].since.changed.map_or(now, |c| c.min(now));
        if compacted {
            // pi compacts when the run settles (or at the request that
            // would overflow).
            until = until.min(of.settled.unwrap_or(now));
        }
        let entry = self.catalog.get(&of.model.provider, &of.model.id);
        let times = WarmRun {
            start: latest.time,
            until,
            settled: of.settled,
            prompt_tokens: latest.prompt_tokens,
            entry,
            long: self.long,
            reasoning: of.reasoning,
            anthropic_messages: &*of.model.api == b"anthropic-messages",
            mode: self.warming,
        }
        .warms();
        let tpc = self.calibration.factor(latest.key).tokens_per_char;
        let p = self.provider_mut();
        let outcomes: Vec<Outcome> = times
            .iter()
            .map(|&t| {
                let request = p.requests.request();
                let o =
                    p.caches
                        .entry(latest.key)
                        .or_default()
                        .send(request, &latest.rules, tpc, t);
                Self::gate_send(p, latest.key, &latest.rules, t);
                o
            })
            .collect();
        let tariff = self.tariff(latest.call, latest.rules.write_premium);
        let costs: Vec<f64> = outcomes
            .iter()
            .map(|o| tariff.outcome(o).cost_usd + tariff.output(latest.prompt_tokens, 1.0))
            .collect();
        for cost in costs {
            self.totals.add_warm(cost);
        }
        times
    }

    fn provider(&self) -> &Provider<'a> {
        match &self.model {
            Model::Provider(p) => p,
            Model::Prefix(_) => unreachable!("under the provider model"),
        }
    }

    fn provider_mut(&mut self) -> &mut Provider<'a> {
        match &mut self.model {
            Model::Provider(p) => p,
            Model::Prefix(_) => unreachable!("under the provider model"),
        }
    }

    /// The provider model's price of call `k`: its request quoted, classed
    /// and given a cause, then sent (the cache keeps its entries).
    fn price_provider(&mut self, k: usize, sent: Sent<'_>) -> Result<Priced> {
        let key = self.meta[k].model_key;
        let rules = rules_for(&self.meta[k].model, self.long);
        let tpc = self.tokens_per_char(key);
        let preamble = self.preamble(k);
        let p = self.provider_mut();
        let update = p
            .requests
            .update(k, sent.out, sent.values, (&preamble, &rules))?;
        let now = p.now(sent.time);
        // The answers' calibration (the gate's) follows the model; the
        // request's sizes are what its answer will be fitted against.
        if p.rolling.model_key() != key {
            p.rolling.switch_to(key);
        }
        let sizes = (
            p.requests.request().message_chars as f64,
            (preamble.tools_chars + preamble.system_chars) as f64,
        );
        p.last_sizes = Some(sizes);
        Self::gate_send(p, key, &rules, now);
        let p = self.provider();
        let request = p.requests.request();
        let Some((o, bill)) = self.quote(k, request, now) else {
            unreachable!("the provider model quotes")
        };
        let prompt_tokens = request.total_chars as f64 * tpc;
        if prompt_tokens > self.window(k) {
            // Refused: nothing for pi's warmer to keep warm.
            self.provider_mut().latest = None;
            self.totals.over_window += 1;
            return Ok(Priced {
                bill: CallBill::default(),
                class: CallClass::Rewrite,
                cause: None,
                read_messages: 0,
                prefix: None,
                over_window: true,
                prompt_tokens,
                thinking_dropped: (0, 0.0),
            });
        }
        let prev = p.previous.get(&key);
        let lapsed = prev.is_some_and(|q| {
            q.last_bp
                .is_some_and(|(_, h)| p.caches.get(&key).is_some_and(|c| c.lapsed(h, now)))
                || (matches!(rules.family, Family::OpenAiPrefix | Family::Google)
                    && now - q.time > rules.ttl_ms)
        });
        let class = classify(Reads {
            previous: prev.is_some(),
            lapsed,
            reached_previous: prev.is_some_and(|q| reached(request, q, &o)),
            within_preamble: o.within_preamble(request.preamble),
        });
        let switched = p.last_model.is_some_and(|m| m != key);
        let seen = seen(
            &self.meta[k],
            &sent.change,
            switched,
            prev,
            request,
            &update,
            &rules,
        );
        let cause = decide(class, &seen, &sent.change, prev.map(|q| now - q.time));
        let tail = match prev {
            Some(q) => request.total_chars.saturating_sub(q.total_chars),
            None => request.total_chars,
        };
        let excess = o.write_chars.saturating_sub(tail);
        let read_messages = match o.read_at {
            Some(q) if q >= request.preamble => request.positions[q].messages,
            _ => 0,
        };
        let previous = left_by(request, &rules, tpc, now, self.meta[k].preamble);
        let thinking_dropped = (request.dropped_blocks, request.dropped_chars as f64 * tpc);
        let p = self.provider_mut();
        p.requests.bind(k);
        let cache = p.caches.entry(key).or_default();
        cache.keep(p.requests.request(), &rules, tpc, now, &o);
        p.previous.insert(key, previous);
        p.last_model = Some(key);
        p.latest = Some(Latest {
            call: k,
            key,
            rules,
            time: now,
            prompt_tokens,
        });
        self.book(k, &bill, class, cause.as_ref(), excess as f64 * tpc, &rules);
        self.totals.add_thinking_dropped(thinking_dropped);
        Ok(Priced {
            bill,
            class,
            cause,
            read_messages,
            prefix: None,
            over_window: false,
            prompt_tokens,
            thinking_dropped,
        })
    }

    /// Call `k`'s model's context window (the catalog's, else the
    /// default).
    pub fn window(&self, k: usize) -> f64 {
        let m = &self.meta[k].model;
        self.catalog
            .get(&m.provider, &m.id)
            .and_then(|e| e.context_window)
            .unwrap_or(DEFAULT_CONTEXT_WINDOW)
    }

    /// pi's compaction before call `k`: its summarization requests, sent
    /// without the prompt cache at the call's model's rates (each answered
    /// by a summary of its size), added to the sums.
    pub fn compaction(&mut self, k: usize, c: &Compaction) {
        let meta = &self.meta[k];
        let tpc = self.tokens_per_char(meta.model_key);
        let entry = self.catalog.get(&meta.model.provider, &meta.model.id);
        let usd: f64 = c
            .requests
            .each()
            .map(|(_, chars)| price_uncached(entry, chars * tpc, c.summary_chars * tpc))
            .sum();
        self.totals.add_compaction(usd);
    }

    /// Adds call `k`'s bill to the sums, and its cause with the `excess`
    /// tokens it wrote beyond the appended tail.
    fn book(
        &mut self,
        k: usize,
        bill: &CallBill,
        class: CallClass,
        cause: Option<&Rewrite>,
        excess: f64,
        rules: &Rules,
    ) {
        self.totals.add(bill, class);
        if let Some(c) = cause {
            let extra = self.bill(k, (0.0, 0.0, excess), rules.write_premium);
            self.totals.add_cause(c.label(), excess, extra.cost_usd);
        }
    }
}

/// What the pricer saw of a call (`meta`) that sent `request`, for its
/// cause.
fn seen(
    meta: &CallMeta,
    change: &Change,
    switched: bool,
    prev: Option<&PreviousRequest>,
    request: &Request,
    update: &Update,
    rules: &Rules,
) -> Seen {
    Seen {
        switched,
        preamble_changed: prev.is_some_and(|q| q.preamble != meta.preamble),
        compaction: change.compacted,
        edit: meta.since.edit,
        branch: meta.since.branch,
        // The output message holding the first position whose billed
        // prefix changed: [first, end).
        diverged: update
            .divergence
            .and_then(|d| request.positions.get(d))
            .map(|p| (p.source as usize, (p.messages.max(p.source + 1)) as usize)),
        turn_closed: update.turn_closed,
        keeps_thinking: rules.keeps_thinking,
        holds_last_breakpoint: prev.is_some_and(|q| holds(request, q.last_bp)),
    }
}

/// Whether the read reached what the previous call cached.
fn reached(request: &Request, prev: &PreviousRequest, o: &Outcome) -> bool {
    match (o.read_at, prev.last_bp) {
        (Some(q), Some((bp, _))) => q >= bp && holds(request, prev.last_bp),
        // The previous call cached nothing (too short): an unchanged
        // history still counts as appended to.
        (_, None) => prev.last_content.is_none() || holds(request, prev.last_content),
        _ => false,
    }
}

/// What a request sent at `now` leaves for the next call on its model.
fn left_by(
    request: &Request,
    rules: &Rules,
    tpc: f64,
    now: f64,
    preamble: Preamble,
) -> PreviousRequest {
    let last_bp = match rules.family {
        Family::OpenAiPrefix | Family::Google => request.positions.len().checked_sub(1),
        _ => request
            .breakpoints
            .last()
            .copied()
            .filter(|&bp| request.positions[bp].chars as f64 * tpc >= rules.min_tokens),
    };
    let at = |i: usize| (i, request.positions[i].hash);
    PreviousRequest {
        time: now,
        preamble,
        total_chars: request.total_chars,
        last_bp: last_bp.map(at),
        last_content: request.content_len().checked_sub(1).map(at),
    }
}
