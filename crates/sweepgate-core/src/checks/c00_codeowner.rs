//! Check 0 — CODEOWNER (`docs/rules.md` §2 Check 0, §1.1).
//!
//! Last matching CODEOWNERS rule wins; a path decided by the `*` line is a
//! catch-all path, covered by any recognised code owner (listed anywhere,
//! directly or through a confirmed team). A specific path must be owned by
//! the signer through its own rule. An unreadable team membership is
//! REVIEW, never a guess; for the core team the configured repository
//! roles stand in for membership (§5.1).
use super::snapshot::Membership;
use super::{CheckResult, Snapshot};
use crate::config::RepoConfig;
use crate::recipe::codeowners::{self, CodeOwners, Owner, Ownership};

const N: u8 = 0;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Member {
    Yes,
    No,
    Unknown(String),
}

fn membership(s: &Snapshot, co: &CodeOwners, cfg: &RepoConfig, org: &str, team: &str) -> Member {
    let name = format!("{org}/{team}");
    let core = if cfg.policy.core_team.is_empty() {
        co.core_team().map(|o| o.to_string())
    } else {
        Some(cfg.policy.core_team.clone())
    };
    let is_core = core
        .as_deref()
        .is_some_and(|c| c.trim_start_matches('@').eq_ignore_ascii_case(&name));
    let found = s
        .team_memberships
        .iter()
        .find(|(k, _)| k.trim_start_matches('@').eq_ignore_ascii_case(&name))
        .map(|(_, v)| v);
    match found {
        Some(Membership::Member) => Member::Yes,
        Some(Membership::NotMember) => Member::No,
        other => {
            let status = match other {
                Some(Membership::Unknown { status }) => status.clone(),
                _ => "not read".to_owned(),
            };
            if is_core && let Some(role) = &s.signer_permission {
                let proxied = s
                    .settings
                    .core_team_proxy_roles
                    .iter()
                    .any(|r| r.eq_ignore_ascii_case(role));
                return if proxied { Member::Yes } else { Member::No };
            }
            Member::Unknown(status)
        }
    }
}

/// Who may sign a PR that changes `changed` at all (`docs/contracts.md`
/// §3), read as Check 0 reads ownership: whether `user` is named as an
/// owner of a changed path (of a catch-all path: named anywhere in the
/// file), and else the teams (`org`, `team`) whose membership would make
/// them one, the core team included. Only an eligible signer's checklist
/// reaches the verifier; Check 0 still decides PASS.
pub fn signer_candidates(
    co: &CodeOwners,
    cfg: &RepoConfig,
    changed: &[&str],
    user: &str,
) -> (bool, Vec<(String, String)>) {
    let is_me = |o: &Owner| o.login().is_some_and(|l| l.eq_ignore_ascii_case(user));
    let catch_all_line = co.catch_all().map(|r| r.line);
    let mut named = false;
    let mut teams: Vec<(String, String)> = Vec::new();
    let mut add_team = |o: &Owner| {
        if let Some((org, t)) = o.team() {
            let t = (org.to_owned(), t.to_owned());
            if !teams.contains(&t) {
                teams.push(t);
            }
        }
    };
    for p in changed {
        let ownership = co.owner_of(p);
        let catch_all = ownership.rule().map(|r| r.line) == catch_all_line;
        if catch_all {
            named |= co.names_user(user);
            co.all_owners().into_iter().for_each(&mut add_team);
        } else {
            named |= ownership.owners().iter().any(is_me);
            ownership.owners().iter().for_each(&mut add_team);
        }
    }
    let core = if cfg.policy.core_team.is_empty() {
        co.core_team().cloned()
    } else {
        Owner::parse(&cfg.policy.core_team)
    };
    if let Some(o) = core {
        add_team(&o);
    }
    (named, teams)
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let Some(signer) = s.signer() else {
        return CheckResult::fail(N, "no sign-off to attribute; no signer.");
    };
    let path = &cfg.paths.codeowners;
    let Some(text) = s.policy.get(path) else {
        return CheckResult::review(
            N,
            format!("{path} was not provided; cannot decide ownership."),
        );
    };
    let co = match codeowners::parse(path, text.as_bytes()) {
        Ok(c) => c,
        Err(e) => return CheckResult::review(N, format!("{path} cannot be read: {e}.")),
    };
    let is_me = |o: &Owner| o.login().is_some_and(|l| l.eq_ignore_ascii_case(signer));
    let team_state = |o: &Owner| {
        o.team()
            .map(|(org, t)| (o.to_string(), membership(s, &co, cfg, org, t)))
    };
    let recognised_directly = co.names_user(signer);
    let mut unknown: Vec<(String, String)> = Vec::new();
    let recognised = recognised_directly
        || co.all_owners().into_iter().any(|o| match team_state(o) {
            Some((_, Member::Yes)) => true,
            Some((name, Member::Unknown(st))) => {
                if !unknown.iter().any(|(n, _)| *n == name) {
                    unknown.push((name, st));
                }
                false
            }
            _ => false,
        });

    let mut paths: Vec<&str> = Vec::new();
    for f in &s.files {
        for p in std::iter::once(f.path.as_str()).chain(f.previous_path.as_deref()) {
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    let catch_all_line = co.catch_all().map(|r| r.line);
    let mut specific = 0usize;
    let mut catch_all: Vec<&str> = Vec::new();
    let mut rules_used: Vec<(String, usize)> = Vec::new();
    let mut fails: Vec<(String, String, usize)> = Vec::new();
    let mut open: Vec<(String, String, String)> = Vec::new();
    for p in &paths {
        match co.owner_of(p) {
            Ownership::Owned(rule) if Some(rule.line) != catch_all_line => {
                specific += 1;
                let direct = rule.owners.iter().any(is_me);
                let mut via_unknown = None;
                let via_team = rule.owners.iter().any(|o| match team_state(o) {
                    Some((_, Member::Yes)) => true,
                    Some((name, Member::Unknown(st))) => {
                        via_unknown.get_or_insert((name, st));
                        false
                    }
                    _ => false,
                });
                if direct || via_team {
                    if !rules_used.iter().any(|(pat, _)| *pat == rule.pattern) {
                        rules_used.push((rule.pattern.clone(), rule.line));
                    }
                } else if let Some((team, st)) = via_unknown.filter(|_| !recognised_directly) {
                    // An unreadable team decides only for a signer listed
                    // nowhere directly; a listed owner of other paths who
                    // is not on this rule is not an owner of it.
                    open.push(((*p).to_owned(), team, st));
                } else {
                    let owners: Vec<String> = rule.owners.iter().map(|o| o.to_string()).collect();
                    fails.push(((*p).to_owned(), owners.join(" "), rule.line));
                }
            }
            _ => catch_all.push(p),
        }
    }
    if let Some((p, owners, line)) = fails.first() {
        let more = if fails.len() > 1 {
            format!(
                " ({} more specifically-owned paths not owned)",
                fails.len() - 1
            )
        } else {
            String::new()
        };
        return CheckResult::fail(
            N,
            format!("@{signer} is not an owner of {p} (owners: {owners}){more}."),
        )
        .file(path, *line);
    }
    if let Some((p, team, st)) = open.first() {
        return CheckResult::review(
            N,
            format!(
                "cannot confirm @{signer} in {team} (API {st}) for {p}; a maintainer must confirm."
            ),
        );
    }
    if !catch_all.is_empty() && !recognised {
        if let Some((team, st)) = unknown.first() {
            return CheckResult::review(
                N,
                format!(
                    "cannot confirm @{signer} in {team} (API {st}); a maintainer must confirm."
                ),
            );
        }
        return CheckResult::fail(
            N,
            format!(
                "@{signer} is not a recognised CODEOWNER (not listed in {path}, in no owning team) and signs catch-all path {}.",
                catch_all[0]
            ),
        );
    }
    let rules: Vec<String> = rules_used.iter().map(|(p, _)| p.clone()).collect();
    let owned = if rules.is_empty() {
        String::new()
    } else {
        format!(" ({})", rules.join(", "))
    };
    let mut r = CheckResult::pass(
        N,
        format!(
            "@{signer} owns all {specific} specifically-owned changed paths{owned}; {} catch-all paths covered.",
            catch_all.len()
        ),
    );
    for (_, line) in rules_used {
        r = r.file(path, line);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_owners_of_changed_paths_and_the_core_team() {
        let co = codeowners::parse(
            "CODEOWNERS",
            b"* @org/core\nconfigs/amd.yaml @amd-dev\nconfigs/nv.yaml @nv-dev @org/nv\n",
        )
        .unwrap();
        let cfg = RepoConfig::default();
        let team = |t: &str| ("org".to_owned(), t.to_owned());
        assert_eq!(
            signer_candidates(&co, &cfg, &["configs/nv.yaml"], "nv-dev"),
            (true, vec![team("nv"), team("core")])
        );
        // Owner of an unchanged path only: not named.
        assert!(!signer_candidates(&co, &cfg, &["configs/nv.yaml"], "amd-dev").0);
        // A catch-all path: anyone named in the file covers it.
        assert!(signer_candidates(&co, &cfg, &["README.md"], "amd-dev").0);
        assert!(!signer_candidates(&co, &cfg, &["README.md"], "stranger").0);
    }
    use crate::checks::snapshot::{ChangedFile, Signoff};

    const CO: &str = "* @InferenceX/core\nconfigs/amd-master.yaml @amdowner\nconfigs/nvidia-master.yaml @nvowner @InferenceX/core\n";

    fn snap(signer: &str, paths: &[&str]) -> Snapshot {
        let mut s = Snapshot::default();
        s.policy.insert(".github/CODEOWNERS".into(), CO.into());
        s.signoff = Some(Signoff {
            author: signer.into(),
            ..Default::default()
        });
        s.files = paths
            .iter()
            .map(|p| ChangedFile {
                path: (*p).into(),
                status: "modified".into(),
                ..Default::default()
            })
            .collect();
        s
    }

    #[test]
    fn owner_of_specific_path_and_catch_all_passes() {
        let s = snap(
            "nvowner",
            &["configs/nvidia-master.yaml", "perf-changelog.yaml"],
        );
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, super::super::Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "@nvowner owns all 1 specifically-owned changed paths (configs/nvidia-master.yaml); 1 catch-all paths covered."
        );
    }

    #[test]
    fn non_owner_of_specific_path_fails_naming_path_and_owners() {
        let s = snap("amdowner", &["configs/nvidia-master.yaml"]);
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, super::super::Outcome::Fail);
        assert_eq!(
            r.reason,
            "@amdowner is not an owner of configs/nvidia-master.yaml (owners: @nvowner @InferenceX/core)."
        );
        assert_eq!(
            r.evidence,
            vec![super::super::Evidence::File {
                path: ".github/CODEOWNERS".into(),
                line: 3
            }]
        );
    }

    #[test]
    fn unreadable_team_is_review() {
        let s = snap("someone", &["configs/nvidia-master.yaml"]);
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, super::super::Outcome::Review);
        assert!(
            r.reason
                .starts_with("cannot confirm @someone in @InferenceX/core (API not read)")
        );
    }

    #[test]
    fn core_team_proxy_role_confirms_membership() {
        let mut s = snap("someone", &["configs/nvidia-master.yaml"]);
        s.signer_permission = Some("maintain".into());
        assert_eq!(
            check(&s, &RepoConfig::default()).outcome,
            super::super::Outcome::Pass
        );
        s.signer_permission = Some("write".into());
        assert_eq!(
            check(&s, &RepoConfig::default()).outcome,
            super::super::Outcome::Fail
        );
    }

    #[test]
    fn stranger_on_catch_all_fails_when_team_is_known() {
        let mut s = snap("stranger", &["benchmarks/x.sh"]);
        s.team_memberships
            .insert("InferenceX/core".into(), Membership::NotMember);
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, super::super::Outcome::Fail);
        assert!(
            r.reason.contains("not a recognised CODEOWNER"),
            "{}",
            r.reason
        );
    }
}
