//! Output rows of the four shapes (matrix spec §7), serialized with the
//! reference's key order, and the Python `json.dumps` output format.

use std::io;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::recipe::master::{RawMap, Worker};

/// Fields every row shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Common<'a> {
    pub image: &'a str,
    pub model: &'a str,
    pub model_prefix: &'a str,
    pub precision: &'a str,
    pub framework: &'a str,
    /// The runner label, or a node name under `--runner-node-filter`.
    pub runner: &'a str,
}

/// Fields that eval selection adds (never part of a parallelism key).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EvalFields {
    pub run_eval: Option<bool>,
    pub eval_conc: Option<i64>,
    pub eval_all_concs: Option<bool>,
    pub eval_only: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SnFixedRow<'a> {
    pub common: Common<'a>,
    pub isl: i64,
    pub osl: i64,
    pub tp: i64,
    pub pp: i64,
    pub dcp_size: i64,
    pub pcp_size: i64,
    pub conc: i64,
    pub ep: i64,
    pub dp_attn: bool,
    pub spec_decoding: &'static str,
    pub exp_name: String,
    pub router: Option<&'a RawMap>,
    pub eval: EvalFields,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MnFixedRow<'a> {
    pub common: Common<'a>,
    pub isl: i64,
    pub osl: i64,
    pub spec_decoding: &'static str,
    pub prefill: &'a Worker,
    pub decode: &'a Worker,
    pub conc: Vec<i64>,
    pub exp_name: String,
    pub disagg: bool,
    pub router: Option<&'a RawMap>,
    pub kv_p2p_transfer: Option<&'a str>,
    pub eval: EvalFields,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SnAgenticRow<'a> {
    pub common: Common<'a>,
    pub tp: i64,
    pub pp: i64,
    pub dcp_size: i64,
    pub pcp_size: i64,
    pub ep: i64,
    pub dp_attn: bool,
    pub spec_decoding: &'static str,
    pub conc: i64,
    pub kv_offloading: &'static str,
    pub total_cpu_dram_gb: i64,
    pub exp_name: String,
    pub kv_offload_backend: Option<&'a RawMap>,
    pub router: Option<&'a RawMap>,
    pub eval: EvalFields,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MnAgenticRow<'a> {
    pub common: Common<'a>,
    pub spec_decoding: &'static str,
    pub prefill: &'a Worker,
    pub decode: &'a Worker,
    pub conc: Vec<i64>,
    pub kv_offloading: &'static str,
    pub total_cpu_dram_gb: i64,
    pub exp_name: String,
    pub disagg: bool,
    pub kv_offload_backend: Option<&'a RawMap>,
    pub router: Option<&'a RawMap>,
    pub kv_p2p_transfer: Option<&'a str>,
    pub eval: EvalFields,
}

/// One matrix row. Borrows strings and verbatim mappings from the configs.
#[derive(Debug, Clone, PartialEq)]
pub enum Row<'a> {
    SnFixed(SnFixedRow<'a>),
    MnFixed(MnFixedRow<'a>),
    SnAgentic(SnAgenticRow<'a>),
    MnAgentic(MnAgenticRow<'a>),
}

/// The agentic duration the generator fixes.
pub(crate) const AGENTIC_DURATION: i64 = 3600;
const SCENARIO_TYPE: &str = "agentic-coding";

impl Row<'_> {
    pub fn eval(&self) -> &EvalFields {
        match self {
            Row::SnFixed(r) => &r.eval,
            Row::MnFixed(r) => &r.eval,
            Row::SnAgentic(r) => &r.eval,
            Row::MnAgentic(r) => &r.eval,
        }
    }
    pub(crate) fn eval_mut(&mut self) -> &mut EvalFields {
        match self {
            Row::SnFixed(r) => &mut r.eval,
            Row::MnFixed(r) => &mut r.eval,
            Row::SnAgentic(r) => &mut r.eval,
            Row::MnAgentic(r) => &mut r.eval,
        }
    }
    /// The row as a `serde_json::Value`.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

fn common_fields<M: SerializeMap>(m: &mut M, c: &Common) -> Result<(), M::Error> {
    m.serialize_entry("image", c.image)?;
    m.serialize_entry("model", c.model)?;
    m.serialize_entry("model-prefix", c.model_prefix)?;
    m.serialize_entry("precision", c.precision)?;
    m.serialize_entry("framework", c.framework)?;
    m.serialize_entry("runner", c.runner)
}

fn opt<M: SerializeMap, T: Serialize + ?Sized>(
    m: &mut M,
    key: &str,
    v: Option<&T>,
) -> Result<(), M::Error> {
    match v {
        Some(v) => m.serialize_entry(key, v),
        None => Ok(()),
    }
}

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        // Key order follows the reference's dict insertion order.
        match self {
            Row::SnFixed(r) => {
                common_fields(&mut m, &r.common)?;
                m.serialize_entry("isl", &r.isl)?;
                m.serialize_entry("osl", &r.osl)?;
                m.serialize_entry("tp", &r.tp)?;
                m.serialize_entry("pp", &r.pp)?;
                m.serialize_entry("dcp-size", &r.dcp_size)?;
                m.serialize_entry("pcp-size", &r.pcp_size)?;
                m.serialize_entry("conc", &r.conc)?;
                m.serialize_entry("max-model-len", &(r.isl + r.osl + 256))?;
                m.serialize_entry("ep", &r.ep)?;
                m.serialize_entry("dp-attn", &r.dp_attn)?;
                m.serialize_entry("spec-decoding", r.spec_decoding)?;
                m.serialize_entry("exp-name", &r.exp_name)?;
                m.serialize_entry("disagg", &false)?;
                opt(&mut m, "run-eval", r.eval.run_eval.as_ref())?;
                opt(&mut m, "router", r.router)?;
                opt(&mut m, "eval-only", r.eval.eval_only.as_ref())?;
            }
            Row::MnFixed(r) => {
                common_fields(&mut m, &r.common)?;
                m.serialize_entry("isl", &r.isl)?;
                m.serialize_entry("osl", &r.osl)?;
                m.serialize_entry("spec-decoding", r.spec_decoding)?;
                m.serialize_entry("prefill", &r.prefill.normalized)?;
                m.serialize_entry("decode", &r.decode.normalized)?;
                m.serialize_entry("conc", &r.conc)?;
                m.serialize_entry("max-model-len", &(r.isl + r.osl + 256))?;
                m.serialize_entry("exp-name", &r.exp_name)?;
                m.serialize_entry("disagg", &r.disagg)?;
                opt(&mut m, "run-eval", r.eval.run_eval.as_ref())?;
                opt(&mut m, "router", r.router)?;
                opt(&mut m, "kv-p2p-transfer", r.kv_p2p_transfer)?;
                opt(&mut m, "eval-conc", r.eval.eval_conc.as_ref())?;
                opt(&mut m, "eval-all-concs", r.eval.eval_all_concs.as_ref())?;
                opt(&mut m, "eval-only", r.eval.eval_only.as_ref())?;
            }
            Row::SnAgentic(r) => {
                common_fields(&mut m, &r.common)?;
                m.serialize_entry("tp", &r.tp)?;
                m.serialize_entry("pp", &r.pp)?;
                m.serialize_entry("dcp-size", &r.dcp_size)?;
                m.serialize_entry("pcp-size", &r.pcp_size)?;
                m.serialize_entry("ep", &r.ep)?;
                m.serialize_entry("dp-attn", &r.dp_attn)?;
                m.serialize_entry("spec-decoding", r.spec_decoding)?;
                m.serialize_entry("conc", &r.conc)?;
                m.serialize_entry("kv-offloading", r.kv_offloading)?;
                m.serialize_entry("total-cpu-dram-gb", &r.total_cpu_dram_gb)?;
                m.serialize_entry("duration", &AGENTIC_DURATION)?;
                m.serialize_entry("exp-name", &r.exp_name)?;
                m.serialize_entry("scenario-type", SCENARIO_TYPE)?;
                opt(&mut m, "kv-offload-backend", r.kv_offload_backend)?;
                opt(&mut m, "router", r.router)?;
                opt(&mut m, "run-eval", r.eval.run_eval.as_ref())?;
                opt(&mut m, "eval-only", r.eval.eval_only.as_ref())?;
            }
            Row::MnAgentic(r) => {
                common_fields(&mut m, &r.common)?;
                m.serialize_entry("spec-decoding", r.spec_decoding)?;
                m.serialize_entry("prefill", &r.prefill.normalized)?;
                m.serialize_entry("decode", &r.decode.normalized)?;
                m.serialize_entry("conc", &r.conc)?;
                m.serialize_entry("kv-offloading", r.kv_offloading)?;
                m.serialize_entry("total-cpu-dram-gb", &r.total_cpu_dram_gb)?;
                m.serialize_entry("duration", &AGENTIC_DURATION)?;
                m.serialize_entry("exp-name", &r.exp_name)?;
                m.serialize_entry("disagg", &r.disagg)?;
                m.serialize_entry("scenario-type", SCENARIO_TYPE)?;
                opt(&mut m, "kv-offload-backend", r.kv_offload_backend)?;
                opt(&mut m, "router", r.router)?;
                opt(&mut m, "kv-p2p-transfer", r.kv_p2p_transfer)?;
                opt(&mut m, "run-eval", r.eval.run_eval.as_ref())?;
                opt(&mut m, "eval-conc", r.eval.eval_conc.as_ref())?;
                opt(&mut m, "eval-only", r.eval.eval_only.as_ref())?;
            }
        }
        m.end()
    }
}

/// `json.dumps` defaults: `", "` and `": "` separators, ASCII-only output.
struct PyFormatter;

impl serde_json::ser::Formatter for PyFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if fragment.bytes().all(|b| b < 0x7f) {
            return w.write_all(fragment.as_bytes());
        }
        let mut buf = [0u16; 2];
        for ch in fragment.chars() {
            if (ch as u32) < 0x7f {
                let mut b = [0u8; 4];
                w.write_all(ch.encode_utf8(&mut b).as_bytes())?;
            } else {
                for unit in ch.encode_utf16(&mut buf) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
}

/// Writes any serializable value as Python's `json.dumps` would (no newline).
pub(crate) fn write_python_json<T: Serialize + ?Sized>(
    w: &mut impl io::Write,
    value: &T,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, PyFormatter);
    value.serialize(&mut ser).map_err(io::Error::other)
}

/// The rows as the reference prints them (one line, trailing newline).
pub fn to_python_json(rows: &[Row]) -> String {
    let mut out = Vec::with_capacity(rows.len() * 600);
    // Writing into a Vec cannot fail.
    let _ = write_python_json(&mut out, rows);
    out.push(b'\n');
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_separators_and_ascii() {
        let v = serde_json::json!({"a": [1, 2], "b": "é\u{1F600}\u{7f}x"});
        let mut out = Vec::new();
        write_python_json(&mut out, &v).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("[1, 2]"), "{s}");
        assert!(
            s.contains("\"b\": \"\\u00e9\\ud83d\\ude00\\u007fx\""),
            "{s}"
        );
    }
}
