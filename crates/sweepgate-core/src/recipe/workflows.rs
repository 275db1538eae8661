//! Images named by workflow files of the legacy era, before the master
//! configs held every sweep (`config::layout::LEGACY_SWEEPS`): the value of
//! each `image:` key (`image: 'rocm/7.0:…'`, `"image": "nvcr.io/…"`), with
//! the registry's `#` spelling (`nvcr.io#nvidia/…`) read as `/`.
//!
//! A text scan rather than a YAML read: the sweeps sat in matrix
//! `include` lists, inline JSON strings and `with:` blocks alike, and only
//! the image strings matter.
use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

static IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)["']?\bimage["']?\s*:\s*["']?([A-Za-z0-9][A-Za-z0-9._/#:@+-]*)"#)
        .expect("static regex")
});

/// Every image the workflow text names, normalised.
pub fn images(text: &str) -> BTreeSet<String> {
    IMAGE
        .captures_iter(text)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str().replacen('#', "/", 1))
        // An expression (`${{ inputs.image }}`) starts with `$` and does
        // not match; a bare word without a tag names no build.
        .filter(|i| i.contains(':'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spellings of `c028a3a^:.github/workflows/dsr1-tmpl.yml` and of
    /// `b1107b8^:.github/workflows/full-sweep-1k1k-scheduler.yml`.
    #[test]
    fn reads_quoted_json_and_hash_spellings() {
        let text = "    with:\n      image: 'rocm/7.0:rocm7.0_ubuntu_22.04_sgl-dev-v0.5.2-rocm7.0-mi30x-20250915'\n      other: 'image: x'\n    include:\n      - { \"image\": \"nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.5.1-rc0.pre1\", \"runner\": \"gb200\" }\n      image: 'nvcr.io#nvidia/tensorrt-llm/release:1.1.0rc2.post2'\n      image: ${{ inputs.image }}\n      image: ubuntu\n";
        let got: Vec<String> = images(text).into_iter().collect();
        assert_eq!(
            got,
            [
                "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.5.1-rc0.pre1",
                "nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2",
                "rocm/7.0:rocm7.0_ubuntu_22.04_sgl-dev-v0.5.2-rocm7.0-mi30x-20250915",
            ]
        );
    }
}
