//! The data behind `/help`: one source for the reply and any web page.
use super::auth::who_may_use;
use super::parse::CommandName;

/// One command as `/help` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct HelpEntry {
    pub name: &'static str,
    pub syntax: &'static str,
    pub description: &'static str,
    pub who: &'static str,
}

fn description(name: CommandName) -> &'static str {
    match name {
        CommandName::Use => {
            "Pin a completed sweep run of this PR for review and stage its results. The run must have been swept under a full-sweep label without `evals-only` or `agentx-fast`; the newest authorized pin wins."
        }
        CommandName::ReuseSweepRun => {
            "Legacy spelling of `/use`. Without a run id, pins the newest eligible run that concluded success."
        }
        CommandName::StageResults => {
            "Stage a run's results to the results site again (default: the pinned run). Staging the same run again updates its staged data."
        }
        CommandName::Verify => {
            "Re-run the sign-off verifier on the commit the latest sign-off covers."
        }
        CommandName::AckCheck => {
            "Accept the REVIEW row of check N (0 to 17) in the verdict; the reason is shown in the row."
        }
        CommandName::Help => "Show this list.",
    }
}

/// Every command, in a fixed order, with syntax, description and who may use it.
pub fn help_entries() -> Vec<HelpEntry> {
    CommandName::ALL
        .into_iter()
        .map(|name| HelpEntry {
            name: name.as_str(),
            syntax: name.usage(),
            description: description(name),
            who: who_may_use(name),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::parse::parse_comment;

    #[test]
    fn every_syntax_line_parses_as_its_own_command() {
        let entries = help_entries();
        assert_eq!(entries.len(), 6);
        for e in entries {
            // The syntax with placeholders filled in must be the same command.
            let filled = e
                .syntax
                .replace("[<run_id>]", "")
                .replace("<run_id>", "5")
                .replace("<N> <reason>", "3 ok");
            let p = parse_comment(&filled);
            assert_eq!(p.len(), 1, "{filled}");
            let cmd = p[0].result.clone().unwrap();
            assert_eq!(cmd.name().as_str(), e.name);
        }
    }
}
