//! Master configs as the checks read them: entries with their search
//! rows, parsed once per text (a small cache), and re-parsed incrementally
//! from the base side's parse.

use std::collections::BTreeSet;

use crate::recipe::changelog::{
    self,
    yaml::{Node, Value},
};

/// One search-space row, flattened (multi-node rows take the decode side).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SearchRow {
    pub agentic: bool,
    pub isl: Option<i64>,
    pub osl: Option<i64>,
    pub tp: Option<i64>,
    pub ep: Option<i64>,
    pub dp_attn: bool,
    pub spec: String,
    pub conc: Vec<i64>,
    /// `additional-settings` items of the row (and its roles), with lines.
    pub settings: Vec<(String, usize)>,
    pub kv_offloading: Option<String>,
    pub line: usize,
}

/// A master-config entry with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct MasterEntry {
    pub key: String,
    pub file: String,
    pub line: usize,
    /// Shared: the checks' facts copy entries, not their trees.
    pub node: std::sync::Arc<Node>,
}

impl MasterEntry {
    pub(crate) fn str(&self, field: &str) -> Option<&str> {
        self.node.get(field).and_then(Node::as_str)
    }
    pub(crate) fn field_line(&self, field: &str) -> usize {
        self.node.get(field).map_or(self.line, |n| n.line())
    }
    pub(crate) fn flag(&self, field: &str) -> bool {
        self.node
            .get(field)
            .and_then(Node::as_bool)
            .unwrap_or(false)
    }
    pub(crate) fn image(&self) -> &str {
        self.str("image").unwrap_or("")
    }
    pub(crate) fn framework(&self) -> &str {
        self.str("framework").unwrap_or("")
    }
    pub fn prefix(&self) -> &str {
        self.str("model-prefix")
            .unwrap_or_else(|| self.key.split('-').next().unwrap_or(""))
    }
    pub fn precision(&self) -> &str {
        self.str("precision").unwrap_or("")
    }
    pub(crate) fn runner(&self) -> &str {
        self.str("runner").unwrap_or("")
    }
    pub(crate) fn model(&self) -> &str {
        self.str("model").unwrap_or("")
    }
    /// SKU: the key's third token, else the runner label's.
    pub fn sku(&self) -> String {
        crate::checks::engine_first::key_sku(&self.key, self.runner())
    }
    /// Multi-node or disaggregated (§0.4.3).
    pub(crate) fn is_multinode(&self) -> bool {
        let fw = self.framework();
        self.flag("multinode")
            || self.flag("disagg")
            || fw.starts_with("dynamo-")
            || matches!(
                fw,
                "sglang-disagg" | "vllm-disagg" | "atom-disagg" | "llmd-vllm" | "tilert"
            )
    }
    pub(crate) fn family(&self) -> Family {
        family_of(self.framework())
    }

    /// Every search-space row of every scenario.
    pub(crate) fn rows(&self) -> Vec<SearchRow> {
        let mut out = Vec::new();
        // Before `scenarios`, fixed-length blocks were `seq-len-configs`
        // (`ccb35ab` #1040, `.github/configs/amd-master.yaml:270`): the
        // same rows, so the key's scripts are found as lint's routes find
        // them.
        if let Some(blocks) = self.node.get("seq-len-configs").and_then(Node::as_seq) {
            block_rows(blocks, false, &mut out);
        }
        if let Some(scen) = self.node.get("scenarios").and_then(Node::as_map) {
            for (k, blocks) in scen {
                let agentic = k.as_str() == Some("agentic-coding");
                block_rows(blocks.as_seq().unwrap_or(&[]), agentic, &mut out);
            }
        }
        out
    }

    pub(crate) fn has_agentic(&self) -> bool {
        self.node
            .get("scenarios")
            .and_then(|s| s.get("agentic-coding"))
            .is_some()
    }

    pub(crate) fn has_fixed(&self) -> bool {
        self.node.get("seq-len-configs").is_some()
            || self
                .node
                .get("scenarios")
                .and_then(|s| s.get("fixed-seq-len"))
                .is_some()
    }

    /// Every `additional-settings` item of the entry.
    pub(crate) fn settings(&self) -> Vec<(String, usize)> {
        self.rows().into_iter().flat_map(|r| r.settings).collect()
    }

    /// `CONFIG_FILE=` / `EVAL_CONFIG_FILE=` values.
    pub fn config_files(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (s, _) in self.settings() {
            for k in ["CONFIG_FILE=", "EVAL_CONFIG_FILE="] {
                if let Some(v) = s.trim().strip_prefix(k) {
                    // The file, as the lint's routes read it: a selector
                    // (`…/glm5-mtp.yaml:zip_override_mtp_8k1k_hightpt[0]`,
                    // `807fb7b` #2115) names an override inside it.
                    let v = crate::recipe::launcher::strip_override(v.trim().trim_matches('"'))
                        .to_owned();
                    if !out.contains(&v) {
                        out.push(v);
                    }
                }
            }
        }
        out
    }
}

/// The search-space rows of scenario blocks (each with its `isl`/`osl`).
fn block_rows(blocks: &[Node], agentic: bool, out: &mut Vec<SearchRow>) {
    for block in blocks {
        let isl = block.get("isl").and_then(Node::as_i64);
        let osl = block.get("osl").and_then(Node::as_i64);
        for row in block
            .get("search-space")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            out.push(search_row(row, agentic, isl, osl));
        }
    }
}

fn search_row(row: &Node, agentic: bool, isl: Option<i64>, osl: Option<i64>) -> SearchRow {
    let side = row.get("decode").unwrap_or(row);
    let int = |n: &Node, k: &str| n.get(k).and_then(Node::as_i64);
    let mut settings = Vec::new();
    for n in [Some(row), row.get("prefill"), row.get("decode")]
        .into_iter()
        .flatten()
    {
        for s in n
            .get("additional-settings")
            .and_then(Node::as_seq)
            .unwrap_or(&[])
        {
            if let Some(t) = s.as_str() {
                settings.push((t.to_owned(), s.line()));
            }
        }
    }
    let mut conc: Vec<i64> = row
        .get("conc-list")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(Node::as_i64)
        .collect();
    if conc.is_empty()
        && let (Some(a), Some(b)) = (int(row, "conc-start"), int(row, "conc-end"))
    {
        let mut c = a.max(1);
        while c <= b && conc.len() < 64 {
            conc.push(c);
            c *= 2;
        }
    }
    SearchRow {
        agentic,
        isl,
        osl,
        tp: int(side, "tp").or_else(|| int(row, "tp")),
        ep: int(side, "ep").or_else(|| int(row, "ep")),
        dp_attn: side
            .get("dp-attn")
            .or_else(|| row.get("dp-attn"))
            .and_then(Node::as_bool)
            .unwrap_or(false),
        spec: row
            .get("spec-decoding")
            .and_then(Node::as_str)
            .unwrap_or("none")
            .to_owned(),
        conc,
        settings,
        kv_offloading: row
            .get("kv-offloading")
            .and_then(Node::as_str)
            .map(str::to_owned),
        line: row.line(),
    }
}

/// Framework family (§0.4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    Vllm,
    Sglang,
    Other,
}

pub(crate) fn family_of(framework: &str) -> Family {
    match framework {
        "vllm" | "dynamo-vllm" | "vllm-disagg" | "llmd-vllm" => Family::Vllm,
        "sglang" | "dynamo-sglang" | "sglang-disagg" => Family::Sglang,
        _ => Family::Other,
    }
}

/// Structural equality of two YAML nodes, positions ignored.
pub(crate) fn node_eq(a: &Node, b: &Node) -> bool {
    match (&a.value, &b.value) {
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| node_eq(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| node_eq(k1, k2) && node_eq(v1, v2))
        }
        (x, y) => x == y,
    }
}

/// Parses the top-level entries of one master config.
pub(crate) fn parse_master(file: &str, text: &str) -> Result<Vec<MasterEntry>, String> {
    // A repeated key would silently lose a setting: the checks refuse the
    // file and say where (lint L31 reports it as a finding).
    let (root, dups) =
        crate::recipe::yaml::parse_with_duplicates(file, text.as_bytes()).map_err(|e| match e {
            crate::recipe::yaml::Failure::Utf8(p) => p.to_string(),
            crate::recipe::yaml::Failure::Yaml(err) => {
                crate::recipe::yaml::saphyr_error(file, &err).to_string()
            }
        })?;
    if let Some(d) = dups.first() {
        return Err(format!(
            "{file}:{}:{}: duplicate key `{}` (first at line {})",
            d.line, d.column, d.key, d.first_line
        ));
    }
    let mut out = Vec::new();
    match root.value {
        Value::Map(items) => {
            // Entries take their nodes: the parsed file is not copied.
            for (k, v) in items {
                if let Value::Str(key) = k.value {
                    out.push(MasterEntry {
                        key,
                        file: file.to_owned(),
                        line: k.pos.line as usize,
                        node: std::sync::Arc::new(v),
                    });
                }
            }
        }
        Value::Null => {}
        _ => return Err(format!("{file}: a master config must be a mapping")),
    }
    Ok(out)
}

/// Parse results by file content, shared by every snapshot of the process:
/// the base side of the PRs off one default-branch commit is the same text,
/// and the server reads a head's master configs before deriving facts from
/// them, so each text is parsed once. Bounded by the source bytes held.
pub(crate) struct ParseCache<T> {
    slots: std::sync::Mutex<Vec<CacheSlot<T>>>,
    max_bytes: usize,
}

struct CacheSlot<T> {
    file: String,
    /// The source itself: comparing it is cheaper than hashing it.
    text: std::sync::Arc<str>,
    value: std::sync::Arc<T>,
}

impl<T> ParseCache<T> {
    pub(crate) const fn new(max_bytes: usize) -> Self {
        Self {
            slots: std::sync::Mutex::new(Vec::new()),
            max_bytes,
        }
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<CacheSlot<T>>> {
        // A panic while holding the lock leaves a consistent Vec.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached value for `text` of `file`, or `parse()` stored.
    pub(crate) fn get_or(
        &self,
        file: &str,
        text: &str,
        parse: impl FnOnce() -> T,
    ) -> std::sync::Arc<T> {
        {
            let mut slots = self.slots();
            if let Some(i) = slots
                .iter()
                .position(|c| c.file == file && *c.text == *text)
            {
                // Most recently used last.
                let slot = slots.remove(i);
                let v = slot.value.clone();
                slots.push(slot);
                return v;
            }
        }
        // Parsed outside the lock: other snapshots are not held up.
        let value = std::sync::Arc::new(parse());
        if text.len() <= self.max_bytes / 2 {
            let mut slots = self.slots();
            slots.push(CacheSlot {
                file: file.to_owned(),
                text: std::sync::Arc::from(text),
                value: value.clone(),
            });
            while slots.iter().map(|c| c.text.len()).sum::<usize>() > self.max_bytes {
                slots.remove(0);
            }
        }
        value
    }

    pub(crate) fn clear(&self) {
        self.slots().clear();
    }
}

/// Master configs: about 8 versions of the real 320 KB nvidia file.
pub(super) static MASTER_CACHE: ParseCache<Result<Vec<MasterEntry>, String>> =
    ParseCache::new(3 << 20);
static CHANGELOG_CACHE: ParseCache<Result<changelog::Document, crate::recipe::ParseError>> =
    ParseCache::new(2 << 20);

/// [`parse_master`] through the process-wide cache.
pub fn parse_master_cached(
    file: &str,
    text: &str,
) -> std::sync::Arc<Result<Vec<MasterEntry>, String>> {
    MASTER_CACHE.get_or(file, text, || parse_master(file, text))
}

/// [`changelog::read`] through the process-wide cache.
pub fn read_changelog_cached(
    file: &str,
    text: &str,
) -> std::sync::Arc<Result<changelog::Document, crate::recipe::ParseError>> {
    CHANGELOG_CACHE.get_or(file, text, || changelog::read(file, text.as_bytes()))
}

/// Empties the parse caches (benchmarks measure a cold process with it).
pub fn clear_parse_caches() {
    MASTER_CACHE.clear();
    CHANGELOG_CACHE.clear();
}

/// Top-level blocks of a master config (first line, 0-based, and text up
/// to the next top-level key), or `None` unless every column-0 content
/// line is a plain `key:` line and nothing could be an anchor, alias,
/// directive or document marker: then blocks are independent documents.
fn top_blocks(text: &str) -> Option<Vec<(usize, &str)>> {
    let mut starts: Vec<(usize, usize)> = Vec::new();
    let mut offset = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        let t = line.trim_start();
        if !t.is_empty() && !t.starts_with('#') {
            if changelog::may_anchor_in_line(line) {
                return None;
            }
            if !line.starts_with([' ', '\t']) {
                const SPECIAL: [char; 16] = [
                    '-', '[', '{', '?', '&', '*', '!', '|', '>', '%', '@', '`', '"', '\'', '.',
                    '\u{feff}',
                ];
                if line.starts_with(SPECIAL) || !line.contains(':') {
                    return None;
                }
                starts.push((i, offset));
            } else if starts.is_empty() {
                return None;
            }
        }
        offset += raw.len();
    }
    if starts.is_empty() {
        return None;
    }
    Some(
        starts
            .iter()
            .enumerate()
            .map(|(j, &(line, at))| {
                let end = starts.get(j + 1).map_or(text.len(), |n| n.1);
                (line, &text[at..end])
            })
            .collect(),
    )
}

fn shift_node(n: &mut Node, from: usize, to: usize) {
    n.pos.line = u32::try_from(n.line() + to - from).unwrap_or(u32::MAX);
    match &mut n.value {
        Value::Seq(items) => items.iter_mut().for_each(|i| shift_node(i, from, to)),
        Value::Map(pairs) => pairs.iter_mut().for_each(|(k, v)| {
            shift_node(k, from, to);
            shift_node(v, from, to);
        }),
        _ => {}
    }
}

/// The head's entries, reusing the base's parse for every top-level block
/// whose text is unchanged (moved to its line in the head) and parsing each
/// changed block alone; the same entries as [`parse_master`] of `head`.
/// `None` when that cannot be shown (the caller parses the whole file).
/// On a PR touching one entry of a 320 KB master config this parses a few
/// hundred bytes instead of the file.
pub(crate) fn parse_master_reusing(
    file: &str,
    base: &str,
    base_entries: &[MasterEntry],
    head: &str,
) -> Option<Vec<MasterEntry>> {
    let bb = top_blocks(base)?;
    let hb = top_blocks(head)?;
    if bb.len() != base_entries.len() {
        return None;
    }
    let mut by_text: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, ((_, t), e)) in bb.iter().zip(base_entries).enumerate() {
        if !t.starts_with(&format!("{}:", e.key)) {
            return None;
        }
        by_text.entry(t).or_insert(i);
    }
    let mut out = Vec::with_capacity(hb.len());
    let mut keys = BTreeSet::new();
    for (line, text) in hb {
        let (mut e, from) = match by_text.get(text) {
            Some(&i) => (base_entries[i].clone(), bb[i].0),
            None => {
                let mut es = parse_master(file, text).ok()?;
                if es.len() != 1 {
                    return None;
                }
                (es.pop()?, 0)
            }
        };
        // Lines are 1-based; `from`/`line` are 0-based block starts.
        if !matches!(e.node.value, Value::Map(_)) || !keys.insert(e.key.clone()) {
            return None;
        }
        e.line = e.line + line - from;
        if line != from {
            shift_node(std::sync::Arc::make_mut(&mut e.node), from, line);
        }
        out.push(e);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(p: &str) -> String {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/data/inferencex")
                .join(p),
        )
        .unwrap()
    }

    #[test]
    fn reusing_the_base_parse_gives_the_full_parse() {
        let base = real("configs/nvidia-master.yaml");
        let be = parse_master("m.yaml", &base).unwrap();
        // An entry in the middle grows by two lines, one is appended.
        let key = &be[be.len() / 2].key;
        let at = base.find(&format!("\n{key}:\n")).unwrap() + key.len() + 3;
        let mut head = base.clone();
        head.insert_str(at, "  # a new comment\n  bench-extra-field: 1\n");
        head.push_str("zz-fp8-h200-vllm:\n  image: x\n  runner: h200\n");
        let reused = parse_master_reusing("m.yaml", &base, &be, &head);
        let full = parse_master("m.yaml", &head);
        match (reused, full) {
            (Some(r), Ok(f)) => assert!(r == f, "reused parse differs from the full parse"),
            (r, f) => panic!("reused {:?} full {:?}", r.is_some(), f.map(|x| x.len())),
        }
        // A duplicate key falls back to the full parse (which rejects it).
        let dup = format!("{head}{key}:\n  image: y\n");
        assert!(parse_master_reusing("m.yaml", &base, &be, &dup).is_none());
        assert!(parse_master("m.yaml", &dup).is_err());
    }

    #[test]
    fn reading_an_appended_changelog_tail_gives_the_full_read() {
        let base = real("perf-changelog.yaml");
        let b = changelog::read("c.yaml", base.as_bytes()).unwrap();
        let head = format!(
            "{base}\n# new\n- config-keys:\n    - a-fp8-*-vllm\n  description:\n    - \"x\"\n  pr-link: https://github.com/o/r/pull/1\n- config-keys: []\n"
        );
        let tail = changelog::read_appended("c.yaml", &base, b.items, &head).unwrap();
        let full = changelog::read("c.yaml", head.as_bytes()).unwrap();
        assert_eq!(tail.items, full.items);
        let new = |d: &changelog::Document| {
            (
                d.entries
                    .iter()
                    .filter(|e| e.index >= b.items)
                    .cloned()
                    .collect::<Vec<_>>(),
                d.errors
                    .iter()
                    .filter(|e| e.index >= b.items)
                    .cloned()
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(new(&tail), new(&full));
        assert_eq!(tail.errors.len(), 1);
        // Not an append: an edited base line.
        let edited = head.replacen("- config-keys:", "- config-keys:  ", 1);
        assert!(changelog::read_appended("c.yaml", &base, b.items, &edited).is_none());
    }

    #[test]
    fn master_rows_flatten_search_space() {
        let text = "k-fp4-b200-sglang:\n  image: lmsysorg/sglang:v1\n  model-prefix: k\n  precision: fp4\n  framework: sglang\n  runner: b200\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, ep: 1, conc-start: 4, conc-end: 16, spec-decoding: mtp }\n";
        let es = parse_master("m.yaml", text).unwrap();
        let rows = es[0].rows();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].tp, Some(8));
        assert_eq!(rows[0].conc, vec![4, 8, 16]);
        assert_eq!(rows[0].spec, "mtp");
        assert_eq!(es[0].sku(), "b200");
        assert!(!es[0].is_multinode());
    }
}
