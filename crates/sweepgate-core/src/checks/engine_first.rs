//! Check 6(b) and lint L15 alike (`docs/rules.md` §2 Check 6): a key of a
//! framework outside the vLLM and SGLang families lands only after a vLLM
//! or SGLang key of the same model on the same SKU. One reading serves
//! both, as `ImageRef::is_upstream` does for 6(a); each side builds the
//! [`Landing`]s from its own master reader.
use super::snapshot::{Family, family_of};

/// What the ordering rule reads of one master entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Landing<'a> {
    pub key: &'a str,
    pub framework: &'a str,
    /// `model-prefix`, else the key's first token.
    pub prefix: &'a str,
    /// `model`, or empty.
    pub model: &'a str,
    pub sku: String,
}

/// SKU of a key: its third token, else the runner label's first.
pub(crate) fn key_sku(key: &str, runner: &str) -> String {
    match key.split('-').nth(2) {
        Some(t) => t.to_owned(),
        None => crate::recipe::launcher::sku_of(runner).to_owned(),
    }
}

impl<'a> Landing<'a> {
    pub(crate) fn new(
        key: &'a str,
        framework: &'a str,
        prefix: Option<&'a str>,
        model: Option<&'a str>,
        runner: &str,
    ) -> Self {
        Landing {
            key,
            framework,
            prefix: prefix.unwrap_or_else(|| key.split('-').next().unwrap_or("")),
            model: model.unwrap_or(""),
            sku: key_sku(key, runner),
        }
    }

    /// From a master entry as JSON (the lint's entry content).
    pub(crate) fn of_json(key: &'a str, v: &'a serde_json::Value) -> Self {
        let s = |f: &str| v.get(f).and_then(serde_json::Value::as_str);
        Landing::new(
            key,
            s("framework").unwrap_or(""),
            s("model-prefix"),
            s("model"),
            s("runner").unwrap_or(""),
        )
    }

    fn engine(&self) -> bool {
        family_of(self.framework) != Family::Other
    }

    /// Another key serving the same model on the same SKU: the same
    /// prefix or, whatever its `model-prefix` says, the same `model`
    /// (`0f24199`, #617: `dsr1-fp8` beside `dsr1`).
    fn same_model(&self, o: &Landing<'_>) -> bool {
        o.key != self.key
            && (o.prefix == self.prefix || (!self.model.is_empty() && o.model == self.model))
            && o.sku == self.sku
    }
}

/// Where a key stands in the ordering rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Order<'a> {
    /// A vLLM or SGLang key: the rule does not apply.
    Engine,
    /// A vLLM or SGLang key of the model serves the SKU at head.
    Follows(&'a str),
    /// Another framework served the model on the SKU before the PR: an
    /// added arm of it lands nothing new (`4cd3407`, #1800).
    Joins(&'a str),
    /// The key lands first: the rule's fact.
    First,
}

/// The ordering of key `k` among every entry at head and every entry
/// before the PR.
pub(crate) fn order<'a>(
    k: &Landing<'_>,
    head: &'a [Landing<'a>],
    before: &'a [Landing<'a>],
) -> Order<'a> {
    if k.engine() {
        return Order::Engine;
    }
    if let Some(o) = head.iter().find(|o| k.same_model(o) && o.engine()) {
        return Order::Follows(o.key);
    }
    if let Some(o) = before.iter().find(|o| k.same_model(o) && !o.engine()) {
        return Order::Joins(o.key);
    }
    Order::First
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l<'a>(key: &'a str, fw: &'a str) -> Landing<'a> {
        Landing::new(key, fw, None, None, "")
    }

    #[test]
    fn another_framework_needs_an_engine_key_of_its_model_and_sku() {
        let tilert = l("glm5.1-fp8-b200-tilert", "tilert");
        let vllm = l("glm5.1-fp8-b200-vllm", "vllm");
        let other_sku = l("glm5.1-fp8-h200-vllm", "vllm");
        assert_eq!(order(&vllm, &[], &[]), Order::Engine);
        assert_eq!(
            order(&tilert, std::slice::from_ref(&other_sku), &[]),
            Order::First
        );
        assert_eq!(
            order(&tilert, &[other_sku, vllm], &[]),
            Order::Follows("glm5.1-fp8-b200-vllm")
        );
        let trt = l("glm5.1-fp8-b200-dynamo-trt", "dynamo-trt");
        assert_eq!(
            order(&tilert, &[], &[trt]),
            Order::Joins("glm5.1-fp8-b200-dynamo-trt")
        );
    }
}
