//! The schema of a master entry: routers, backends, workers, search-space
//! entries, blocks and scenarios, with the cross-field rules of each.

use super::document::{Issue, RawEntry};
use super::fields::{
    Fields, Issues, Path, as_bool, as_int, as_list, as_nonempty_string, as_string,
    not_image_version, opt_field, opt_positive, raw_entries, raw_map, required,
};
use super::model::{
    AgenticBlock, At, Backend, Component, FixedBlock, KvOffloading, ListField, MasterEntry, RawMap,
    Scenarios, SearchEntry, SpecDecoding, Worker,
};
use super::yaml::{Node, Value};

fn component(n: &Node, path: &Path, issues: &mut Issues) -> Option<Component> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let name = required(&mut f, "name", path, issues)
        .and_then(|v| as_nonempty_string(v, &Path::Key(path, "name"), issues));
    let version = required(&mut f, "version", path, issues)
        .and_then(|v| as_nonempty_string(v, &Path::Key(path, "version"), issues))
        .filter(|v| not_image_version(v, &Path::Key(path, "version"), issues));
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    Some(Component {
        pos: n.pos,
        name: name?,
        version: version?,
        raw: raw_map(n),
    })
}

fn backend(n: &Node, path: &Path, issues: &mut Issues) -> Option<Backend> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let name = required(&mut f, "name", path, issues)
        .and_then(|v| as_nonempty_string(v, &Path::Key(path, "name"), issues));
    let version = opt_field(&mut f, "version", path, issues, |v, p, i| {
        as_nonempty_string(v, p, i).filter(|s| not_image_version(s, p, i))
    });
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    Some(Backend {
        pos: n.pos,
        name: name?,
        version: version.ok()?,
        raw: raw_map(n),
    })
}

fn worker(n: &Node, path: &Path, issues: &mut Issues) -> Option<Worker> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let num_worker = required(&mut f, "num-worker", path, issues)
        .and_then(|v| as_int(v, &Path::Key(path, "num-worker"), issues));
    let tp = required(&mut f, "tp", path, issues)
        .and_then(|v| as_int(v, &Path::Key(path, "tp"), issues));
    let pp = opt_positive(&mut f, "pp", path, issues);
    let dcp = opt_positive(&mut f, "dcp-size", path, issues);
    let pcp = opt_positive(&mut f, "pcp-size", path, issues);
    let ep = required(&mut f, "ep", path, issues)
        .and_then(|v| as_int(v, &Path::Key(path, "ep"), issues));
    let dp_attn = required(&mut f, "dp-attn", path, issues)
        .and_then(|v| as_bool(v, &Path::Key(path, "dp-attn"), issues));
    let hardware_node = f.get("hardware");
    let hardware = opt_field(&mut f, "hardware", path, issues, as_nonempty_string);
    let settings = match f.get("additional-settings") {
        None => Ok(None),
        Some(Node {
            value: Value::Null,
            pos,
        }) => Ok(Some(At::new(None, *pos))),
        Some(node) => {
            let p = Path::Key(path, "additional-settings");
            match as_list(node, &p, issues) {
                None => Err(()),
                Some(items) => {
                    let b = issues.len();
                    let v: Vec<At<String>> = items
                        .iter()
                        .enumerate()
                        .filter_map(|(i, s)| as_string(s, &Path::Index(&p, i), issues))
                        .collect();
                    if issues.len() == b {
                        Ok(Some(At::new(Some(v), node.pos)))
                    } else {
                        Err(())
                    }
                }
            }
        }
    };
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    let (tp, dcp) = (tp?, dcp.ok()?);
    let dcp_v = dcp.as_ref().map_or(1, |d| d.value);
    if tp.value.rem_euclid(dcp_v) != 0 {
        issues.push(
            n.pos,
            path,
            format!(
                "Value error, 'tp' ({}) must be divisible by 'dcp-size' ({dcp_v})",
                tp.value
            ),
        );
        return None;
    }
    let mut entries = raw_entries(n);
    for key in ["pp", "dcp-size", "pcp-size"] {
        if !entries.iter().any(|(k, _)| k == key) {
            entries.push((key.to_string(), serde_json::Value::from(1)));
        }
    }
    Some(Worker {
        pos: n.pos,
        num_worker: num_worker?,
        tp,
        pp: pp.ok()?,
        dcp_size: dcp,
        pcp_size: pcp.ok()?,
        ep: ep?,
        dp_attn: dp_attn?,
        hardware: hardware.ok()?,
        additional_settings: settings.ok()?,
        normalized: RawMap::new(entries),
        hardware_truthy: hardware_node.is_some_and(|h| h.value.truthy()),
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    SnFixed,
    MnFixed,
    Agentic,
}

fn spec_decoding(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<SpecDecoding>> {
    let v = match n.value.as_str() {
        Some("mtp") => SpecDecoding::Mtp,
        Some("draft_model") => SpecDecoding::DraftModel,
        Some("none") => SpecDecoding::None,
        _ => {
            issues.push(
                n.pos,
                path,
                "Input should be 'mtp', 'draft_model' or 'none'",
            );
            return None;
        }
    };
    Some(At::new(v, n.pos))
}

fn kv_offloading(n: &Node, path: &Path, issues: &mut Issues) -> Option<At<KvOffloading>> {
    let v = match n.value.as_str() {
        Some("none") => KvOffloading::None,
        Some("dram") => KvOffloading::Dram,
        _ => {
            issues.push(n.pos, path, "Input should be 'none' or 'dram'");
            return None;
        }
    };
    Some(At::new(v, n.pos))
}

/// A field whose explicit null is kept as "present but null".
fn nullable<T>(
    f: &mut Fields,
    key: &str,
    path: &Path,
    issues: &mut Issues,
    conv: impl Fn(&Node, &Path, &mut Issues) -> Option<T>,
) -> Result<Option<At<Option<T>>>, ()> {
    match f.get(key) {
        None => Ok(None),
        Some(n) if n.value == Value::Null => Ok(Some(At::new(None, n.pos))),
        Some(n) => conv(n, &Path::Key(path, key), issues)
            .map(|v| Some(At::new(Some(v), n.pos)))
            .ok_or(()),
    }
}

fn search_entry(
    n: &Node,
    kind: EntryKind,
    path: &Path,
    issues: &mut Issues,
) -> Option<SearchEntry> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let sn_like = kind != EntryKind::MnFixed;
    let tp = match kind {
        EntryKind::SnFixed => required(&mut f, "tp", path, issues)
            .and_then(|v| as_int(v, &Path::Key(path, "tp"), issues))
            .map(Some)
            .ok_or(()),
        EntryKind::Agentic => opt_field(&mut f, "tp", path, issues, as_int),
        EntryKind::MnFixed => Ok(None),
    };
    // Written-ness of pp/dcp/pcp matters for multi-node agentic entries.
    let wrote_pp_family = f.has("pp") || f.has("dcp-size") || f.has("pcp-size");
    let (pp, dcp, pcp, ep, dp_attn) = if sn_like {
        (
            opt_positive(&mut f, "pp", path, issues),
            opt_positive(&mut f, "dcp-size", path, issues),
            opt_positive(&mut f, "pcp-size", path, issues),
            opt_field(&mut f, "ep", path, issues, as_int),
            opt_field(&mut f, "dp-attn", path, issues, as_bool),
        )
    } else {
        (Ok(None), Ok(None), Ok(None), Ok(None), Ok(None))
    };
    let spec = match f.get("spec-decoding") {
        None => Ok(None),
        Some(v) => spec_decoding(v, &Path::Key(path, "spec-decoding"), issues)
            .map(Some)
            .ok_or(()),
    };
    let (prefill, decode) = match kind {
        EntryKind::MnFixed => (
            required(&mut f, "prefill", path, issues)
                .and_then(|v| worker(v, &Path::Key(path, "prefill"), issues))
                .map(Some)
                .ok_or(()),
            required(&mut f, "decode", path, issues)
                .and_then(|v| worker(v, &Path::Key(path, "decode"), issues))
                .map(Some)
                .ok_or(()),
        ),
        EntryKind::Agentic => (
            opt_field(&mut f, "prefill", path, issues, worker),
            opt_field(&mut f, "decode", path, issues, worker),
        ),
        EntryKind::SnFixed => (Ok(None), Ok(None)),
    };
    let router = nullable(&mut f, "router", path, issues, component);
    let kv_p2p = if kind == EntryKind::SnFixed {
        Ok(None)
    } else {
        nullable(&mut f, "kv-p2p-transfer", path, issues, as_nonempty_string)
            .map(|o| o.map(|a| At::new(a.value.map(|s| s.value), a.pos)))
    };
    let (kv_off, backend_v) = if kind == EntryKind::Agentic {
        (
            opt_field(&mut f, "kv-offloading", path, issues, kv_offloading),
            opt_field(&mut f, "kv-offload-backend", path, issues, backend),
        )
    } else {
        (Ok(None), Ok(None))
    };
    let conc_start = opt_field(&mut f, "conc-start", path, issues, as_int);
    let conc_end = opt_field(&mut f, "conc-end", path, issues, as_int);
    let conc_list = match f.get("conc-list") {
        None => Ok(None),
        Some(Node {
            value: Value::Null,
            pos,
        }) => Ok(Some(At::new(None, *pos))),
        Some(node) => {
            let p = Path::Key(path, "conc-list");
            match as_list(node, &p, issues) {
                None => Err(()),
                Some(items) => {
                    let b = issues.len();
                    let v: Vec<i64> = items
                        .iter()
                        .enumerate()
                        .filter_map(|(i, c)| {
                            as_int(c, &Path::Index(&p, i), issues).map(|a| a.value)
                        })
                        .collect();
                    if issues.len() == b {
                        Ok(Some(At::new(Some(v), node.pos)))
                    } else {
                        Err(())
                    }
                }
            }
        }
    };
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    let e = SearchEntry {
        pos: n.pos,
        tp: tp.ok()?,
        pp: pp.ok()?,
        dcp_size: dcp.ok()?,
        pcp_size: pcp.ok()?,
        ep: ep.ok()?,
        dp_attn: dp_attn.ok()?,
        spec_decoding: spec.ok()?,
        prefill: prefill.ok()?,
        decode: decode.ok()?,
        router: router.ok()?,
        kv_p2p_transfer: kv_p2p.ok()?,
        kv_offloading: kv_off.ok()?,
        kv_offload_backend: backend_v.ok()?,
        conc_start: conc_start.ok()?,
        conc_end: conc_end.ok()?,
        conc_list: conc_list.ok()?,
    };
    match entry_rules(&e, kind, wrote_pp_family) {
        Ok(()) => Some(e),
        Err(msg) => {
            issues.push(n.pos, path, format!("Value error, {msg}"));
            None
        }
    }
}

/// The cross-field rules of one search-space entry (first failure).
fn entry_rules(e: &SearchEntry, kind: EntryKind, wrote_pp_family: bool) -> Result<(), String> {
    let has_range = e.conc_start.is_some() && e.conc_end.is_some();
    let list = e.nonempty_conc_list();
    match (has_range, list) {
        (true, Some(_)) => {
            return Err("Cannot specify both 'conc-list' list and 'conc-start'/'conc-end' range. Use either 'conc-list' or 'conc-start'/'conc-end', not both.".into());
        }
        (false, None) => {
            return Err(
                "Must specify either 'conc-list' list or both 'conc-start' and 'conc-end'.".into(),
            );
        }
        (true, None) => {
            let (s, t) = (
                e.conc_start.as_ref().map_or(0, |v| v.value),
                e.conc_end.as_ref().map_or(0, |v| v.value),
            );
            if s <= 0 || t <= 0 {
                return Err("Input 'conc-start' and 'conc-end' must be greater than 0.".into());
            }
            if s > t {
                return Err(format!("'conc-start' ({s}) must be <= 'conc-end' ({t})."));
            }
        }
        (false, Some(l)) => {
            if l.iter().any(|&c| c <= 0) {
                return Err("Input 'conc-list' entries must be greater than 0.".into());
            }
        }
    }
    let tp_divisible = |tp: i64, dcp: i64| -> Result<(), String> {
        if tp.rem_euclid(dcp) != 0 {
            Err(format!(
                "'tp' ({tp}) must be divisible by 'dcp-size' ({dcp})"
            ))
        } else {
            Ok(())
        }
    };
    let hardware_pair = |p: &Worker, d: &Worker| -> Result<(), String> {
        if p.hardware_truthy != d.hardware_truthy {
            Err("'hardware' must be specified for both 'prefill' and 'decode', or neither".into())
        } else {
            Ok(())
        }
    };
    match kind {
        EntryKind::SnFixed => {
            if let Some(tp) = &e.tp {
                tp_divisible(tp.value, e.dcp_size())?;
            }
        }
        EntryKind::MnFixed => {
            if let (Some(p), Some(d)) = (&e.prefill, &e.decode) {
                hardware_pair(p, d)?;
            }
        }
        EntryKind::Agentic => {
            let workers = e.prefill.is_some() && e.decode.is_some();
            let any_worker = e.prefill.is_some() || e.decode.is_some();
            match &e.tp {
                Some(_) if any_worker => {
                    return Err("Agentic search-space entries must specify either tp or both prefill and decode".into());
                }
                None if !workers => {
                    return Err("Agentic search-space entries must specify either tp or both prefill and decode".into());
                }
                _ => {}
            }
            if let Some(tp) = &e.tp {
                if e.kv_offloading.is_none() {
                    return Err(
                        "Single-node agentic search-space entries must specify kv-offloading"
                            .into(),
                    );
                }
                tp_divisible(tp.value, e.dcp_size())?;
            } else if let (Some(p), Some(d)) = (&e.prefill, &e.decode) {
                if wrote_pp_family {
                    return Err("Multinode agentic search-space entries cannot specify 'pp', 'dcp-size', 'pcp-size'; set them on the prefill/decode workers".into());
                }
                hardware_pair(p, d)?;
            }
            match (
                e.kv_offloading.as_ref().map(|k| k.value),
                e.kv_offload_backend.is_some(),
            ) {
                (None, true) => return Err("kv-offload-backend requires kv-offloading".into()),
                (Some(KvOffloading::None), true) => {
                    return Err(
                        "kv-offload-backend can only be set when kv-offloading is not 'none'"
                            .into(),
                    );
                }
                (Some(KvOffloading::Dram), false) => {
                    return Err(
                        "kv-offload-backend is required when kv-offloading is 'dram'".into(),
                    );
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn search_space(
    f: &mut Fields,
    kind: EntryKind,
    path: &Path,
    issues: &mut Issues,
) -> Option<Vec<SearchEntry>> {
    let node = required(f, "search-space", path, issues)?;
    let p = Path::Key(path, "search-space");
    let items = as_list(node, &p, issues)?;
    let before = issues.len();
    let out: Vec<SearchEntry> = items
        .iter()
        .enumerate()
        .filter_map(|(i, n)| search_entry(n, kind, &Path::Index(&p, i), issues))
        .collect();
    (issues.len() == before).then_some(out)
}

fn fixed_block(n: &Node, multinode: bool, path: &Path, issues: &mut Issues) -> Option<FixedBlock> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let isl = required(&mut f, "isl", path, issues)
        .and_then(|v| as_int(v, &Path::Key(path, "isl"), issues));
    let osl = required(&mut f, "osl", path, issues)
        .and_then(|v| as_int(v, &Path::Key(path, "osl"), issues));
    let kind = if multinode {
        EntryKind::MnFixed
    } else {
        EntryKind::SnFixed
    };
    let ss = search_space(&mut f, kind, path, issues);
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    Some(FixedBlock {
        pos: n.pos,
        isl: isl?,
        osl: osl?,
        search_space: ss?,
    })
}

fn agentic_block(n: &Node, path: &Path, issues: &mut Issues) -> Option<AgenticBlock> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let util = opt_field(&mut f, "dram-utilization", path, issues, |v, p, i| {
        let x = match v.value {
            Value::Float(x) => x,
            // pydantic's float accepts integers.
            Value::Int(x) => x as f64,
            _ => {
                i.push(v.pos, p, "Input should be a valid number");
                return None;
            }
        };
        if x.is_nan() || x <= 0.0 {
            i.push(v.pos, p, "Input should be greater than 0");
            return None;
        }
        if x > 1.0 {
            i.push(v.pos, p, "Input should be less than or equal to 1");
            return None;
        }
        Some(At::new(x, v.pos))
    });
    let ss = search_space(&mut f, EntryKind::Agentic, path, issues);
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    let b = AgenticBlock {
        pos: n.pos,
        dram_utilization: util.ok()?,
        search_space: ss?,
    };
    let uses_dram = b.search_space.iter().any(|e| {
        e.kv_offloading
            .as_ref()
            .is_some_and(|k| k.value == KvOffloading::Dram)
    });
    if uses_dram && b.dram_utilization.is_none() {
        issues.push(
            n.pos,
            path,
            "Value error, dram-utilization is required when any search-space entry uses kv-offloading: dram",
        );
        return None;
    }
    Some(b)
}

fn block_list<T>(
    f: &mut Fields,
    key: &str,
    path: &Path,
    issues: &mut Issues,
    conv: impl Fn(&Node, &Path, &mut Issues) -> Option<T>,
) -> Option<ListField<T>> {
    match f.get(key) {
        None => Some(ListField::Absent),
        Some(Node {
            value: Value::Null,
            pos,
        }) => Some(ListField::Null(*pos)),
        Some(node) => {
            let p = Path::Key(path, key);
            let items = as_list(node, &p, issues)?;
            let before = issues.len();
            let v: Vec<T> = items
                .iter()
                .enumerate()
                .filter_map(|(i, n)| conv(n, &Path::Index(&p, i), issues))
                .collect();
            (issues.len() == before).then_some(ListField::List(node.pos, v))
        }
    }
}

fn scenarios(n: &Node, multinode: bool, path: &Path, issues: &mut Issues) -> Option<Scenarios> {
    let before = issues.len();
    let mut f = Fields::of(n, path, issues)?;
    let fixed = block_list(&mut f, "fixed-seq-len", path, issues, |n, p, i| {
        fixed_block(n, multinode, p, i)
    });
    let agentic = block_list(&mut f, "agentic-coding", path, issues, agentic_block);
    f.finish(path, issues);
    if issues.len() != before {
        return None;
    }
    let s = Scenarios {
        pos: n.pos,
        fixed_seq_len: fixed?,
        agentic_coding: agentic?,
    };
    if s.fixed_seq_len.items().is_empty() && s.agentic_coding.items().is_empty() {
        issues.push(
            n.pos,
            path,
            "Value error, At least one scenario type must be specified",
        );
        return None;
    }
    Some(s)
}

pub(super) fn validate_entry(raw: &RawEntry) -> Result<MasterEntry, Vec<Issue>> {
    let mut issues = Issues::default();
    let entry = validate_entry_inner(raw, &mut issues);
    match entry {
        Some(e) if issues.0.is_empty() => Ok(e),
        _ => {
            if issues.0.is_empty() {
                issues.push(raw.pos, &Path::Root, "invalid entry");
            }
            Err(issues.0)
        }
    }
}

fn validate_entry_inner(raw: &RawEntry, issues: &mut Issues) -> Option<MasterEntry> {
    let root = Path::Root;
    let node = &raw.node;
    // The schema is chosen by the truthiness of `multinode` (spec §2.1).
    let multinode = match &node.value {
        Value::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| k.value.as_str() == Some("multinode"))
            .is_some_and(|(_, v)| v.value.truthy()),
        _ => false,
    };
    let mut f = Fields::of(node, &root, issues)?;
    let s = |f: &mut Fields, key: &str, issues: &mut Issues| {
        required(f, key, &root, issues).and_then(|v| as_string(v, &Path::Key(&root, key), issues))
    };
    let image = s(&mut f, "image", issues);
    let model = s(&mut f, "model", issues);
    let model_prefix = s(&mut f, "model-prefix", issues);
    let precision = s(&mut f, "precision", issues);
    let framework = s(&mut f, "framework", issues);
    let runner = s(&mut f, "runner", issues);
    let mn = required(&mut f, "multinode", &root, issues).and_then(|v| {
        let p = Path::Key(&root, "multinode");
        match (&v.value, multinode) {
            (Value::Bool(b), _) if *b == multinode => Some(At::new(*b, v.pos)),
            (_, true) => {
                issues.push(v.pos, &p, "Input should be True");
                None
            }
            (_, false) => {
                issues.push(v.pos, &p, "Input should be False");
                None
            }
        }
    });
    let disagg = match f.get("disagg") {
        None => Ok(None),
        Some(v) => {
            let p = Path::Key(&root, "disagg");
            match (as_bool(v, &p, issues), multinode) {
                (Some(b), true) => Ok(Some(b)),
                (Some(b), false) if !b.value => Ok(Some(b)),
                (Some(_), false) => {
                    issues.push(v.pos, &p, "Input should be False");
                    Err(())
                }
                (None, _) => Err(()),
            }
        }
    };
    let router = opt_field(&mut f, "router", &root, issues, component);
    let kv_p2p = if multinode {
        opt_field(&mut f, "kv-p2p-transfer", &root, issues, as_nonempty_string)
    } else {
        Ok(None)
    };
    let scen = required(&mut f, "scenarios", &root, issues)
        .and_then(|v| scenarios(v, multinode, &Path::Key(&root, "scenarios"), issues));
    f.finish(&root, issues);
    if !issues.0.is_empty() {
        return None;
    }
    let e = MasterEntry {
        file: raw.file.clone(),
        key: raw.key.clone(),
        pos: raw.pos,
        image: image?,
        model: model?,
        model_prefix: model_prefix?,
        precision: precision?,
        framework: framework?,
        runner: runner?,
        multinode: mn?,
        disagg: disagg.ok()?,
        router: router.ok()?,
        kv_p2p_transfer: kv_p2p.ok()?,
        scenarios: scen?,
    };
    if let Err(msg) = master_rules(&e) {
        issues.push(e.pos, &root, format!("Value error, {msg}"));
        return None;
    }
    Some(e)
}

/// The cross-field rules of a master entry.
fn master_rules(e: &MasterEntry) -> Result<(), String> {
    if !e.scenarios.agentic_coding.items().is_empty() && !e.runner.value.starts_with("cluster:") {
        return Err(format!(
            "Agentic master configs must use a 'cluster:<name>' runner label, got '{}'",
            e.runner.value
        ));
    }
    if e.router.is_some() && e.search_entries().any(SearchEntry::has_router) {
        return Err("'router' must be declared either at the top level or in search-space entries, not both".into());
    }
    if e.kv_p2p_transfer.is_some() && e.search_entries().any(SearchEntry::has_kv_p2p) {
        return Err("'kv-p2p-transfer' must be declared either at the top level or in search-space entries, not both".into());
    }
    if !e.multinode.value && e.search_entries().any(SearchEntry::has_kv_p2p) {
        return Err("kv-p2p-transfer is only valid when multinode=true".into());
    }
    if e.disagg() && e.kv_p2p_transfer.is_none() {
        let mut entries = e.search_entries().peekable();
        if entries.peek().is_none() || !entries.all(SearchEntry::has_kv_p2p) {
            return Err("disagg=true requires kv-p2p-transfer at the top level or in every search-space entry".into());
        }
    }
    Ok(())
}
