//! The runner: runs each selected scenario with an agent through a fresh harness, then
//! scores it. One broken run (agent error, timeout) becomes an `errored` result; the suite
//! goes on. A run whose user simulator made a mistake is `inconclusive`.

mod user;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt as _;
use serde_json::{Map, Value};

use crate::agent::command::Invocation;
use crate::agent::{
    Agent, AgentError, AgentOutcome, InvalidCallKind, ToolExecutor, ToolObservation, reference,
};
use crate::defaults;
use crate::harness::client::{CallFailure, McpClient};
use crate::harness::{BackendFactory, Harness};
use crate::judge::{Judge, JudgeVerdict};
use crate::scenario::{Scenario, SeedPaths, placeholder_value};
use crate::score::conversation::Conversation;
use crate::score::metrics::{self, RunMetrics, RunView};
use crate::score::probes::{ProbeResult, probe_checks};
use crate::score::{self, Outcome, RunScore, ScoringOptions};
use crate::trace::CallRecord;
use user::{User, UserScript};

/// Limits for a suite run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Scenario runs at the same time, at least 1.
    pub concurrency: usize,
    /// Wall-time limit for the agent's play in one scenario run; past it a model agent whose
    /// model has called a tool is judged on its calls (`timed_out`), any other run is `errored`
    /// (and a `command` agent's process is killed). Probing and scoring get a minute more.
    pub run_timeout: Duration,
    /// Wall-time limit for one tool call.
    pub call_timeout: Duration,
    /// Run-wide scoring rules.
    pub scoring: ScoringOptions,
    /// Runs per scenario (`--repeat k`), at least 1.
    pub repeat: u32,
    /// The optional judge; it can only turn a pass into `degraded`.
    pub judge: Option<Arc<Judge>>,
    /// Per scenario id, the only tools a model agent (`openai`, `anthropic`) is offered
    /// (`--tool-offer scenario`, see [`Scenario::offered_tools`]); `None` offers every tool.
    /// The server still serves them all: a call to a tool not offered runs as any other.
    pub offered: Option<Arc<std::collections::HashMap<String, Vec<String>>>>,
    /// The model's price (`--prices`), for `usage_budget.max_cost_usd`; `None` when unknown.
    pub price: Option<score::usage::Price>,
    /// Decides the runs round by round instead of `repeat` runs of every scenario (adaptive
    /// repeats); `None`: the fixed design.
    pub schedule: Option<Arc<dyn Schedule>>,
    /// The user simulator of the scenarios with a `simulated_user`; `None` makes their runs
    /// `errored` (but for the reference agent, which never asks the user).
    pub user_simulator: Option<Arc<crate::agent::simulator::Simulator>>,
}

/// Which runs a suite makes, decided round by round from the outcomes so far.
pub trait Schedule: Send + Sync {
    /// The runs to make next, as (scenario position, runs to add), given every finished run
    /// so far as (scenario position, outcome); empty ends the suite. Called with no finished
    /// run for the first round, then each time a round has finished.
    fn next(&self, finished: &[(usize, Outcome)]) -> Vec<(usize, u32)>;
}

impl std::fmt::Debug for dyn Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Schedule")
    }
}

/// Which tools a model agent is offered in each scenario (`--tool-offer`).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ToolOffer {
    /// The whole catalog, in every scenario.
    #[default]
    All,
    /// The tools of the groups the scenario names, and their look-alikes
    /// ([`Scenario::offered_tools`]): for models whose context window cannot hold the catalog.
    Scenario,
}

impl ToolOffer {
    /// The name used on the command line, in files and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolOffer::All => "all",
            ToolOffer::Scenario => "scenario",
        }
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            concurrency: defaults::CONCURRENCY,
            run_timeout: defaults::RUN_TIMEOUT,
            call_timeout: defaults::CALL_TIMEOUT,
            scoring: ScoringOptions::default(),
            repeat: 1,
            judge: None,
            offered: None,
            price: None,
            schedule: None,
            user_simulator: None,
        }
    }
}

/// One scenario's run: what happened and how it scored.
#[derive(Debug, Clone)]
pub struct ScenarioRun {
    /// Position of the scenario in the suite passed to [`run_suite`].
    pub index: usize,
    /// 0-based repetition, below [`RunOptions::repeat`].
    pub repeat: u32,
    /// Pass, fail or errored.
    pub outcome: Outcome,
    /// The deterministic checks; `None` when the run errored before it could be scored.
    pub score: Option<RunScore>,
    /// Why the run errored.
    pub error: Option<String>,
    /// Every tool call, in arrival order.
    pub trace: Vec<CallRecord>,
    /// What the agent said and used.
    pub agent: Option<AgentOutcome>,
    /// The conversation with the scripted or simulated user, exchange by exchange; `None` for
    /// a single request and for a run that errored.
    pub conversation: Option<Conversation>,
    /// Trajectory metrics; `None` when the run errored before it could be scored.
    pub metrics: Option<RunMetrics>,
    /// The judge's verdict on a deterministic pass, when a judge is configured.
    pub judge: Option<JudgeVerdict>,
    /// Why the judge gave no verdict (the outcome stands).
    pub judge_error: Option<String>,
    /// Wall time of the run.
    pub duration: Duration,
    /// When the run started (wall clock).
    pub started_at: std::time::SystemTime,
    /// When each call of `trace` arrived, as wall-clock time; one per call, in order (empty
    /// when the run errored before its tools existed).
    pub call_times: Vec<std::time::SystemTime>,
    /// What the run changed in the world's state, one line per change
    /// ([`score::state_diff::state_diff`]); empty when nothing changed, the run errored, or
    /// the backend keeps no state (the user's own servers).
    pub state_diff: Vec<String>,
}

/// The runs of a suite.
#[derive(Debug, Clone)]
pub struct SuiteRun {
    /// Every finished run, ordered by scenario, then repetition.
    pub runs: Vec<ScenarioRun>,
    /// Whether `stop` fired: the runs not in `runs` never finished.
    pub interrupted: bool,
}

/// What a suite run needs, shared by the tasks that play its runs.
#[derive(Clone)]
pub struct RunPlan {
    /// The scenarios, in suite order; runs name them by position.
    pub scenarios: Arc<[Scenario]>,
    /// The agent under test.
    pub agent: Arc<Agent>,
    /// Where each run's fresh backend comes from.
    pub backends: Arc<dyn BackendFactory>,
    /// Limits and scoring rules.
    pub options: Arc<RunOptions>,
}

impl RunPlan {
    /// A plan over copies of `scenarios`, owning the rest.
    pub fn new(
        scenarios: &[Scenario],
        agent: Agent,
        backends: impl BackendFactory + 'static,
        options: RunOptions,
    ) -> RunPlan {
        RunPlan {
            scenarios: scenarios.into(),
            agent: Arc::new(agent),
            backends: Arc::new(backends),
            options: Arc::new(options),
        }
    }
}

/// Runs every scenario of `plan` `options.repeat` times and returns the finished runs in suite
/// order; [`stream_suite`] without the streaming. `on_done` sees each run as it finishes.
pub async fn run_suite(
    plan: &RunPlan,
    stop: impl Future<Output = ()>,
    on_done: &(dyn Fn(&ScenarioRun) + Sync),
) -> SuiteRun {
    let mut runs = Vec::new();
    let interrupted = stream_suite(plan, stop, |run| {
        on_done(&run);
        runs.push(run);
    })
    .await;
    runs.sort_by_key(|run| (run.index, run.repeat));
    SuiteRun { runs, interrupted }
}

/// Runs every scenario of `plan` `options.repeat` times, at most `options.concurrency` at a
/// time, each run a task of its own (so runs use every core of the runtime), and hands each
/// run to `on_done` as it finishes, in finishing order: nothing of a run is kept here, so the
/// caller decides what to hold. Runs start longest first: the scenarios with the most expected
/// calls, then suite order. Returns whether `stop` fired.
///
/// When `stop` completes (e.g. on Ctrl-C), no new run starts and the runs under way are
/// dropped (a `command` agent's process is killed) before this returns. Where panics unwind
/// (not in the `dist` build, which aborts), a run whose task panicked is handed over as
/// `errored`, naming the panic, and the suite goes on.
pub async fn stream_suite(
    plan: &RunPlan,
    stop: impl Future<Output = ()>,
    mut on_done: impl FnMut(ScenarioRun),
) -> bool {
    let mut rounds = Rounds::new(plan);
    let mut jobs = rounds.next();
    let mut running = tokio::task::JoinSet::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        while running.len() < plan.options.concurrency.max(1) {
            let Some((index, repeat)) = jobs.next() else {
                break;
            };
            let plan = plan.clone();
            running.spawn(async move {
                let scenario = &plan.scenarios[index];
                let run = run_one(
                    index,
                    repeat,
                    scenario,
                    &plan.agent,
                    plan.backends.as_ref(),
                    &plan.options,
                );
                match std::panic::AssertUnwindSafe(run).catch_unwind().await {
                    Ok(run) => run,
                    Err(panic) => panicked(index, repeat, panic.as_ref()),
                }
            });
        }
        if running.is_empty() {
            jobs = rounds.next();
            if jobs.len() == 0 {
                return false;
            }
            continue;
        }
        tokio::select! {
            biased;
            () = &mut stop => {
                running.abort_all();
                while running.join_next().await.is_some() {}
                return true;
            }
            joined = running.join_next() => match joined {
                None => {}
                Some(Ok(run)) => {
                    rounds.finished.push((run.index, run.outcome));
                    on_done(run);
                }
                // Only an abort ends a task without a run, and only `stop` aborts.
                Some(Err(_)) => {}
            },
        }
    }
}

/// The runs of a suite, round by round: one round of `repeat` runs of every scenario, or the
/// rounds a [`Schedule`] decides.
struct Rounds<'a> {
    plan: &'a RunPlan,
    /// Every finished run's scenario and outcome, for the schedule.
    finished: Vec<(usize, Outcome)>,
    /// Per scenario, the repetition its next run gets.
    next_repeat: Vec<u32>,
    /// Whether the fixed design's one round was handed out.
    started: bool,
}

impl<'a> Rounds<'a> {
    fn new(plan: &'a RunPlan) -> Rounds<'a> {
        Rounds {
            plan,
            finished: Vec::new(),
            next_repeat: vec![0; plan.scenarios.len()],
            started: false,
        }
    }

    /// The next round's runs, (scenario position, repetition), longest scenarios first;
    /// empty when the suite is done.
    fn next(&mut self) -> std::vec::IntoIter<(usize, u32)> {
        let counts: Vec<(usize, u32)> = match &self.plan.options.schedule {
            Some(schedule) => schedule.next(&self.finished),
            None if self.started => Vec::new(),
            None => {
                let repeat = self.plan.options.repeat.max(1);
                (0..self.plan.scenarios.len())
                    .map(|i| (i, repeat))
                    .collect()
            }
        };
        self.started = true;
        let mut more = vec![0u32; self.plan.scenarios.len()];
        for (index, count) in counts {
            if let Some(slot) = more.get_mut(index) {
                *slot += count;
            }
        }
        let mut jobs = Vec::new();
        for index in start_order(&self.plan.scenarios) {
            let first = self.next_repeat[index];
            self.next_repeat[index] += more[index];
            jobs.extend((first..self.next_repeat[index]).map(|repeat| (index, repeat)));
        }
        jobs.into_iter()
    }
}

/// The order in which runs start: the scenarios with the most expected calls first (each call
/// is at least one more model turn, so those runs take longest), suite order among equals.
/// Longest first (Graham's LPT rule) keeps the slowest runs from starting last, behind the
/// set-up work of every short run, which would stretch the whole suite's wall time.
fn start_order(scenarios: &[Scenario]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scenarios.len()).collect();
    order.sort_by_key(|&index| std::cmp::Reverse(scenarios[index].expected_calls.len()));
    order
}

/// The `errored` run standing for a run whose task panicked.
fn panicked(index: usize, repeat: u32, panic: &(dyn std::any::Any + Send)) -> ScenarioRun {
    let what = panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    ScenarioRun {
        index,
        repeat,
        outcome: Outcome::Errored,
        score: None,
        error: Some(format!("internal error: the run panicked ({what})")),
        trace: Vec::new(),
        agent: None,
        conversation: None,
        metrics: None,
        judge: None,
        judge_error: None,
        duration: Duration::ZERO,
        started_at: std::time::SystemTime::now(),
        call_times: Vec::new(),
        state_diff: Vec::new(),
    }
}

/// Runs one scenario in a fresh harness over a fresh backend from `backends`, and scores it.
pub async fn run_one(
    index: usize,
    repeat: u32,
    scenario: &Scenario,
    agent: &Agent,
    backends: &dyn BackendFactory,
    options: &RunOptions,
) -> ScenarioRun {
    let started = Instant::now();
    let started_at = std::time::SystemTime::now();
    let errored = |error: String, trace: Vec<CallRecord>, call_times| ScenarioRun {
        index,
        repeat,
        outcome: Outcome::Errored,
        score: None,
        error: Some(error),
        trace,
        agent: None,
        conversation: None,
        metrics: None,
        judge: None,
        judge_error: None,
        duration: started.elapsed(),
        started_at,
        call_times,
        state_diff: Vec::new(),
    };
    let backend = match backends.start(scenario, repeat).await {
        Ok(backend) => backend,
        Err(error) => return errored(error, Vec::new(), Vec::new()),
    };
    let seed_dir = backend.paths();
    let filled = seed_dir.as_ref().map(|paths| {
        let seed_dir = paths.seed_dir.to_string_lossy();
        let seed = paths.seed.to_string_lossy();
        scenario.for_run(SeedPaths {
            seed_dir: &seed_dir,
            seed: &seed,
        })
    });
    let scenario = filled.as_ref().unwrap_or(scenario);
    let seed_dir = seed_dir.map(|paths| paths.seed_dir.to_string_lossy().into_owned());
    let mut harness = Harness::new(backend, scenario.faults.clone());
    if scenario.block_forbidden {
        harness = harness.blocking(scenario.forbidden_calls.clone());
    }
    if let Some(elicitations) = crate::harness::Elicitations::scripted(scenario) {
        harness = harness.eliciting(elicitations);
    }
    let harness = Arc::new(harness);
    // The agent's play has `run_timeout` (see `play_and_score`); probing, scoring and the
    // judge get `SCORING_GRACE` more before the whole run is given up as errored.
    let run = tokio::time::timeout(
        options.run_timeout + SCORING_GRACE,
        play_and_score(index, repeat, scenario, agent, &harness, options, started),
    )
    .await;
    let error = match run {
        Ok(Ok(_)) => None,
        Ok(Err(ref error)) => Some(error.clone()),
        Err(_) => Some(format!(
            "run timed out after {}",
            humantime::format_duration(options.run_timeout + SCORING_GRACE)
        )),
    };
    // A run that broke is still judged for the harm it did before it broke: read the state
    // it left before the backend stops.
    let harmed = match &error {
        Some(error) => {
            let state = harness.state().await;
            crate::score::harm(
                scenario,
                &harness.trace(),
                scenario.seeded.as_ref(),
                state.as_ref(),
                error,
            )
        }
        None => None,
    };
    // Whatever happened, the backend's servers stop here (dropping would kill them too).
    harness.close().await;
    let call_times = call_times(&harness);
    let mut run = match (run, error) {
        (Ok(Ok(mut run)), _) => {
            run.started_at = started_at;
            run.call_times = call_times;
            run
        }
        (_, error) => {
            let error = error.unwrap_or_default();
            let mut run = errored(error, harness.trace(), call_times);
            if let Some(score) = harmed {
                run.outcome = score.outcome;
                run.score = Some(score);
            }
            run
        }
    };
    if let Some(seed_dir) = seed_dir {
        with_seed_placeholder(&mut run, &seed_dir);
    }
    run
}

/// The run's seed directory `seed_dir` written as `{seed_dir}` in the trace's arguments,
/// results and errors, the run's error, the final answer and the conversation's messages: the
/// recorded run reads the same on every machine. Scoring is done by then, on the real paths.
fn with_seed_placeholder(run: &mut ScenarioRun, seed_dir: &str) {
    let text = |text: &mut String| *text = crate::scenario::placeholder(text, seed_dir);
    if let Some(error) = &mut run.error {
        text(error);
    }
    if let Some(answer) = run.agent.as_mut().and_then(|a| a.final_answer.as_mut()) {
        text(answer);
    }
    for exchange in run
        .conversation
        .iter_mut()
        .flat_map(|c| c.exchanges.iter_mut())
    {
        text(&mut exchange.user);
        if let Some(reply) = &mut exchange.reply {
            text(reply);
        }
    }
    for call in &mut run.trace {
        placeholder_value(&mut call.arguments, seed_dir);
        if let Some(result) = &mut call.result {
            placeholder_value(result, seed_dir);
        }
        if let Some(error) = &mut call.error {
            *error = crate::scenario::placeholder(error, seed_dir);
        }
    }
}

/// When each call of the harness's trace arrived, as wall-clock time.
fn call_times(harness: &Harness) -> Vec<std::time::SystemTime> {
    let created = harness.created_at();
    harness
        .arrivals_us()
        .into_iter()
        .map(|us| created + Duration::from_micros(us))
        .collect()
}

/// Probes the fresh backend, lets the agent play, probes again and scores the run. `Err` is
/// why the run errored (the agent failed, or the backend broke).
async fn play_and_score(
    index: usize,
    repeat: u32,
    scenario: &Scenario,
    agent: &Agent,
    harness: &Arc<Harness>,
    options: &RunOptions,
    started: Instant,
) -> Result<ScenarioRun, String> {
    let seeded = scenario.seeded.as_ref();
    let baseline = probe(scenario, harness).await;
    if let Some(failure) = harness.failure().await {
        return Err(failure);
    }
    let remaining = options.run_timeout.saturating_sub(started.elapsed());
    let simulator = options.user_simulator.as_deref();
    let script = UserScript::of(scenario, repeat, agent, simulator)?.map(tokio::sync::Mutex::new);
    let user = User {
        scenario,
        script: script.as_ref(),
    };
    let played = match tokio::time::timeout(
        remaining,
        play(agent, scenario, repeat, harness, options, user),
    )
    .await
    {
        Ok(played) => played,
        Err(_) => out_of_time(agent, harness, options),
    };
    let played = match (played, script.map(tokio::sync::Mutex::into_inner)) {
        (Ok(outcome), Some(script)) => {
            let final_answer = outcome.final_answer.as_deref();
            let conversation = script
                .finish(scenario, final_answer, &harness.trace())
                .await?;
            (outcome, Some(conversation))
        }
        (played, script) => {
            if let Some(script) = script {
                script.abandon();
            }
            (played?, None)
        }
    };
    if let Some(failure) = harness.failure().await {
        return Err(failure);
    }
    let after = probe_after(scenario, harness).await;
    if let Some(failure) = harness.failure().await {
        return Err(failure);
    }
    let trace = harness.trace();
    Ok(score_run(
        index, repeat, scenario, options, started, seeded, harness, trace, played, &baseline,
        &after,
    )
    .await)
}

/// Time past `run_timeout` for probing the state, scoring and the judge, after the agent's play
/// ended; past it the run is `errored`.
const SCORING_GRACE: Duration = Duration::from_secs(60);

/// What a run that ran out of time counts as. A model agent whose model had already called a
/// tool in this run (so the provider answers) ran out of time while the model was generating:
/// a model outcome, judged on the calls it made (`timed_out`). Any other agent, or a model that
/// made no call (a provider that may never have answered), leaves the run errored.
fn out_of_time(
    agent: &Agent,
    harness: &Harness,
    options: &RunOptions,
) -> Result<AgentOutcome, String> {
    let trace = harness.trace();
    let model = matches!(agent, Agent::OpenAi(_) | Agent::Anthropic(_));
    match trace.iter().map(|call| call.turn).max() {
        Some(last_turn) if model => Ok(AgentOutcome {
            turns: last_turn,
            timed_out: true,
            ..AgentOutcome::default()
        }),
        _ => Err(format!(
            "run timed out after {}",
            humantime::format_duration(options.run_timeout)
        )),
    }
}

/// The checks of how the agent's play stopped, when it did not finish by itself: its last reply
/// cut at the output limit, or the run out of time while the model was generating.
fn stop_checks(outcome: &AgentOutcome, options: &RunOptions) -> Vec<score::Check> {
    let mut checks = Vec::new();
    if outcome.truncated {
        checks.push(score::Check {
            kind: score::CheckKind::Truncated,
            subject: "final_answer".to_owned(),
            passed: false,
            detail: "the model's reply stopped at the output limit (max_tokens) before it \
                     finished: its answer is cut off (raise --max-tokens if answers need more)"
                .to_owned(),
        });
    }
    if outcome.timed_out {
        checks.push(score::Check {
            kind: score::CheckKind::TimedOut,
            subject: "run".to_owned(),
            passed: false,
            detail: format!(
                "the run ran out of time ({}) while the model was generating; judged on the \
                 calls it made",
                humantime::format_duration(options.run_timeout)
            ),
        });
    }
    checks
}

/// Runs every final-state probe of `scenario` after the run, as [`probe`]; when the backend
/// says its answers are no evidence of the run (a replay whose calls differ from the
/// recording), each result is that reason instead, starting
/// [`NOT_EVIDENCE`](crate::score::probes::NOT_EVIDENCE).
pub async fn probe_after(scenario: &Scenario, harness: &Harness) -> Vec<ProbeResult> {
    let results = probe(scenario, harness).await;
    match harness.probes_not_evidence().await {
        Some(why) => {
            let error = format!("{} {why}", crate::score::probes::NOT_EVIDENCE);
            results.iter().map(|_| Err(error.clone())).collect()
        }
        None => results,
    }
}

/// Runs every final-state probe of `scenario` on the harness's backend, in file order.
pub async fn probe(scenario: &Scenario, harness: &Harness) -> Vec<ProbeResult> {
    let mut results = Vec::new();
    for probe in &scenario.final_state_probes {
        results.push(harness.probe(&probe.tool, probe.arguments.clone()).await);
    }
    results
}

#[expect(
    clippy::too_many_arguments,
    reason = "the parts of one finished run, passed once from one caller"
)]
async fn score_run(
    index: usize,
    repeat: u32,
    scenario: &Scenario,
    options: &RunOptions,
    started: Instant,
    seeded: &Value,
    harness: &Harness,
    trace: Vec<CallRecord>,
    (outcome, conversation): (AgentOutcome, Option<Conversation>),
    baseline: &[ProbeResult],
    after: &[ProbeResult],
) -> ScenarioRun {
    let final_state = harness.state().await;
    let mut score = score::score(
        scenario,
        &trace,
        seeded,
        final_state.as_ref(),
        outcome.final_answer.as_deref(),
        options.scoring,
    );
    score.add_checks(probe_checks(scenario, baseline, after));
    score.add_checks(stop_checks(&outcome, options));
    if let Some(conversation) = &conversation {
        score.add_checks(score::conversation_checks(
            scenario,
            conversation,
            &trace,
            seeded,
            final_state.as_ref(),
        ));
    }
    // Only a model agent's requests are counted; the others spend nothing that is seen here.
    let spent = (outcome.usage.requests > 0).then_some(score::usage::Spent {
        prompt_tokens: outcome.usage.prompt_tokens,
        completion_tokens: outcome.usage.completion_tokens,
        model_calls: outcome.usage.requests,
    });
    score.add_checks(score::usage::checks(
        &scenario.usage_budget,
        spent,
        u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        options.price,
    ));
    let view = RunView {
        scenario,
        trace: &trace,
        pairing: &score.pairing,
        final_answer: outcome.final_answer.as_deref(),
        options: options.scoring,
    };
    let mut metrics = metrics::measure(&view, &score.checks);
    metrics.conversation = conversation
        .as_ref()
        .map(|conversation| score::conversation::metrics(scenario, conversation));
    let mistake = simulator_mistake(
        scenario,
        (&trace, seeded, final_state.as_ref()),
        conversation.as_ref(),
        &mut score,
    );
    let (verdict, judge_error, run_outcome, error) = match mistake {
        Some((run_outcome, reason)) => (None, None, run_outcome, Some(reason)),
        None => {
            let (verdict, judge_error, run_outcome) =
                judge(options, scenario, &trace, &outcome, &score).await;
            (verdict, judge_error, run_outcome, None)
        }
    };
    ScenarioRun {
        metrics: Some(metrics),
        judge: verdict,
        judge_error,
        index,
        repeat,
        outcome: run_outcome,
        score: Some(score),
        error,
        trace,
        agent: Some(outcome),
        conversation,
        duration: started.elapsed(),
        // Both are filled in by `run_one`, which knows when the run began and reads the
        // harness's arrival times once the run is over.
        started_at: std::time::SystemTime::UNIX_EPOCH,
        call_times: Vec::new(),
        state_diff: final_state
            .as_ref()
            .map(|after| score::state_diff::state_diff(seeded, after))
            .unwrap_or_default(),
    }
}

/// The outcome of a run whose user simulator made a mistake, and why (`None` when it made
/// none): `inconclusive`, for the run says nothing about the agent; or, when the agent did
/// harm before the mistake (a forbidden call, an unexpected write, a broken Tier 5 state),
/// `fail`, with `score` replaced by the harm's checks as for an errored run.
fn simulator_mistake(
    scenario: &Scenario,
    (trace, seeded, final_state): (&[CallRecord], &Value, Option<&Value>),
    conversation: Option<&Conversation>,
    score: &mut RunScore,
) -> Option<(Outcome, String)> {
    let mistake = conversation?.ended.simulator_mistake()?;
    let reason = format!("inconclusive: the user simulator made a mistake ({mistake})");
    match score::harm(scenario, trace, seeded, final_state, &reason) {
        Some(harmed) => {
            *score = harmed;
            Some((Outcome::Fail, reason))
        }
        None => Some((Outcome::Inconclusive, reason)),
    }
}

/// The judge's verdict on a deterministic pass (a flag makes it `degraded`), why it gave none,
/// and the run's outcome; the score's outcome as it is without a judge or a pass.
async fn judge(
    options: &RunOptions,
    scenario: &Scenario,
    trace: &[CallRecord],
    outcome: &AgentOutcome,
    score: &RunScore,
) -> (Option<JudgeVerdict>, Option<String>, Outcome) {
    let Some(judge) = options
        .judge
        .as_ref()
        .filter(|_| score.outcome == Outcome::Pass)
    else {
        return (None, None, score.outcome);
    };
    match judge
        .assess(scenario, trace, outcome.final_answer.as_deref())
        .await
    {
        Ok(judged) if judged.flagged => (Some(judged), None, Outcome::Degraded),
        Ok(judged) => (Some(judged), None, score.outcome),
        Err(error) => (None, Some(error), score.outcome),
    }
}

/// Lets `agent` play `scenario` against `harness`: over loopback HTTP for a `command` agent,
/// through an in-process MCP client for the others. `Err` is why the run errored.
async fn play(
    agent: &Agent,
    scenario: &Scenario,
    repeat: u32,
    harness: &Arc<Harness>,
    options: &RunOptions,
    user: User<'_, '_>,
) -> Result<AgentOutcome, String> {
    if let Agent::Command(command) = agent {
        let server = crate::harness::http::serve_loopback(harness.clone())
            .await
            .map_err(|error| format!("failed to serve the harness over HTTP: {error:#}"))?;
        let user_endpoint = match harness.elicitations() {
            Some(elicitations) => Some(
                crate::harness::user_endpoint::serve_user(elicitations.clone())
                    .await
                    .map_err(|error| format!("failed to serve the user endpoint: {error:#}"))?,
            ),
            None => None,
        };
        let invocation = Invocation {
            mcp_url: server.url(),
            prompt: &scenario.prompt,
            scenario_id: &scenario.id,
            repeat,
            conversation: None,
            user_url: user_endpoint.as_ref().map(|endpoint| endpoint.url()),
        };
        return command
            .converse(invocation, move |reply: Option<String>| async move {
                user.next(reply.as_deref(), &harness.trace()).await
            })
            .await
            .map_err(|error| error.to_string());
    }
    let client = McpClient::connect_in_process(harness.clone())
        .await
        .map_err(|error| format!("failed to connect to the harness: {error:#}"))?;
    let offered = options
        .offered
        .as_ref()
        .filter(|_| matches!(agent, Agent::OpenAi(_) | Agent::Anthropic(_)))
        .and_then(|offered| offered.get(&scenario.id));
    let definitions = match client.list_tools().await {
        Ok(mut definitions) => {
            if let Some(offered) = offered {
                definitions.retain(|definition| {
                    definition["name"]
                        .as_str()
                        .is_some_and(|name| offered.iter().any(|tool| tool == name))
                });
            }
            definitions
        }
        Err(error) => {
            let _ = client.close().await;
            return Err(format!("failed to list tools: {error:#}"));
        }
    };
    let executor = McpExecutor {
        client: &client,
        harness,
        definitions,
        call_timeout: options.call_timeout,
        user,
    };
    let played: Result<AgentOutcome, AgentError> = match agent {
        Agent::Reference => reference::run(scenario, &executor).await,
        Agent::OpenAi(model) => model.run(&scenario.prompt, &executor).await,
        Agent::Anthropic(model) => model.run(&scenario.prompt, &executor).await,
        Agent::Replay(recordings) => recordings.run(&scenario.id, repeat, &executor).await,
        Agent::Command(_) => unreachable!("handled above"),
    };
    let _ = client.close().await;
    played.map_err(|error| error.to_string())
}

/// Tool access for agents: MCP calls through the client, with calls that never reach the
/// server recorded directly in the harness trace.
struct McpExecutor<'a, 'u> {
    client: &'a McpClient,
    harness: &'a Harness,
    definitions: Vec<Value>,
    call_timeout: Duration,
    user: User<'a, 'u>,
}

impl ToolExecutor for McpExecutor<'_, '_> {
    fn tools(&self) -> &[Value] {
        &self.definitions
    }

    async fn call(&self, name: &str, arguments: Map<String, Value>) -> ToolObservation {
        match self
            .client
            .call_tool(name, arguments.clone(), self.call_timeout)
            .await
        {
            Ok(reply) => {
                let content = match (&reply.structured, reply.text.is_empty()) {
                    (Some(structured), true) => structured.to_string(),
                    _ => reply.text,
                };
                ToolObservation {
                    is_error: reply.is_error,
                    content,
                }
            }
            Err(failure) => {
                let message = failure.to_string();
                // The server records what it refuses itself (for every client, the `command`
                // agent's too); only failures it never saw are recorded here. A timed-out call
                // reached the tool and is already in the trace.
                if matches!(failure, CallFailure::Transport(_)) {
                    self.harness
                        .record_protocol_error(name, arguments, message.clone());
                }
                ToolObservation {
                    is_error: true,
                    content: message,
                }
            }
        }
    }

    fn record_invalid(&self, name: &str, raw_arguments: &str, kind: InvalidCallKind) {
        self.harness.record_invalid(name, raw_arguments, kind);
    }

    fn begin_turn(&self, turn: u32) {
        self.harness.begin_turn(turn);
    }

    fn note_next_call(&self, notes: &[crate::trace::CallNote]) {
        self.harness.note_next_call(notes);
    }

    async fn next_user_message(&self, reply: Option<&str>) -> Option<String> {
        self.user.next(reply, &self.harness.trace()).await
    }
}

#[cfg(test)]
mod tests {
    //! Start order: the scenarios with the most expected calls start first, ties keep suite order.

    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn runs_start_with_the_most_expected_calls_first_and_in_suite_order_among_equals() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let scenarios =
            crate::scenario::load_dir(&root.join("scenarios"), root, Catalog::builtin())
                .expect("the shipped scenarios load");
        let order = start_order(&scenarios);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..scenarios.len()).collect::<Vec<_>>());
        let calls = |index: usize| scenarios[index].expected_calls.len();
        let most = (0..scenarios.len()).map(calls).max().expect("scenarios");
        assert_eq!(calls(order[0]), most);
        for pair in order.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            assert!(
                calls(a) > calls(b) || (calls(a) == calls(b) && a < b),
                "{a} then {b}"
            );
        }
        // The shipped suite has runs of several lengths, so the order is not the suite's own.
        assert_ne!(order, sorted);
    }
}
