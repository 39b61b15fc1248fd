//! Scenario (a): the official conformance server suites through the
//! balancer, judged by the project's one judge (`crate::conformance`, the
//! one `.ci/run` uses): every scenario a revision requires ran, and every
//! scenario that ran (the required ones and those the suite runs unscored,
//! such as the tasks extension's) has a real check and no failed or warned
//! one. One process passes so, so a warning here is something the replicas
//! do not share (a list change that does not reach another replica's stream
//! is only a SHOULD).

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::conformance::{Leg, Run, Verdict, judge, listed_scenarios};

/// A whole `--requirements` run must end within this.
const SUITE_TIMEOUT: Duration = Duration::from_secs(300);

/// The revisions whose required server scenarios run through the balancer.
pub(crate) const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// The suite's own precondition for its DNS-rebinding scenario: it runs
/// only against a server on a localhost URL, so behind a balancer on
/// another host it fails with this text (the loopback mode covers it).
const NEEDS_LOCALHOST: &str = "require a localhost server URL";

/// Runs the server scenarios `revision` requires against `address` and
/// judges them; `Err` says which scenarios failed and where the results are.
/// Off localhost, a scenario that fails only because the suite runs it on
/// localhost alone is set aside and named in the answer.
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
    let run = Run {
        dir: out.to_path_buf(),
        required: required.clone(),
    };
    let mut verdicts = judge(Leg::Server, &[run], &[]);
    let mut set_aside = Vec::new();
    if !address.ip().is_loopback() {
        verdicts.retain(|v| {
            let localhost_only = !v.passed() && v.problem().contains(NEEDS_LOCALHOST);
            if localhost_only {
                set_aside.push(v.scenario.clone());
            }
            !localhost_only
        });
    }
    let aside = if set_aside.is_empty() {
        String::new()
    } else {
        format!(
            "; set aside (the suite runs them on localhost only): {}",
            set_aside.join(", ")
        )
    };
    let failed: Vec<&Verdict> = verdicts.iter().filter(|v| !v.passed()).collect();
    let scored_failed = failed
        .iter()
        .filter(|v| required.contains(&v.scenario))
        .count();
    // The suite exits non-zero for the scenarios set aside too.
    if failed.is_empty() && (status.success() || !set_aside.is_empty()) {
        return Ok(format!(
            "{} scenarios passed ({} required){aside}",
            verdicts.len(),
            required.len()
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
    let scenarios: Vec<String> = listed_scenarios(&text, Leg::Server)
        .into_iter()
        .map(|s| s.name)
        .collect();
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
