//! A pinned run's result artifacts: downloaded and unpacked within the
//! configured caps (`InputLimits`: the archive's size, the sum of its
//! unpacked files, its number of entries), so a zip bomb or an oversized
//! upload is refused with a note naming the artifact and the cap, never
//! read whole. An archive or file that cannot be read is noted, never
//! guessed at.
use std::io::Read;

use futures::StreamExt;

use super::local::add_artifact_file;
use crate::config::server::InputLimits;
use crate::github::{Api, Artifact, GitHubError};
use sweepgate_core::checks::snapshot::RunArtifacts;
use sweepgate_core::ids::RepoName;

/// Artifacts whose contents the checks read (`results-and-ingestion.md`).
pub(crate) fn wanted_artifact(name: &str) -> bool {
    matches!(name, "results_bmk" | "eval_results_all") || name.starts_with("bmk_agentic_")
}

/// Archives downloaded at once: each may be up to `max_artifact_bytes`.
const DOWNLOADS_AT_ONCE: usize = 2;

/// Downloads and reads the run's result artifacts.
pub(crate) async fn read_run_artifacts(
    api: &Api,
    repo: &RepoName,
    list: &[Artifact],
    notes: &mut Vec<String>,
) -> Result<RunArtifacts, GitHubError> {
    let limits = api.limits();
    let mut wanted = Vec::new();
    for a in list
        .iter()
        .filter(|a| !a.expired && wanted_artifact(&a.name))
    {
        match a.size_in_bytes {
            Some(size) if size > limits.max_artifact_bytes => {
                notes.push(over_archive_cap(&a.name, size, limits.max_artifact_bytes))
            }
            _ => wanted.push((a.id, a.name.clone())),
        }
    }
    let max = limits.max_artifact_bytes;
    let mut archives = futures::stream::iter(wanted)
        .map(|(id, name)| async move { (name, api.artifact_zip(repo, id, max).await) })
        .buffered(DOWNLOADS_AT_ONCE);
    let mut out = RunArtifacts::default();
    // Each archive is read as it arrives, so at most a few are in memory.
    while let Some((name, zip)) = archives.next().await {
        match zip? {
            Ok(bytes) => read_archive(&mut out, &name, bytes, &limits, notes),
            Err(size) => notes.push(over_archive_cap(&name, size, max)),
        }
    }
    Ok(out)
}

fn over_archive_cap(name: &str, size: u64, cap: u64) -> String {
    format!(
        "artifact {name} is {size} bytes, over the {cap}-byte cap (max-artifact-bytes); it was not read"
    )
}

/// The `.json` files of one archive, within the entry and unpacked caps.
pub(crate) fn read_archive(
    out: &mut RunArtifacts,
    name: &str,
    zip_bytes: bytes::Bytes,
    limits: &InputLimits,
    notes: &mut Vec<String>,
) {
    let mut archive = match zip::ZipArchive::new(std::io::Cursor::new(zip_bytes)) {
        Ok(a) => a,
        Err(e) => {
            notes.push(format!("artifact {name} is not a zip archive: {e}"));
            return;
        }
    };
    if archive.len() as u64 > limits.max_artifact_entries {
        notes.push(format!(
            "artifact {name} holds {} entries, over the cap of {} (max-artifact-entries); it was not read",
            archive.len(),
            limits.max_artifact_entries
        ));
        return;
    }
    let cap = limits.max_artifact_unpacked_bytes;
    let mut unpacked: u64 = 0;
    for i in 0..archive.len() {
        let Ok(f) = archive.by_index(i) else {
            continue;
        };
        let file = f.name().to_owned();
        if !file.ends_with(".json") {
            continue;
        }
        // The sizes in the archive are the uploader's word: read at most
        // what is left of the cap, plus one byte to see it is exceeded.
        let left = cap.saturating_sub(unpacked);
        let mut bytes = Vec::new();
        if let Err(e) = f.take(left.saturating_add(1)).read_to_end(&mut bytes) {
            notes.push(format!("artifact {name}: {file} could not be read: {e}"));
            continue;
        }
        unpacked += bytes.len() as u64;
        if unpacked > cap {
            notes.push(format!(
                "artifact {name} unpacks to more than {cap} bytes (max-artifact-unpacked-bytes); {file} and the files after it were not read"
            ));
            return;
        }
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                notes.push(format!("artifact {name}: {file} could not be read: {e}"));
                continue;
            }
        };
        let base = file.rsplit('/').next().unwrap_or(&file);
        if let Err(e) = add_artifact_file(out, base, &text) {
            notes.push(format!("artifact {name}: {file} is not JSON: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zip_of(files: &[(&str, Vec<u8>)]) -> bytes::Bytes {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut z = zip::ZipWriter::new(&mut buf);
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            for (name, content) in files {
                z.start_file(*name, opts).unwrap();
                z.write_all(content).unwrap();
            }
            z.finish().unwrap();
        }
        bytes::Bytes::from(buf.into_inner())
    }

    #[test]
    fn only_result_artifacts_are_downloaded() {
        assert!(wanted_artifact("results_bmk"));
        assert!(wanted_artifact("eval_results_all"));
        assert!(wanted_artifact(
            "bmk_agentic_dsv41flash_fp4_sglang_tp4_c1_gb300-nv"
        ));
        assert!(!wanted_artifact("changelog-metadata"));
    }

    #[test]
    fn a_zip_bomb_is_refused_with_a_note_after_reading_at_most_the_cap() {
        // 64 MiB of zeros compress to about 64 kB.
        let bomb = zip_of(&[("results/agg_bmk.json", vec![b' '; 64 * 1024 * 1024])]);
        assert!(bomb.len() < 200_000, "{}", bomb.len());
        let limits = InputLimits {
            max_artifact_unpacked_bytes: 1024 * 1024,
            ..InputLimits::default()
        };
        let (mut out, mut notes) = (RunArtifacts::default(), Vec::new());
        read_archive(&mut out, "results_bmk", bomb, &limits, &mut notes);
        assert_eq!(
            notes,
            [
                "artifact results_bmk unpacks to more than 1048576 bytes (max-artifact-unpacked-bytes); results/agg_bmk.json and the files after it were not read"
            ]
        );
        assert_eq!(out, RunArtifacts::default());
    }

    #[test]
    fn too_many_entries_are_refused_and_small_archives_read() {
        let many: Vec<(String, Vec<u8>)> =
            (0..20).map(|i| (format!("f{i}.txt"), Vec::new())).collect();
        let many: Vec<(&str, Vec<u8>)> =
            many.iter().map(|(n, c)| (n.as_str(), c.clone())).collect();
        let limits = InputLimits {
            max_artifact_entries: 10,
            ..InputLimits::default()
        };
        let (mut out, mut notes) = (RunArtifacts::default(), Vec::new());
        read_archive(&mut out, "results_bmk", zip_of(&many), &limits, &mut notes);
        assert_eq!(
            notes,
            [
                "artifact results_bmk holds 20 entries, over the cap of 10 (max-artifact-entries); it was not read"
            ]
        );
        let (mut out, mut notes) = (RunArtifacts::default(), Vec::new());
        read_archive(
            &mut out,
            "results_bmk",
            zip_of(&[("agg_bmk.json", b"[]".to_vec()), ("x.json", b"{".to_vec())]),
            &limits,
            &mut notes,
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("artifact results_bmk: x.json is not JSON"));
    }
}
