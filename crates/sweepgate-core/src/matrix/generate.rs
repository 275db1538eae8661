//! `full-sweep` and `test-config` row generation (matrix spec §3–§6).

use std::collections::HashSet;

use super::MatrixError;
use super::args::{FullSweepOptions, ScenarioType, SharedOptions, TestConfigOptions};
use super::rows::{Common, EvalFields, MnAgenticRow, MnFixedRow, Row, SnAgenticRow, SnFixedRow};
use crate::recipe::master::{
    AgenticBlock, At, KvOffloading, MasterConfig, MasterEntry, SearchEntry, Worker,
};
use crate::recipe::runners::RunnerConfig;

/// 3 TB (decimal) in MiB: the cap on a node's offload DRAM.
pub(crate) const DRAM_CAP_MIB: i64 = 2_861_022;

/// `geo(start, end, step)`: multiply by `step`, clamping the last value to `end`.
pub(crate) fn geo(start: i64, end: i64, step: i64) -> Vec<i64> {
    let mut out = Vec::new();
    let mut c = start;
    while c <= end {
        out.push(c);
        if c == end || step <= 1 {
            break;
        }
        c = c.saturating_mul(step);
        if c > end {
            c = end;
        }
    }
    out
}

/// `1k1k`, `8k1k`, otherwise `<isl>_<osl>`.
pub(crate) fn seq_name(isl: i64, osl: i64) -> String {
    match (isl, osl) {
        (1024, 1024) => "1k1k".to_string(),
        (8192, 1024) => "8k1k".to_string(),
        _ => format!("{isl}_{osl}"),
    }
}

/// Python's `fnmatch.fnmatchcase`.
pub(crate) fn fnmatch(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    fn class(p: &[char], i: usize, c: char) -> Option<(bool, usize)> {
        // Returns (matches, index after the class) or None if `[` is literal.
        let mut j = i + 1;
        let neg = j < p.len() && p[j] == '!';
        if neg {
            j += 1;
        }
        let start = j;
        if j < p.len() && p[j] == ']' {
            j += 1;
        }
        while j < p.len() && p[j] != ']' {
            j += 1;
        }
        if j >= p.len() {
            return None;
        }
        let body = &p[start..j];
        let mut hit = false;
        let mut k = 0;
        while k < body.len() {
            if k + 2 < body.len() && body[k + 1] == '-' {
                if body[k] <= c && c <= body[k + 2] {
                    hit = true;
                }
                k += 3;
            } else {
                if body[k] == c {
                    hit = true;
                }
                k += 1;
            }
        }
        Some((hit != neg, j + 1))
    }
    fn go(p: &[char], n: &[char], pi: usize, ni: usize) -> bool {
        if pi == p.len() {
            return ni == n.len();
        }
        match p[pi] {
            '*' => (ni..=n.len()).any(|k| go(p, n, pi + 1, k)),
            '?' => ni < n.len() && go(p, n, pi + 1, ni + 1),
            '[' => match class(p, pi, n.get(ni).copied().unwrap_or('\0')) {
                Some((hit, next)) => ni < n.len() && hit && go(p, n, next, ni + 1),
                None => ni < n.len() && n[ni] == '[' && go(p, n, pi + 1, ni + 1),
            },
            c => ni < n.len() && n[ni] == c && go(p, n, pi + 1, ni + 1),
        }
    }
    go(&p, &n, 0, 0)
}

/// Which scenario kinds are selected (`--scenario-type`).
fn scenario_filter(shared: &SharedOptions) -> (bool, bool) {
    match &shared.scenario_type {
        None => (true, true),
        Some(v) => (
            v.contains(&ScenarioType::FixedSeqLen),
            v.contains(&ScenarioType::AgenticCoding),
        ),
    }
}

/// Exact decimal value of the float's shortest round-trip text, as num/den.
fn decimal_of(u: f64) -> Option<(i128, i128)> {
    let text = format!("{u}");
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    if frac.len() > 30 {
        return None;
    }
    let den = 10i128.checked_pow(u32::try_from(frac.len()).ok()?)?;
    let num: i128 = format!("{int}{frac}").parse().ok()?;
    Some((num, den))
}

/// `total-cpu-dram-gb` of one agentic search-space entry (spec §3.5).
pub(crate) fn total_cpu_dram_gb(
    e: &MasterEntry,
    block: &AgenticBlock,
    s: &SearchEntry,
    runners: &RunnerConfig,
) -> Result<i64, MatrixError> {
    if s.kv_offloading.as_ref().map(|k| k.value) != Some(KvOffloading::Dram) {
        return Ok(0);
    }
    let label = e.runner.value.as_str();
    let Some(hw) = runners.hardware(label) else {
        return Err(MatrixError::Dram(format!(
            "Runner '{label}' requires 'available-cpu-dram-mib' in runner hardware metadata. Available hardware keys: {}",
            runners.sorted_hardware_keys().join(", ")
        )));
    };
    let a = hw.available_cpu_dram_mib.value.min(DRAM_CAP_MIB);
    let g = hw.gpus_per_node.value;
    let n = if e.multinode.value {
        let Some(p) = &s.prefill else {
            return Err(MatrixError::Crash(format!(
                "KeyError: 'prefill' in agentic search-space entry of '{}'",
                e.key
            )));
        };
        let r = p.tp.value * p.pp() * p.pcp_size();
        if r > g {
            if r % g != 0 {
                return Err(MatrixError::Dram(format!(
                    "worker tp*pp*pcp-size={r} spans multiple nodes but is not a multiple of gpus-per-node={g}"
                )));
            }
            g
        } else {
            if r <= 0 || g % r != 0 {
                return Err(MatrixError::Dram(format!(
                    "worker tp*pp*pcp-size={r} does not divide gpus-per-node={g} evenly"
                )));
            }
            r
        }
    } else {
        let Some(tp) = &s.tp else {
            return Err(MatrixError::Crash(format!(
                "KeyError: 'tp' in agentic search-space entry of '{}'",
                e.key
            )));
        };
        let (pp, pcp) = (s.pp(), s.pcp_size());
        let n = tp.value * pp * pcp;
        if n > g {
            return Err(MatrixError::Dram(format!(
                "tp={} with pp={pp} and pcp-size={pcp} requires {n} GPUs and exceeds gpus-per-node={g} for runner '{label}'",
                tp.value
            )));
        }
        n
    };
    let u = block.dram_utilization.as_ref().map_or(0.0, |u| u.value);
    let Some((num, den)) = decimal_of(u) else {
        // Below 1e-30 the budget truncates to 0.
        return Ok(0);
    };
    let top = i128::from(a)
        .checked_mul(1_048_576)
        .and_then(|x| x.checked_mul(num))
        .and_then(|x| x.checked_mul(i128::from(n)));
    let bottom = den
        .checked_mul(i128::from(g))
        .and_then(|x| x.checked_mul(1_000_000_000));
    match (top, bottom) {
        (Some(t), Some(b)) if b > 0 => Ok(i64::try_from(t.div_euclid(b)).unwrap_or(i64::MAX)),
        _ => Ok(0),
    }
}

fn common<'a>(e: &'a MasterEntry, runner: &'a str) -> Common<'a> {
    Common {
        image: &e.image.value,
        model: &e.model.value,
        model_prefix: &e.model_prefix.value,
        precision: &e.precision.value,
        framework: &e.framework.value,
        runner,
    }
}

/// §3.6: the entry's value if the key is written (even as null), else the top level.
fn router_of<'a>(
    e: &'a MasterEntry,
    s: &'a SearchEntry,
) -> Option<&'a crate::recipe::master::RawMap> {
    match &s.router {
        Some(At { value, .. }) => value.as_ref().map(|c| &c.raw),
        None => e.router.as_ref().map(|c| &c.raw),
    }
}

fn kv_p2p_of<'a>(e: &'a MasterEntry, s: &'a SearchEntry) -> Option<&'a str> {
    match &s.kv_p2p_transfer {
        Some(At { value, .. }) => value.as_deref(),
        None => e.kv_p2p_transfer.as_ref().map(|k| k.value.as_str()),
    }
}

fn worker_tag(prefix: char, w: &Worker) -> String {
    let mut t = format!("{prefix}{}x{}", w.num_worker.value, w.tp.value);
    if w.ep.value != 1 {
        t.push_str(&format!("ep{}", w.ep.value));
    }
    if w.dp_attn.value {
        t.push_str("dpa");
    }
    t
}

fn range(s: &SearchEntry) -> (i64, i64) {
    (
        s.conc_start.as_ref().map_or(0, |v| v.value),
        s.conc_end.as_ref().map_or(0, |v| v.value),
    )
}

/// Row validation (§2.5) for the one rule reachable from valid configs: a
/// search-space `kv-p2p-transfer: null` can hide the top-level value.
fn check_mn_row(disagg: bool, kv: Option<&str>, key: &str) -> Result<(), MatrixError> {
    if disagg && kv.is_none() {
        return Err(MatrixError::RowValidation(format!(
            "entry of '{key}': disagg=true requires kv-p2p-transfer"
        )));
    }
    Ok(())
}

enum Mode<'o> {
    Full(&'o FullSweepOptions),
    Test(&'o TestConfigOptions),
}

struct Emitter<'a, 'o> {
    runners: &'a RunnerConfig,
    mode: Mode<'o>,
    fixed: bool,
    agentic: bool,
    seq: Option<Vec<(i64, i64)>>,
    rows: Vec<Row<'a>>,
}

impl<'a> Emitter<'a, '_> {
    fn conc_filter_test(&self, concs: Vec<i64>) -> Option<Vec<i64>> {
        match &self.mode {
            Mode::Test(t) => match &t.conc {
                Some(keep) => {
                    let v: Vec<i64> = concs.into_iter().filter(|c| keep.contains(c)).collect();
                    (!v.is_empty()).then_some(v)
                }
                None => Some(concs),
            },
            Mode::Full(_) => Some(concs),
        }
    }

    /// SN-fixed concurrency rules (§6.1); `None` skips the entry.
    fn sn_fixed_concs(o: &FullSweepOptions, s: &SearchEntry) -> Option<Vec<i64>> {
        if let Some(list) = s.nonempty_conc_list() {
            let mut v = list.to_vec();
            if let Some(min) = o.min_conc {
                if min <= 0 {
                    return None;
                }
                v.retain(|&c| c >= min);
                if v.is_empty() {
                    return None;
                }
            }
            if let Some(max) = o.max_conc {
                if max <= 0 {
                    return None;
                }
                v.retain(|&c| c <= max);
                if v.is_empty() {
                    v = vec![max];
                }
            }
            Some(v)
        } else {
            let (mut start, mut end) = range(s);
            if let Some(min) = o.min_conc {
                if min <= 0 || end < min {
                    return None;
                }
                start = start.max(min);
            }
            if let Some(max) = o.max_conc {
                if max <= 0 {
                    return None;
                }
                if start > max {
                    start = max;
                    end = max;
                } else {
                    end = end.min(max);
                }
            }
            Some(geo(start, end, o.step_size))
        }
    }

    /// MN-fixed concurrency rules (§6.2).
    fn mn_fixed_concs(o: &FullSweepOptions, s: &SearchEntry) -> Option<Vec<i64>> {
        let mut v = match s.nonempty_conc_list() {
            Some(l) => l.to_vec(),
            None => {
                let (a, b) = range(s);
                geo(a, b, o.step_size)
            }
        };
        if let Some(min) = o.min_conc {
            if min <= 0 {
                return None;
            }
            v.retain(|&c| c >= min);
            if v.is_empty() {
                return None;
            }
        }
        if let Some(max) = o.max_conc {
            v.retain(|&c| c <= max);
            if v.is_empty() {
                if max > 0 {
                    v = vec![max];
                } else {
                    return None;
                }
            }
        }
        Some(v)
    }

    fn entry(&mut self, e: &'a MasterEntry, runner_values: &[&'a str]) -> Result<(), MatrixError> {
        let mn = e.multinode.value;
        let (sn_sel, mn_sel) = match &self.mode {
            Mode::Full(o) => (o.single_node, o.multi_node),
            Mode::Test(_) => (true, true),
        };
        let prefix = e.model_prefix.value.as_str();
        if self.fixed {
            if e.scenarios.fixed_seq_len.is_null() {
                return Err(MatrixError::Crash(format!(
                    "TypeError: scenarios.fixed-seq-len of '{}' is null",
                    e.key
                )));
            }
            for b in e.scenarios.fixed_seq_len.items() {
                let (isl, osl) = (b.isl.value, b.osl.value);
                if let Some(seq) = &self.seq
                    && !seq.contains(&(isl, osl))
                {
                    continue;
                }
                let exp_name = format!("{prefix}_{}", seq_name(isl, osl));
                for s in &b.search_space {
                    if (mn && !mn_sel) || (!mn && !sn_sel) {
                        continue;
                    }
                    let concs = match &self.mode {
                        Mode::Full(o) if mn => Self::mn_fixed_concs(o, s),
                        Mode::Full(o) => {
                            let tp = s.tp.as_ref().map_or(0, |t| t.value);
                            if o.max_tp.is_some_and(|m| m <= 0 || tp > m)
                                || o.max_ep.is_some_and(|m| m <= 0)
                            {
                                continue;
                            }
                            Self::sn_fixed_concs(o, s)
                        }
                        Mode::Test(_) => {
                            // test-config fixed blocks use `conc-list` whenever it is written.
                            let base = match &s.conc_list {
                                Some(At { value: Some(l), .. }) => l.clone(),
                                Some(At { value: None, .. }) => {
                                    return Err(MatrixError::Crash(format!(
                                        "TypeError: conc-list of a search-space entry of '{}' is null",
                                        e.key
                                    )));
                                }
                                None => {
                                    let (a, z) = range(s);
                                    geo(a, z, 2)
                                }
                            };
                            self.conc_filter_test(base)
                        }
                    };
                    let Some(concs) = concs else { continue };
                    if mn {
                        let (Some(p), Some(d)) = (&s.prefill, &s.decode) else {
                            continue;
                        };
                        let kv = kv_p2p_of(e, s);
                        check_mn_row(e.disagg(), kv, &e.key)?;
                        for r in runner_values {
                            self.rows.push(Row::MnFixed(MnFixedRow {
                                common: common(e, r),
                                isl,
                                osl,
                                spec_decoding: s.spec_decoding().as_str(),
                                prefill: p,
                                decode: d,
                                conc: concs.clone(),
                                exp_name: exp_name.clone(),
                                disagg: e.disagg(),
                                router: router_of(e, s),
                                kv_p2p_transfer: kv,
                                eval: EvalFields {
                                    run_eval: Some(false),
                                    ..EvalFields::default()
                                },
                            }));
                        }
                    } else {
                        let mut ep = s.ep();
                        // `--max-ep` clamps a written ep (spec §6.3).
                        if let (Some(max), Some(_)) = (self.max_ep(), &s.ep)
                            && ep > max
                        {
                            ep = max;
                        }
                        for &c in &concs {
                            for r in runner_values {
                                self.rows.push(Row::SnFixed(SnFixedRow {
                                    common: common(e, r),
                                    isl,
                                    osl,
                                    tp: s.tp.as_ref().map_or(0, |t| t.value),
                                    pp: s.pp(),
                                    dcp_size: s.dcp_size(),
                                    pcp_size: s.pcp_size(),
                                    conc: c,
                                    ep,
                                    dp_attn: s.dp_attn(),
                                    spec_decoding: s.spec_decoding().as_str(),
                                    exp_name: exp_name.clone(),
                                    router: router_of(e, s),
                                    eval: EvalFields {
                                        run_eval: Some(false),
                                        ..EvalFields::default()
                                    },
                                }));
                            }
                        }
                    }
                }
            }
        }
        if self.agentic && ((mn && mn_sel) || (!mn && sn_sel)) {
            if e.scenarios.agentic_coding.is_null() {
                return Err(MatrixError::Crash(format!(
                    "TypeError: scenarios.agentic-coding of '{}' is null",
                    e.key
                )));
            }
            for b in e.scenarios.agentic_coding.items() {
                for s in &b.search_space {
                    let dram = total_cpu_dram_gb(e, b, s, self.runners)?;
                    let step = match &self.mode {
                        Mode::Full(o) => o.step_size,
                        Mode::Test(_) => 2,
                    };
                    let mut concs = match s.nonempty_conc_list() {
                        Some(l) => l.to_vec(),
                        None => {
                            let (a, z) = range(s);
                            geo(a, z, step)
                        }
                    };
                    if let Mode::Full(o) = &self.mode {
                        if let Some(min) = o.min_conc {
                            concs.retain(|&c| c >= min);
                        }
                        if let Some(max) = o.max_conc {
                            concs.retain(|&c| c <= max);
                        }
                    }
                    let Some(concs) = self.conc_filter_test(concs) else {
                        continue;
                    };
                    if concs.is_empty() {
                        continue;
                    }
                    let backend = s.kv_offload_backend.as_ref();
                    let kv_off = s
                        .kv_offloading
                        .as_ref()
                        .map_or(KvOffloading::None, |k| k.value);
                    let spec = s.spec_decoding();
                    if mn {
                        let (Some(p), Some(d)) = (&s.prefill, &s.decode) else {
                            return Err(MatrixError::Crash(format!(
                                "KeyError: 'prefill' in agentic search-space entry of multi-node '{}'",
                                e.key
                            )));
                        };
                        let kv = kv_p2p_of(e, s);
                        check_mn_row(e.disagg(), kv, &e.key)?;
                        let suffix = match (kv_off, backend) {
                            (KvOffloading::None, _) => String::new(),
                            (k, b) => format!(
                                "_kv{}-{}",
                                k.as_str(),
                                b.map_or("None", |b| b.name.value.as_str())
                            ),
                        };
                        let tags =
                            format!("{prefix}_{}_{}", worker_tag('p', p), worker_tag('d', d));
                        for r in runner_values {
                            for &c in &concs {
                                self.rows.push(Row::MnAgentic(MnAgenticRow {
                                    common: common(e, r),
                                    spec_decoding: spec.as_str(),
                                    prefill: p,
                                    decode: d,
                                    conc: vec![c],
                                    kv_offloading: kv_off.as_str(),
                                    total_cpu_dram_gb: dram,
                                    exp_name: format!("{tags}_conc{c}{suffix}"),
                                    disagg: e.disagg(),
                                    kv_offload_backend: backend.map(|b| &b.raw),
                                    router: router_of(e, s),
                                    kv_p2p_transfer: kv,
                                    eval: EvalFields::default(),
                                }));
                            }
                        }
                    } else {
                        let Some(tp) = &s.tp else {
                            return Err(MatrixError::Crash(format!(
                                "KeyError: 'tp' in agentic search-space entry of single-node '{}'",
                                e.key
                            )));
                        };
                        let kv_tag = match (kv_off, backend) {
                            (KvOffloading::None, _) => "kvnone".to_string(),
                            (k, b) => format!(
                                "kv{}-{}",
                                k.as_str(),
                                b.map_or("None", |b| b.name.value.as_str())
                            ),
                        };
                        let spec_tag = if spec == crate::recipe::master::SpecDecoding::None {
                            String::new()
                        } else {
                            format!("_spec-{}", spec.as_str())
                        };
                        for &c in &concs {
                            let exp_name =
                                format!("{prefix}_tp{}_conc{c}_{kv_tag}{spec_tag}", tp.value);
                            for r in runner_values {
                                self.rows.push(Row::SnAgentic(SnAgenticRow {
                                    common: common(e, r),
                                    tp: tp.value,
                                    pp: s.pp(),
                                    dcp_size: s.dcp_size(),
                                    pcp_size: s.pcp_size(),
                                    ep: s.ep(),
                                    dp_attn: s.dp_attn(),
                                    spec_decoding: spec.as_str(),
                                    conc: c,
                                    kv_offloading: kv_off.as_str(),
                                    total_cpu_dram_gb: dram,
                                    exp_name: exp_name.clone(),
                                    kv_offload_backend: backend.map(|b| &b.raw),
                                    router: router_of(e, s),
                                    eval: EvalFields::default(),
                                }));
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn max_ep(&self) -> Option<i64> {
        match &self.mode {
            Mode::Full(o) => o.max_ep,
            Mode::Test(_) => None,
        }
    }
}

/// Python's `repr()` of a string.
pub(crate) fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `full-sweep` rows, before eval marking.
pub(crate) fn full_sweep<'a>(
    master: &'a MasterConfig,
    runners: &'a RunnerConfig,
    shared: &SharedOptions,
    o: &FullSweepOptions,
) -> Result<Vec<Row<'a>>, MatrixError> {
    if let Some(types) = &o.runner_type {
        let mut seen = HashSet::new();
        let bad: Vec<String> = types
            .iter()
            .filter(|t| runners.label(t).is_none() && seen.insert(t.as_str()))
            .map(|t| py_repr(t))
            .collect();
        if !bad.is_empty() {
            return Err(MatrixError::InvalidRunnerType {
                bad: format!("{{{}}}", bad.join(", ")),
                valid: runners.sorted_label_names().join(", "),
            });
        }
    }
    let (fixed, agentic) = scenario_filter(shared);
    let mut em = Emitter {
        runners,
        mode: Mode::Full(o),
        fixed,
        agentic,
        seq: o
            .seq_lens
            .as_ref()
            .map(|v| v.iter().map(|s| s.pair()).collect()),
        rows: Vec::new(),
    };
    let contains = |list: &Option<Vec<String>>, v: &str| {
        list.as_ref().is_none_or(|l| l.iter().any(|x| x == v))
    };
    for e in &master.entries {
        if let Some(p) = &o.model_prefix
            && !p.iter().any(|p| e.key.starts_with(p.as_str()))
        {
            continue;
        }
        if !contains(&o.precision, &e.precision.value)
            || !contains(&o.framework, &e.framework.value)
            || !contains(&o.runner_type, &e.runner.value)
        {
            continue;
        }
        let label = e.runner.value.as_str();
        let values: Vec<&str> = match &shared.runner_node_filter {
            None => vec![label],
            Some(f) => runners
                .label(label)
                .map(|l| {
                    l.runners
                        .iter()
                        .map(|r| r.value.as_str())
                        .filter(|r| r.contains(f.as_str()))
                        .collect()
                })
                .unwrap_or_default(),
        };
        if values.is_empty() {
            continue;
        }
        em.entry(e, &values)?;
    }
    Ok(em.rows)
}

/// `test-config` key resolution (§5 step 1).
pub(crate) fn resolve_keys<'a>(
    master: &'a MasterConfig,
    patterns: &[String],
) -> Result<Vec<&'a MasterEntry>, MatrixError> {
    let available = || {
        let mut k: Vec<&str> = master.keys().collect();
        k.sort_unstable();
        k.join(", ")
    };
    let mut out: Vec<&MasterEntry> = Vec::new();
    let mut seen = HashSet::new();
    for p in patterns {
        if p.contains('*') || p.contains('?') {
            let matched: Vec<&MasterEntry> = master
                .entries
                .iter()
                .filter(|e| fnmatch(p, &e.key))
                .collect();
            if matched.is_empty() {
                return Err(MatrixError::PatternNoMatch {
                    pattern: p.clone(),
                    available: available(),
                });
            }
            for e in matched {
                if seen.insert(e.key.as_str()) {
                    out.push(e);
                }
            }
        } else {
            let Some(e) = master.get(p) else {
                return Err(MatrixError::KeyNotFound {
                    key: p.clone(),
                    available: available(),
                });
            };
            if seen.insert(e.key.as_str()) {
                out.push(e);
            }
        }
    }
    Ok(out)
}

/// `test-config` rows, before eval marking.
pub(crate) fn test_config<'a>(
    master: &'a MasterConfig,
    runners: &'a RunnerConfig,
    shared: &SharedOptions,
    o: &TestConfigOptions,
) -> Result<Vec<Row<'a>>, MatrixError> {
    let entries = resolve_keys(master, &o.config_keys)?;
    let (fixed, agentic) = scenario_filter(shared);
    let mut em = Emitter {
        runners,
        mode: Mode::Test(o),
        fixed,
        agentic,
        seq: o
            .seq_lens
            .as_ref()
            .map(|v| v.iter().map(|s| s.pair()).collect()),
        rows: Vec::new(),
    };
    for e in entries {
        let label = e.runner.value.as_str();
        let values: Vec<&str> = match &shared.runner_node_filter {
            None => vec![label],
            Some(f) => {
                let mut seen = HashSet::new();
                let nodes = runners
                    .label(label)
                    .map(|l| l.runners.as_slice())
                    .unwrap_or_default();
                std::iter::once(label)
                    .chain(nodes.iter().map(|r| r.value.as_str()))
                    .filter(|r| r.contains(f.as_str()) && seen.insert(*r))
                    .collect()
            }
        };
        if values.is_empty() {
            continue;
        }
        em.entry(e, &values)?;
    }
    Ok(em.rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geo_examples() {
        assert_eq!(geo(4, 100, 2), vec![4, 8, 16, 32, 64, 100]);
        assert_eq!(geo(1, 64, 3), vec![1, 3, 9, 27, 64]);
        assert_eq!(geo(4, 20, 2), vec![4, 8, 16, 20]);
        assert_eq!(geo(8, 8, 2), vec![8]);
    }

    #[test]
    fn seq_names() {
        assert_eq!(seq_name(1024, 1024), "1k1k");
        assert_eq!(seq_name(8192, 1024), "8k1k");
        assert_eq!(seq_name(1000, 200), "1000_200");
    }

    #[test]
    fn fnmatch_rules() {
        assert!(fnmatch("a?-*", "a1-fp4"));
        assert!(!fnmatch("a?-*", "a12-fp4"));
        assert!(fnmatch("*", ""));
        assert!(fnmatch("x[!a]y", "xby"));
        assert!(!fnmatch("x[!a]y", "xay"));
        assert!(fnmatch("x[a-c]y", "xby"));
        assert!(fnmatch("x[y", "x[y"));
        assert!(fnmatch("[]]", "]"));
    }

    #[test]
    fn dram_decimal() {
        assert_eq!(decimal_of(0.8), Some((8, 10)));
        assert_eq!(decimal_of(1.0), Some((1, 1)));
        assert_eq!(decimal_of(0.086), Some((86, 1000)));
    }

    #[test]
    fn repr() {
        assert_eq!(py_repr("b300-nv"), "'b300-nv'");
        assert_eq!(py_repr("it's"), "\"it's\"");
    }
}
