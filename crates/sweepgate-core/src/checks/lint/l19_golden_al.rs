//! L19 (E): the pinned simulated AL matches the golden curve at the draft
//! length K (docs/rules.md §3 L19, Check 11b, §1.3–§1.4), joining master
//! `additional-settings` with the recipe's K, and script encodings with the
//! script's K.

use super::context::{Context, arms, settings};
use super::{Finding, Rule, Severity};
use crate::recipe::golden::{
    self, Decoded, DraftMethod, Lookup, Query, ThinkingMode, VllmSpecConfig,
};
use crate::recipe::launcher::Scenario;
use crate::recipe::script::{ScriptFacts, ServerLaunch};

pub(crate) const RULE: Rule = Rule {
    id: "L19",
    name: "golden-al",
    description: "The simulated acceptance length pinned for an agentic spec config equals the golden AL at its K.",
    check,
};

/// One (K, AL) pair a launch pins, with what selects its golden curve.
#[derive(Debug, Clone)]
pub(crate) struct Pair {
    pub key: String,
    pub prefix: String,
    pub file: String,
    pub line: usize,
    pub k: u32,
    pub al: f64,
    pub tolerance: f64,
    pub method: DraftMethod,
    pub sampling: Option<golden::DraftSampling>,
    pub draft_model: Option<String>,
    pub mode: Option<ThinkingMode>,
}

/// Replace `$VAR` / `${VAR}` in `text` by the literal of their nearest assignment.
fn substitute(f: &ScriptFacts, text: &str, line: usize, srv: &ServerLaunch) -> String {
    let mut out = text.to_string();
    let mut names: Vec<&str> = f.assignments.iter().map(|a| a.name.as_str()).collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    for n in names {
        if !out.contains(n) {
            continue;
        }
        if let Some(v) = f.resolve(n, line, &srv.branch).and_then(|a| a.literal()) {
            out = out
                .replace(&format!("${{{n}}}"), &v)
                .replace(&format!("${n}"), &v);
        }
    }
    out
}

/// Every value `--speculative-config` can take: a variable is followed into
/// each of its assignments (one per `if`/`else` arm), with that line.
fn spec_configs(
    f: &ScriptFacts,
    srv: &ServerLaunch,
    flags: &[crate::recipe::script::ResolvedFlag],
) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for rf in flags
        .iter()
        .filter(|rf| rf.flag.name == "--speculative-config")
    {
        let Some(w) = &rf.flag.value else { continue };
        let t = w.text.trim();
        let var = t
            .strip_prefix("${")
            .and_then(|x| x.strip_suffix('}'))
            .or_else(|| t.strip_prefix('$'));
        match var.filter(|v| v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')) {
            Some(v) => {
                for a in f.candidates(v, rf.flag.line, &srv.branch) {
                    out.push((substitute(f, &a.value_text(), a.line, srv), a.line));
                }
            }
            None => out.push((substitute(f, t, rf.flag.line, srv), rf.flag.line)),
        }
    }
    out
}

fn thinking<'a>(signals: impl IntoIterator<Item = (&'a str, String)>) -> Option<ThinkingMode> {
    let modes: Vec<ThinkingMode> = signals
        .into_iter()
        .filter_map(|(k, v)| golden::thinking_signal(k, &v))
        .collect();
    golden::resolve_thinking(modes).ok()
}

pub(crate) fn pairs(ctx: &Context<'_>) -> Vec<Pair> {
    let mut out = Vec::new();
    let injectors: Vec<golden::Injector> = ctx
        .input
        .data
        .injector_frameworks
        .iter()
        .map(|f| golden::Injector {
            framework: f.clone(),
            length: golden::LengthSource::Explicit,
        })
        .collect();
    for e in ctx.all_changed() {
        let agentic = !e.scenarios.agentic_coding.items().is_empty();
        if !agentic {
            continue;
        }
        let prefix = e.model_prefix.value.clone();
        // Runner-injected AL joined with the recipe's K.
        for (scenario, s) in arms(e) {
            if scenario != Scenario::AgenticCoding {
                continue;
            }
            let items = settings(s);
            let Decoded::Simulated(sim) = golden::runner_injected(
                &e.framework.value,
                items.iter().map(String::as_str),
                &injectors,
            ) else {
                continue;
            };
            let line = super::context::settings_at(s)
                .into_iter()
                .find(|(t, _)| t.starts_with("SYNTHETIC_ACCEPTANCE_LENGTH"))
                .map_or(e.pos.line as usize, |(_, l)| l);
            for r in ctx.recipes_of(&e.key) {
                let Some(role) = r.serving_role() else {
                    continue;
                };
                let mut k = sim.k;
                let mut method = DraftMethod::Mtp;
                let mut sampling = None;
                let mut draft = None;
                if let Some(sc) = role
                    .arg("speculative-config")
                    .or_else(|| role.arg("speculative_config"))
                    && let Ok(v) = VllmSpecConfig::parse(&sc.text())
                {
                    k = k.or(v.k).or(Some(2));
                    if let Some(m) = &v.method {
                        method = DraftMethod::parse(m);
                    }
                    sampling = v.sampling();
                    draft = v.model.clone();
                }
                if let Some(st) = role.arg("speculative-num-steps") {
                    k = k.or(st.text().trim().parse().ok());
                }
                if let Some(alg) = role.arg("speculative-algorithm") {
                    method = DraftMethod::parse(&alg.text());
                }
                let Some(k) = k else { continue };
                let signals = role
                    .env
                    .iter()
                    .chain(role.args.iter())
                    .map(|s| (s.key.as_str(), s.text()))
                    .chain(
                        items
                            .iter()
                            .filter_map(|i| i.split_once('=').map(|(a, b)| (a, b.to_string()))),
                    );
                out.push(Pair {
                    key: e.key.clone(),
                    prefix: prefix.clone(),
                    file: e.file.to_string(),
                    line,
                    k,
                    al: sim.al,
                    tolerance: sim.tolerance,
                    method: method.clone(),
                    sampling,
                    draft_model: draft,
                    mode: thinking(signals),
                });
            }
        }
        // Script encodings.
        for sc in ctx.scripts_of(&e.key) {
            let f = &sc.facts;
            for srv in &f.servers {
                let flags = f.resolved_server_flags(srv);
                let value = |name: &str| {
                    flags.iter().find(|rf| rf.flag.name == name).and_then(|rf| {
                        rf.flag
                            .value
                            .as_ref()
                            .map(|w| (substitute(f, &w.text, rf.flag.line, srv), rf.flag.line))
                    })
                };
                let env: Vec<(String, String, usize)> = f
                    .env
                    .iter()
                    .filter_map(|v| {
                        v.value
                            .as_ref()
                            .map(|w| (v.name.clone(), substitute(f, &w.text, v.line, srv), v.line))
                    })
                    .collect();
                let signals: Vec<(&str, String)> = env
                    .iter()
                    .map(|(k, v, _)| (k.as_str(), v.clone()))
                    .chain(flags.iter().filter_map(|rf| {
                        rf.flag
                            .value
                            .as_ref()
                            .map(|w| (rf.flag.key(), w.text.clone()))
                    }))
                    .collect();
                let mode = thinking(signals);
                for (json, line) in spec_configs(f, srv, &flags) {
                    let Ok(v) = VllmSpecConfig::parse(&json) else {
                        continue;
                    };
                    let (Decoded::Simulated(sim), Some(k)) = (v.decoded(), v.k) else {
                        continue;
                    };
                    out.push(Pair {
                        key: e.key.clone(),
                        prefix: prefix.clone(),
                        file: f.path.clone(),
                        line,
                        k,
                        al: sim.al,
                        tolerance: sim.tolerance,
                        method: v
                            .method
                            .as_deref()
                            .map_or(DraftMethod::Mtp, DraftMethod::parse),
                        sampling: v.sampling(),
                        draft_model: v.model.clone(),
                        mode,
                    });
                }
                let sg = golden::sglang_env(env.iter().map(|(k, v, _)| (k.as_str(), v.as_str())));
                if let Decoded::Simulated(sim) = sg
                    && let Some((steps, _)) = value("--speculative-num-steps")
                    && let Ok(k) = steps.trim().parse::<u32>()
                {
                    let line = env
                        .iter()
                        .find(|(k, _, _)| k == "SGLANG_SIMULATE_ACC_LEN")
                        .map_or(srv.line, |x| x.2);
                    let method =
                        value("--speculative-algorithm").map_or(DraftMethod::Mtp, |(m, _)| {
                            match DraftMethod::parse(&m) {
                                DraftMethod::Eagle if prefix != "minimaxm3" => DraftMethod::Mtp,
                                other => other,
                            }
                        });
                    out.push(Pair {
                        key: e.key.clone(),
                        prefix: prefix.clone(),
                        file: f.path.clone(),
                        line,
                        k,
                        al: sim.al,
                        tolerance: sim.tolerance,
                        method,
                        sampling: None,
                        draft_model: value("--speculative-draft-model-path").map(|x| x.0),
                        mode,
                    });
                }
            }
        }
    }
    out
}

pub(crate) fn lookup<'g>(ctx: &'g Context<'_>, p: &Pair, mode: ThinkingMode) -> Lookup<'g> {
    ctx.golden.lookup(&Query {
        prefix: &p.prefix,
        method: p.method.clone(),
        sampling: p.sampling,
        draft_model: p.draft_model.as_deref(),
        mode,
        k: p.k,
    })
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in pairs(ctx) {
        let mode = p.mode.unwrap_or(ThinkingMode::On);
        let Lookup::Found { curve, cell } = lookup(ctx, &p, mode) else {
            continue;
        };
        if (p.al - cell.al).abs() < p.tolerance {
            continue;
        }
        // Thinking off pinned with the thinking_on value is L27's.
        if mode == ThinkingMode::Off
            && lookup(ctx, &p, ThinkingMode::On)
                .al()
                .is_some_and(|on| (p.al - on).abs() < p.tolerance)
        {
            continue;
        }
        out.push(
            Finding::new(
                "L19",
                Severity::Error,
                &p.file,
                p.line,
                format!(
                    "`{}` pins AL {} at K={}, but the golden {} {} K={} is {}",
                    p.key,
                    p.al,
                    p.k,
                    curve.file,
                    mode.key(),
                    p.k,
                    cell.al
                ),
            )
            .fix(format!(
                "pin {} (or change K to the one the AL was collected at)",
                cell.al
            )),
        );
    }
    out
}
