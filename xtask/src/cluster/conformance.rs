//! Scenario (a): the official conformance server suites through the
//! balancer, judged by their checks exactly as one process does: every
//! scenario a revision requires ran, and every scenario that ran (the
//! required ones and those the suite runs unscored, such as the tasks
//! extension's) has a successful check and no failed or warned one. One
//! process passes so, so a warning here is something the replicas do not
//! share (a list change that does not reach another replica's stream is
//! only a SHOULD). A scenario whose every check the suite itself skips
//! passes, as `.ci/run` allows it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

/// A whole `--requirements` run must end within this.
const SUITE_TIMEOUT: Duration = Duration::from_secs(300);

/// The revisions whose required server scenarios run through the balancer.
pub(crate) const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// Unscored scenarios that need what replicas do not share yet, reported
/// but not failing the run: `tasks-mrtr-input` answers a task's input with
/// `tasks/update`, and the parked call it resumes lives in the process that
/// ran it (see `mcp_server::tasks`), so an update reaching another replica
/// fails the task. Empty this list once that call is shared.
const PER_PROCESS: [&str; 1] = ["tasks-mrtr-input"];

/// Runs the server scenarios `revision` requires against `address` and
/// judges them; `Err` says which scenarios failed and where the results are.
pub(crate) async fn run(
    tool: &Path,
    address: SocketAddr,
    revision: &str,
    out: &Path,
) -> Result<String, String> {
    let required = required_server_scenarios(tool, revision).await?;
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let log = out.with_extension("log");
    let url = format!("http://{address}/mcp");
    let args = [
        "server",
        "--url",
        &url,
        "--requirements",
        revision,
        "-o",
        &out.display().to_string(),
    ]
    .map(str::to_owned);
    let status = run_tool(tool, &args, &log, SUITE_TIMEOUT).await?;
    let verdicts = judge(out, &required)?;
    let (known, failed): (Vec<&Verdict>, Vec<&Verdict>) =
        verdicts.iter().filter(|v| !v.passed()).partition(|v| {
            !required.contains(&v.scenario) && PER_PROCESS.contains(&v.scenario.as_str())
        });
    for verdict in &known {
        eprintln!(
            "known across replicas (not scored): {}: {}",
            verdict.scenario,
            verdict.problem()
        );
    }
    let scored_failed = failed
        .iter()
        .filter(|v| required.contains(&v.scenario))
        .count();
    // The suite exits with a failure for a known one too.
    if failed.is_empty() && (status.success() || !known.is_empty()) {
        return Ok(format!(
            "{} scenarios passed ({} required){}",
            verdicts.len() - known.len(),
            required.len(),
            if known.is_empty() {
                String::new()
            } else {
                format!(", {} known to need one process (not scored)", known.len())
            }
        ));
    }
    // Scenarios failing the same way are listed together.
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for verdict in &failed {
        let problem = verdict.problem();
        match groups.iter_mut().find(|(p, _)| *p == problem) {
            Some((_, names)) => names.push(&verdict.scenario),
            None => groups.push((problem, vec![&verdict.scenario])),
        }
    }
    let mut lines: Vec<String> = groups
        .iter()
        .map(|(problem, names)| format!("{}: {problem}", names.join(", ")))
        .collect();
    if !status.success() && failed.is_empty() {
        lines.push(format!("the suite exited with {status}"));
    }
    Err(format!(
        "{} of {} scenarios failed, {scored_failed} of them required (results in {}, \
         output in {}):\n  {}",
        failed.len(),
        verdicts.len(),
        out.display(),
        log.display(),
        lines.join("\n  ")
    ))
}

/// The server scenarios of `conformance list --requirements REVISION`.
async fn required_server_scenarios(tool: &Path, revision: &str) -> Result<Vec<String>, String> {
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(tool)
            .args(["list", "--requirements", revision])
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .map_err(|_| format!("`{} list` did not finish in 120 s", tool.display()))?
    .map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let scenarios = parse_server_scenarios(&text);
    if !output.status.success() || scenarios.is_empty() {
        return Err(format!(
            "`{} list --requirements {revision}` named no server scenario ({}): {text}{}",
            tool.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(scenarios)
}

/// The `  - NAME` lines under `Server scenarios`, up to the next heading.
fn parse_server_scenarios(listing: &str) -> Vec<String> {
    listing
        .lines()
        .skip_while(|l| !l.starts_with("Server scenarios"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.trim().strip_prefix("- ").map(str::to_owned))
        .collect()
}

/// Runs the conformance tool with its output in `log`, killed when it
/// outlives `timeout`.
pub(crate) async fn run_tool(
    tool: &Path,
    args: &[String],
    log: &Path,
    timeout: Duration,
) -> Result<std::process::ExitStatus, String> {
    let out =
        std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("cannot share {}: {e}", log.display()))?;
    let mut child = tokio::process::Command::new(tool)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
    match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => status.map_err(|e| format!("waiting for {}: {e}", tool.display())),
        Err(_) => {
            let _ = child.kill().await;
            Err(format!(
                "the conformance suite did not finish in {} s (output in {})",
                timeout.as_secs(),
                log.display()
            ))
        }
    }
}

/// What the checks of one scenario said.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) scenario: String,
    /// The `checks.json` found, if any.
    pub(crate) file: Option<PathBuf>,
    pub(crate) successes: usize,
    /// Checks the suite skipped as not applicable.
    pub(crate) skipped: usize,
    /// Checks neither successful, failed, warned nor skipped (INFO).
    pub(crate) others: usize,
    /// The ids (and messages) of the failed and warned checks.
    pub(crate) failures: Vec<String>,
}

impl Verdict {
    /// No check failed or warned, and one succeeded (or the suite itself
    /// skipped every one).
    pub(crate) fn passed(&self) -> bool {
        let skipped_upstream = self.successes == 0 && self.skipped > 0 && self.others == 0;
        self.file.is_some() && self.failures.is_empty() && (self.successes > 0 || skipped_upstream)
    }

    /// What went wrong, without the scenario's name.
    fn problem(&self) -> String {
        match &self.file {
            None => "no checks.json (the scenario did not run)".to_owned(),
            Some(_) if self.failures.is_empty() => "no check ran".to_owned(),
            Some(_) => self.failures.join("; "),
        }
    }
}

/// Judges every scenario of `required` and every other one that ran, from
/// the `server-SCENARIO-TIMESTAMP/checks.json` the suite wrote under `out`.
pub(crate) fn judge(out: &Path, required: &[String]) -> Result<Vec<Verdict>, String> {
    let entries =
        std::fs::read_dir(out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(scenario) = scenario_of_result_dir(&name) {
            found.push((scenario.to_owned(), entry.path().join("checks.json")));
        }
    }
    found.sort();
    let mut scenarios: Vec<String> = required.to_vec();
    for (scenario, _) in &found {
        if !scenarios.contains(scenario) {
            scenarios.push(scenario.clone());
        }
    }
    scenarios
        .iter()
        .map(|scenario| {
            let file = found
                .iter()
                .find(|(s, path)| s == scenario && path.is_file())
                .map(|(_, path)| path.clone());
            let mut verdict = Verdict {
                scenario: scenario.clone(),
                file: file.clone(),
                successes: 0,
                skipped: 0,
                others: 0,
                failures: Vec::new(),
            };
            if let Some(file) = file {
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
                let checks: Vec<Value> = serde_json::from_str(&text)
                    .map_err(|e| format!("{} is not a list of checks: {e}", file.display()))?;
                for check in &checks {
                    match check.get("status").and_then(Value::as_str) {
                        Some("SUCCESS") => verdict.successes += 1,
                        Some(status @ ("FAILURE" | "WARNING")) => verdict.failures.push(format!(
                            "{status} ({})",
                            check
                                .get("errorMessage")
                                .or_else(|| check.get("description"))
                                .and_then(Value::as_str)
                                .unwrap_or("")
                        )),
                        Some("SKIPPED") => verdict.skipped += 1,
                        _ => verdict.others += 1,
                    }
                }
            }
            Ok(verdict)
        })
        .collect()
}

/// `server-tools-list-2026-11-23T08-50-00-123Z` -> `tools-list`: the suite
/// names a result directory by leg, scenario and an ISO time with `:` and
/// `.` made `-` (24 characters).
fn scenario_of_result_dir(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("server-")?;
    let cut = rest.len().checked_sub(25)?;
    let (scenario, stamp) = rest.split_at(cut);
    (stamp.starts_with('-') && stamp.ends_with('Z')).then_some(scenario)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_names_the_server_scenarios() {
        let listing = "Required for 2026-07-28 (69 scenarios):\n\nServer scenarios (test against a server):\n  - server-stateless\n  - tools-list\n\nClient scenarios (test against a client):\n  - tools_call\n";
        assert_eq!(
            parse_server_scenarios(listing),
            vec!["server-stateless".to_owned(), "tools-list".to_owned()]
        );
    }

    #[test]
    fn result_directories_name_their_scenario() {
        assert_eq!(
            scenario_of_result_dir("server-tools-call-simple-text-2026-11-23T08-50-00-123Z"),
            Some("tools-call-simple-text")
        );
        assert_eq!(
            scenario_of_result_dir("client-x-2026-11-23T08-50-00-123Z"),
            None
        );
        assert_eq!(scenario_of_result_dir("server-x"), None);
    }

    #[test]
    fn every_scenario_that_ran_is_judged_as_one_process_passes() {
        let out = std::env::temp_dir().join(format!("xtask-judge-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let write = |scenario: &str, checks: &str| {
            let dir = out.join(format!("server-{scenario}-2026-11-23T08-50-00-123Z"));
            std::fs::create_dir_all(&dir).expect("dir");
            std::fs::write(dir.join("checks.json"), checks).expect("write");
        };
        write(
            "good",
            r#"[{"id":"a","status":"SUCCESS"},{"id":"i","status":"INFO"}]"#,
        );
        write(
            "warned",
            r#"[{"id":"a","status":"SUCCESS"},{"id":"b","status":"WARNING"}]"#,
        );
        write(
            "bad",
            r#"[{"id":"c","status":"FAILURE","errorMessage":"boom"}]"#,
        );
        write("unscored-skipped", r#"[{"id":"s","status":"SKIPPED"}]"#);
        write("unscored-bad", r#"[{"id":"d","status":"FAILURE"}]"#);
        let required = ["good", "warned", "bad", "missing"].map(str::to_owned);
        let verdicts = judge(&out, &required).expect("judged");
        let _ = std::fs::remove_dir_all(&out);
        let passed: Vec<(&str, bool)> = verdicts
            .iter()
            .map(|v| (v.scenario.as_str(), v.passed()))
            .collect();
        assert_eq!(
            passed,
            vec![
                ("good", true),
                ("warned", false),
                ("bad", false),
                ("missing", false),
                ("unscored-bad", false),
                ("unscored-skipped", true),
            ]
        );
        assert_eq!(verdicts[2].failures, vec!["FAILURE (boom)".to_owned()]);
    }
}
