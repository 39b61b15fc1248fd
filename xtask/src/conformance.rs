//! The one judge of the official MCP conformance suite's results, used by
//! `.ci/run` (through `cargo xtask conformance-judge`) and by the cluster
//! harness (`cargo xtask cluster`).
//!
//! The suite's exit status is not enough: a scenario that ran no check
//! prints as passed, warnings do not fail a `--requirements` run, and a
//! check the suite skips because the implementation did not declare an
//! extension counts as nothing at all. So the judge reads the `checks.json`
//! the suite writes for each scenario (under `-o DIR`, in
//! `[server-]SCENARIO-TIMESTAMP/`, a scenario's `/` making subfolders) and
//! fails a scenario on:
//! - any check with status FAILURE or WARNING (WARNING is a SHOULD-level
//!   miss);
//! - no check that ran (SUCCESS, FAILURE or WARNING), not counting
//!   `wire-schema-valid` (the suite adds it to every scenario that saw a
//!   message, so alone it proves no behaviour), unless the scenario is in
//!   [`UPSTREAM_SKIPPED`]; an allow-listed scenario that does run a check
//!   fails too, so the list stays true;
//! - a SKIPPED check whose reason says something was not declared (every
//!   extension and capability the suite probes exists in our
//!   implementations, so it must be declared and its real checks run);
//! - an unreadable `checks.json`.
//!
//! A scenario a run requires, or one the suite lists, without results fails
//! as well.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Scenarios whose every check the suite itself skips, whatever the
/// implementation does. Verified against the pinned suite
/// (`@modelcontextprotocol/conformance` 0.2.0-alpha.12):
/// `tasks-status-notifications`'s `run()` returns one check built by the
/// suite's unconditional skip helper ("Status notifications conformance,
/// pending subscriptions/listen rewrite": SEP-2663 moved `notifications/tasks`
/// to the `subscriptions/listen` stream and the harness still watches the
/// `tools/call` SSE response); it is the only user of that helper.
pub(crate) const UPSTREAM_SKIPPED: &[&str] = &["tasks-status-notifications"];

/// The suite's own schema check, added to every scenario that saw a message.
const META_CHECKS: &[&str] = &["wire-schema-valid"];

/// Phrases of a SKIPPED check that blame the implementation for not
/// declaring something (compared in lower case).
const NOT_DECLARED: &[&str] = &["did not declare", "not declared", "does not declare"];

/// Which side of the protocol the suite tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leg {
    /// `conformance server`: the suite is the client.
    Server,
    /// `conformance client`: the suite runs mock servers.
    Client,
}

impl Leg {
    /// `server` or `client`, as the suite's commands name them.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        match name {
            "server" => Some(Self::Server),
            "client" => Some(Self::Client),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Server => "server",
            Self::Client => "client",
        }
    }

    /// The heading `conformance list` puts above this leg's scenarios.
    fn heading(self) -> &'static str {
        match self {
            Self::Server => "Server scenarios",
            Self::Client => "Client scenarios",
        }
    }
}

/// One scenario of a `conformance list` output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    pub(crate) name: String,
    /// The bracketed tags (`2025-11-25`, `extension`, ...), if printed.
    pub(crate) tags: Vec<String>,
}

/// The `  - NAME [TAGS]` lines under the leg's heading of a `conformance
/// list` output (`list --server`, `list --client` or `list --requirements
/// REV`), up to the next blank line.
pub(crate) fn listed_scenarios(listing: &str, leg: Leg) -> Vec<Listed> {
    listing
        .lines()
        .skip_while(|l| !l.starts_with(leg.heading()))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.strip_prefix("  - "))
        .map(|entry| {
            let (name, tags) = match entry.split_once(" [") {
                Some((name, rest)) => (name, rest.trim_end_matches(']')),
                None => (entry, ""),
            };
            Listed {
                name: name.trim().to_owned(),
                tags: tags
                    .split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned)
                    .collect(),
            }
        })
        .collect()
}

/// One suite run to judge: its `-o` folder and the scenarios it must hold.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub(crate) dir: PathBuf,
    pub(crate) required: Vec<String>,
}

/// How many checks of each status one scenario's `checks.json` held.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) success: usize,
    pub(crate) warning: usize,
    pub(crate) failure: usize,
    pub(crate) skipped: usize,
    /// INFO and any status this judge does not know.
    pub(crate) other: usize,
}

/// The judgement of one scenario in one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) scenario: String,
    /// The run's folder name (`-` for a listed scenario no run holds).
    pub(crate) run: String,
    pub(crate) counts: Counts,
    /// Why it fails; empty when it passes.
    pub(crate) problems: Vec<String>,
}

impl Verdict {
    pub(crate) fn passed(&self) -> bool {
        self.problems.is_empty()
    }

    /// What went wrong, without the scenario's name.
    pub(crate) fn problem(&self) -> String {
        self.problems.join("; ")
    }

    fn missing(scenario: &str, run: String, problem: &str) -> Self {
        Self {
            scenario: scenario.to_owned(),
            run,
            counts: Counts::default(),
            problems: vec![problem.to_owned()],
        }
    }
}

/// Judges every scenario each run wrote results for, every scenario a run
/// requires, and every scenario of `listed` (which some run must hold).
/// Verdicts come per run, sorted by scenario, then the listed ones no run
/// holds.
pub(crate) fn judge(leg: Leg, runs: &[Run], listed: &[String]) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    for run in runs {
        let name = run
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| run.dir.display().to_string());
        let mut files = Vec::new();
        if let Err(e) = find_checks(&run.dir, &mut files) {
            verdicts.push(Verdict::missing(
                "-",
                name.clone(),
                &format!(
                    "cannot read {}: {e} (did the suite run?)",
                    run.dir.display()
                ),
            ));
            continue;
        }
        if files.is_empty() && run.required.is_empty() {
            verdicts.push(Verdict::missing(
                "-",
                name.clone(),
                &format!(
                    "no checks.json under {} (did the suite run?)",
                    run.dir.display()
                ),
            ));
        }
        let mut found: Vec<Verdict> = files
            .iter()
            .filter_map(|file| {
                let scenario = scenario_of(leg, &run.dir, file)?;
                Some(judge_file(scenario, name.clone(), file))
            })
            .collect();
        for scenario in &run.required {
            if !found.iter().any(|v| &v.scenario == scenario) {
                found.push(Verdict::missing(
                    scenario,
                    name.clone(),
                    "required by this run but it wrote no results for it",
                ));
            }
        }
        found.sort_by(|a, b| a.scenario.cmp(&b.scenario));
        verdicts.extend(found);
    }
    for scenario in listed {
        if !verdicts.iter().any(|v| &v.scenario == scenario) {
            verdicts.push(Verdict::missing(
                scenario,
                "-".to_owned(),
                "listed by the suite but no run wrote results for it",
            ));
        }
    }
    verdicts
}

/// Every `checks.json` under `dir`, at any depth.
fn find_checks(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            find_checks(&path, files)?;
        } else if entry.file_name() == "checks.json" {
            files.push(path);
        }
    }
    Ok(())
}

/// The scenario of `RUN/[server-]SCENARIO-2026-11-23T08-50-00-123Z/checks.json`:
/// the suite names the folder by leg (servers only), scenario and an ISO
/// time with `:` and `.` made `-`.
fn scenario_of(leg: Leg, run: &Path, file: &Path) -> Option<String> {
    let folder = file.parent()?.strip_prefix(run).ok()?;
    let folder = folder
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    let cut = folder.len().checked_sub(25)?;
    let (name, stamp) = folder.split_at_checked(cut)?;
    if !is_timestamp(stamp) {
        return None;
    }
    match leg {
        Leg::Server => name.strip_prefix("server-").map(str::to_owned),
        Leg::Client => Some(name.to_owned()),
    }
}

/// `-2026-11-23T08-50-00-123Z`.
fn is_timestamp(stamp: &str) -> bool {
    const SHAPE: &[u8] = b"-dddd-dd-ddTdd-dd-dd-dddZ";
    stamp.len() == SHAPE.len()
        && stamp.bytes().zip(SHAPE).all(|(b, &s)| match s {
            b'd' => b.is_ascii_digit(),
            _ => b == s,
        })
}

fn judge_file(scenario: String, run: String, file: &Path) -> Verdict {
    let checks = std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str::<Vec<Value>>(&text).map_err(|e| e.to_string()));
    match checks {
        Ok(checks) => judge_checks(scenario, run, &checks),
        Err(e) => Verdict::missing(
            &scenario,
            run,
            &format!("unreadable {}: {e}", file.display()),
        ),
    }
}

/// Judges one scenario's checks (the rules are in the module's comment).
fn judge_checks(scenario: String, run: String, checks: &[Value]) -> Verdict {
    let mut counts = Counts::default();
    let mut problems = Vec::new();
    let mut ran = false;
    for check in checks {
        let status = check.get("status").and_then(Value::as_str).unwrap_or("");
        let id = check.get("id").and_then(Value::as_str).unwrap_or("?");
        let counter = match status {
            "SUCCESS" => &mut counts.success,
            "WARNING" => &mut counts.warning,
            "FAILURE" => &mut counts.failure,
            "SKIPPED" => &mut counts.skipped,
            _ => &mut counts.other,
        };
        *counter += 1;
        if matches!(status, "SUCCESS" | "WARNING" | "FAILURE") && !META_CHECKS.contains(&id) {
            ran = true;
        }
        if matches!(status, "WARNING" | "FAILURE") {
            problems.push(format!("{status} {id}: {}", reason(check)));
        } else if status == "SKIPPED" {
            let text = check.to_string().to_lowercase();
            if NOT_DECLARED.iter().any(|phrase| text.contains(phrase)) {
                problems.push(format!(
                    "SKIPPED for something not declared {id}: {}",
                    reason(check)
                ));
            }
        }
    }
    let upstream_skipped = UPSTREAM_SKIPPED.contains(&scenario.as_str());
    if upstream_skipped && ran {
        problems.push(
            "runs checks now: remove it from UPSTREAM_SKIPPED in xtask/src/conformance.rs"
                .to_owned(),
        );
    } else if !upstream_skipped && !ran {
        problems.push(format!("no check ran ({} checks)", checks.len()));
    }
    Verdict {
        scenario,
        run,
        counts,
        problems,
    }
}

/// A check's message, or the start of its details.
fn reason(check: &Value) -> String {
    match check.get("errorMessage").and_then(Value::as_str) {
        Some(message) => message.to_owned(),
        None => {
            let details = check
                .get("details")
                .map(Value::to_string)
                .unwrap_or_default();
            details.chars().take(300).collect()
        }
    }
}

/// `cargo xtask conformance-judge LEG LIST [REVISION=]DIR...`: judges the
/// runs in each DIR; a DIR given as `REVISION=DIR` (a `--suite all
/// --spec-version REVISION` run) must hold every scenario LIST tags with
/// REVISION, and some DIR must hold every scenario LIST names. LIST is the
/// output of `conformance list --LEG`. Prints one line per scenario.
pub(crate) fn run_cli(args: &[String]) -> Result<(), String> {
    const USAGE: &str = "usage: cargo xtask conformance-judge server|client LIST [REVISION=]DIR...";
    let [leg, list, dirs @ ..] = args else {
        return Err(USAGE.to_owned());
    };
    let leg = Leg::parse(leg).ok_or(USAGE)?;
    if dirs.is_empty() {
        return Err(USAGE.to_owned());
    }
    let listing = std::fs::read_to_string(list).map_err(|e| format!("cannot read {list}: {e}"))?;
    let listed = listed_scenarios(&listing, leg);
    if listed.is_empty() {
        return Err(format!(
            "{list} names no {} scenario: expected `conformance list --{}` output",
            leg.name(),
            leg.name()
        ));
    }
    let runs: Vec<Run> = dirs
        .iter()
        .map(|arg| match arg.split_once('=') {
            Some((revision, dir)) => Run {
                dir: PathBuf::from(dir),
                required: listed
                    .iter()
                    .filter(|s| s.tags.iter().any(|t| t == revision))
                    .map(|s| s.name.clone())
                    .collect(),
            },
            None => Run {
                dir: PathBuf::from(arg),
                required: Vec::new(),
            },
        })
        .collect();
    let names: Vec<String> = listed.iter().map(|s| s.name.clone()).collect();
    let verdicts = judge(leg, &runs, &names);
    for v in &verdicts {
        let c = &v.counts;
        let summary: Vec<String> = [
            (c.success, "success"),
            (c.warning, "warning"),
            (c.failure, "failure"),
            (c.skipped, "skipped"),
            (c.other, "other"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, s)| format!("{n} {s}"))
        .collect();
        println!(
            "{} {} {}/{}: {}",
            if v.passed() { "ok  " } else { "FAIL" },
            leg.name(),
            v.run,
            v.scenario,
            if summary.is_empty() {
                "no checks".to_owned()
            } else {
                summary.join(", ")
            }
        );
    }
    let failed: Vec<&Verdict> = verdicts.iter().filter(|v| !v.passed()).collect();
    println!(
        "{}: {} scenario runs judged, {} scenarios listed, {} failed",
        leg.name(),
        verdicts.len(),
        listed.len(),
        failed.len()
    );
    if failed.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = failed
        .iter()
        .map(|v| format!("{}/{}: {}", v.run, v.scenario, v.problem()))
        .collect();
    Err(format!(
        "conformance {}: {} scenario runs failed:\n  {}",
        leg.name(),
        failed.len(),
        lines.join("\n  ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAMP: &str = "2026-11-23T08-50-00-123Z";

    /// A results folder under the system's temp dir, removed on drop.
    struct Results(PathBuf);

    impl Results {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("xtask-judge-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create results dir");
            Self(dir)
        }

        fn write(&self, folder: &str, checks: &str) {
            let dir = self.0.join(format!("{folder}-{STAMP}"));
            std::fs::create_dir_all(&dir).expect("create scenario dir");
            std::fs::write(dir.join("checks.json"), checks).expect("write checks.json");
        }

        fn run(&self, required: &[&str]) -> Run {
            Run {
                dir: self.0.clone(),
                required: required.iter().map(|s| (*s).to_owned()).collect(),
            }
        }
    }

    impl Drop for Results {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn outcome(verdicts: &[Verdict]) -> Vec<(&str, bool)> {
        verdicts
            .iter()
            .map(|v| (v.scenario.as_str(), v.passed()))
            .collect()
    }

    #[test]
    fn listings_name_the_scenarios_of_one_leg_with_their_tags() {
        let all = "Server scenarios (test against a server):\n  - server-initialize [2025-06-18,2025-11-25]\n  - tasks-lifecycle [extension]\n";
        assert_eq!(
            listed_scenarios(all, Leg::Server),
            vec![
                Listed {
                    name: "server-initialize".to_owned(),
                    tags: vec!["2025-06-18".to_owned(), "2025-11-25".to_owned()],
                },
                Listed {
                    name: "tasks-lifecycle".to_owned(),
                    tags: vec!["extension".to_owned()],
                },
            ]
        );
        assert!(listed_scenarios(all, Leg::Client).is_empty());
        let required = "Required for 2026-07-28 (69 scenarios):\n\nServer scenarios (test against a server):\n  - server-stateless\n  - tools-list\n\nClient scenarios (test against a client):\n  - tools_call\n\nRun and reported, but never scored:\n  extension (16):\n    - auth/dpop [client]\n";
        let names = |leg| -> Vec<String> {
            listed_scenarios(required, leg)
                .into_iter()
                .map(|s| s.name)
                .collect()
        };
        assert_eq!(names(Leg::Server), ["server-stateless", "tools-list"]);
        assert_eq!(names(Leg::Client), ["tools_call"]);
    }

    #[test]
    fn result_folders_name_their_scenario() {
        let run = Path::new("/r");
        let of = |leg, folder: &str| scenario_of(leg, run, &run.join(folder).join("checks.json"));
        assert_eq!(
            of(Leg::Server, &format!("server-tools-list-{STAMP}")).as_deref(),
            Some("tools-list")
        );
        assert_eq!(
            of(Leg::Client, &format!("auth/basic-cimd-{STAMP}")).as_deref(),
            Some("auth/basic-cimd")
        );
        assert_eq!(of(Leg::Server, &format!("tools-list-{STAMP}")), None);
        assert_eq!(of(Leg::Server, "server-tools-list"), None);
        assert_eq!(of(Leg::Client, "x-2026-11-23T08-50-00-12XZ"), None);
    }

    #[test]
    fn failures_warnings_and_scenarios_without_a_real_check_fail() {
        let results = Results::new("rules");
        results.write(
            "server-good",
            r#"[{"id":"a","status":"SUCCESS"},{"id":"i","status":"INFO"}]"#,
        );
        results.write(
            "server-warned",
            r#"[{"id":"a","status":"SUCCESS"},{"id":"b","status":"WARNING","errorMessage":"should"}]"#,
        );
        results.write(
            "server-bad",
            r#"[{"id":"c","status":"FAILURE","errorMessage":"boom"}]"#,
        );
        results.write(
            "server-schema-only",
            r#"[{"id":"wire-schema-valid","status":"SUCCESS"},{"id":"x","status":"SKIPPED"}]"#,
        );
        results.write("server-no-checks", "[]");
        results.write("server-garbled", "{not json");
        results.write(
            "server-not-declared",
            r#"[{"id":"a","status":"SUCCESS"},{"id":"s","status":"SKIPPED","errorMessage":"Server did not declare the io.modelcontextprotocol/skills extension"}]"#,
        );
        results.write(
            "server-skipped-legitimately",
            r#"[{"id":"a","status":"SUCCESS"},{"id":"s","status":"SKIPPED","errorMessage":"not applicable on negotiated protocol 2025-11-25"}]"#,
        );
        let verdicts = judge(Leg::Server, &[results.run(&[])], &[]);
        assert_eq!(
            outcome(&verdicts),
            [
                ("bad", false),
                ("garbled", false),
                ("good", true),
                ("no-checks", false),
                ("not-declared", false),
                ("schema-only", false),
                ("skipped-legitimately", true),
                ("warned", false),
            ]
        );
        assert_eq!(verdicts[0].problems, ["FAILURE c: boom"]);
        assert_eq!(verdicts[7].problems, ["WARNING b: should"]);
        assert_eq!(verdicts[2].counts.other, 1);
    }

    #[test]
    fn only_the_upstream_skipped_scenario_may_run_no_check_and_only_while_it_does() {
        let skipped =
            r#"[{"id":"s","status":"SKIPPED","errorMessage":"Skipped: pending rewrite"}]"#;
        let results = Results::new("upstream");
        results.write("server-tasks-status-notifications", skipped);
        results.write("server-tasks-lifecycle", skipped);
        let verdicts = judge(Leg::Server, &[results.run(&[])], &[]);
        assert_eq!(
            outcome(&verdicts),
            [
                ("tasks-lifecycle", false),
                ("tasks-status-notifications", true)
            ]
        );
        let now_runs = Results::new("upstream-runs");
        now_runs.write(
            "server-tasks-status-notifications",
            r#"[{"id":"n","status":"SUCCESS"}]"#,
        );
        let verdicts = judge(Leg::Server, &[now_runs.run(&[])], &[]);
        assert_eq!(outcome(&verdicts), [("tasks-status-notifications", false)]);
    }

    #[test]
    fn required_and_listed_scenarios_without_results_fail() {
        let first = Results::new("first");
        first.write("auth/dpop", r#"[{"id":"a","status":"SUCCESS"}]"#);
        let empty = Results::new("empty");
        let listed = ["auth/dpop", "tools_call", "initialize"].map(str::to_owned);
        let verdicts = judge(
            Leg::Client,
            &[first.run(&["auth/dpop", "tools_call"]), empty.run(&[])],
            &listed,
        );
        assert_eq!(
            outcome(&verdicts),
            [
                ("auth/dpop", true),
                ("tools_call", false),
                ("-", false),
                ("initialize", false),
            ]
        );
        assert_eq!(verdicts[3].run, "-");
    }
}
