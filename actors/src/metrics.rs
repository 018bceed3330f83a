//! The process's Prometheus metrics: one registry, the instruments the actors update as
//! things happen, and the gauges the service sets when it is scraped.
//!
//! Every label takes values from a small fixed set (outcomes, paths, tool names or
//! `unknown`, endpoints, HTTP statuses or a failure kind), so series stay bounded. The
//! labels are named where their facts live (an attempt's status by the LLM client, a
//! tool's by the turn's tools), so that this module depends on the turn record only.

use std::sync::LazyLock;
use std::time::Duration;

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

use crate::record::{ErrorCode, TurnOutcome, TurnRecord};

/// Buckets (seconds) of the time to a turn's first `delta`.
const FIRST_DELTA_BUCKETS: &[f64] = &[0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];
/// Buckets (seconds) of a whole turn.
const TURN_BUCKETS: &[f64] = &[
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];
/// Buckets (seconds) of one attempt of an LLM request, to its last byte.
const LLM_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// Buckets (seconds) of one phase of a turn: milliseconds for embedding and retrieval,
/// up to minutes for a long answer.
const PHASE_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
    120.0, 300.0,
];

/// The requests bor makes to the LLM server, as the `endpoint` label names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlmEndpoint {
    Chat,
    Embeddings,
    Models,
    Rerank,
}

impl LlmEndpoint {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Embeddings => "embeddings",
            Self::Models => "models",
            Self::Rerank => "rerank",
        }
    }
}

/// The `status` label of an attempt dropped before it ended (its turn went away).
pub const CANCELLED: &str = "cancelled";

pub struct Metrics {
    registry: Registry,
    turns: IntCounterVec,
    turn_errors: IntCounterVec,
    turn_retries: IntCounter,
    llm_tokens: IntCounterVec,
    recoveries: IntCounterVec,
    scaffold_stripped: IntCounter,
    tool_calls: IntCounterVec,
    first_delta: Histogram,
    turn_duration: HistogramVec,
    turn_phases: HistogramVec,
    turns_in_flight: IntGauge,
    llm_requests: HistogramVec,
    log_queue: IntGauge,
    log_refused: IntCounter,
    log_dropped: IntCounter,
    log_written: IntCounter,
    turns_refused: IntCounterVec,
    db_pool: IntGaugeVec,
    feedback: IntCounterVec,
    mcp_calls: IntCounterVec,
    mcp_call_duration: HistogramVec,
    turns_kept: IntGauge,
    frames_kept_bytes: IntGauge,
    history_reads: IntCounterVec,
    history_cache: IntGaugeVec,
}

/// The process's metrics.
pub fn metrics() -> &'static Metrics {
    static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
        #[expect(
            clippy::expect_used,
            reason = "the definitions are constants; a unit test builds them"
        )]
        Metrics::new().expect("the metric definitions are valid")
    });
    &METRICS
}

impl Metrics {
    fn new() -> prometheus::Result<Metrics> {
        let registry = Registry::new();
        let turns = IntCounterVec::new(
            Opts::new("bor_turns_total", "Chat turns ended, by outcome and path."),
            &["outcome", "path"],
        )?;
        let turn_errors = IntCounterVec::new(
            Opts::new(
                "bor_turn_errors_total",
                "Chat turns that ended with an error frame, by code.",
            ),
            &["code"],
        )?;
        let turn_retries = IntCounter::new(
            "bor_turn_retries_total",
            "Retries of LLM requests made by chat turns.",
        )?;
        let llm_tokens = IntCounterVec::new(
            Opts::new(
                "bor_llm_tokens_total",
                "Tokens of chat turns' LLM requests, by chat model and kind (prompt, completion, or estimated: the part of both that bor estimated because the server reported none).",
            ),
            &["model", "kind"],
        )?;
        let recoveries = IntCounterVec::new(
            Opts::new(
                "bor_turn_recoveries_total",
                "Recovery requests after a reply of only scaffolding, by result (recovered or malformed).",
            ),
            &["result"],
        )?;
        let scaffold_stripped = IntCounter::new(
            "bor_scaffold_stripped_chars_total",
            "Characters of model scaffolding removed from answers.",
        )?;
        let tool_calls = IntCounterVec::new(
            Opts::new(
                "bor_tool_calls_total",
                "Tool calls made by the model, by tool (unknown for names bor does not offer).",
            ),
            &["tool"],
        )?;
        let first_delta = Histogram::with_opts(
            HistogramOpts::new(
                "bor_turn_first_delta_seconds",
                "Time from the start of a turn to its first delta frame.",
            )
            .buckets(FIRST_DELTA_BUCKETS.to_vec()),
        )?;
        let turn_duration = HistogramVec::new(
            HistogramOpts::new(
                "bor_turn_duration_seconds",
                "Duration of chat turns, by outcome.",
            )
            .buckets(TURN_BUCKETS.to_vec()),
            &["outcome"],
        )?;
        let turn_phases = HistogramVec::new(
            HistogramOpts::new(
                "bor_turn_phase_seconds",
                "Time chat turns spent in each phase (embedding, retrieving, reranking, chatting, running_tools).",
            )
            .buckets(PHASE_BUCKETS.to_vec()),
            &["phase"],
        )?;
        let turns_in_flight = IntGauge::new("bor_turns_in_flight", "Chat turns running now.")?;
        let llm_requests = HistogramVec::new(
            HistogramOpts::new(
                "bor_llm_request_duration_seconds",
                "Attempts of requests to the LLM server, to their last byte, by endpoint and status.",
            )
            .buckets(LLM_BUCKETS.to_vec()),
            &["endpoint", "status"],
        )?;
        let log_queue = IntGauge::new(
            "bor_log_queue_depth",
            "query_log rows waiting to be written.",
        )?;
        let log_refused = IntCounter::new(
            "bor_log_rows_refused_total",
            "query_log rows given up because the database refused them.",
        )?;
        let log_dropped = IntCounter::new(
            "bor_log_rows_dropped_total",
            "query_log rows given up because the queue was full (an outage longer than the queue).",
        )?;
        let log_written = IntCounter::new("bor_log_rows_written_total", "query_log rows written.")?;
        let turns_refused = IntCounterVec::new(
            Opts::new(
                "bor_turns_refused_total",
                "Chat turns refused before they started, by reason (slots: every turn slot taken, 503 busy; log_backlog: the rows waiting to be written passed the high-water mark, 503 busy; quota: a limit on turns or tokens reached, 429 quota_exceeded).",
            ),
            &["reason"],
        )?;
        let db_pool = IntGaugeVec::new(
            Opts::new(
                "bor_db_pool_connections",
                "Database pool: max (size limit), open, idle (available) and waiting (requests waiting for a connection).",
            ),
            &["state"],
        )?;
        let feedback = IntCounterVec::new(
            Opts::new(
                "bor_feedback_total",
                "Ratings given to turns (each one given or changed), by rating and reason (`none` without one).",
            ),
            &["rating", "reason"],
        )?;
        let mcp_calls = IntCounterVec::new(
            Opts::new(
                "bor_mcp_calls_total",
                "MCP tool calls on /mcp, by tool (unknown for names bor does not offer) and outcome (ok, tool_error: the tool refused the arguments or found nothing, unavailable: a dependency failed).",
            ),
            &["tool", "outcome"],
        )?;
        let mcp_call_duration = HistogramVec::new(
            HistogramOpts::new(
                "bor_mcp_call_duration_seconds",
                "Time an MCP tool call on /mcp took, from its parsed request to its result, by tool.",
            )
            .buckets(PHASE_BUCKETS.to_vec()),
            &["tool"],
        )?;
        registry.register(Box::new(turns.clone()))?;
        registry.register(Box::new(turn_errors.clone()))?;
        registry.register(Box::new(turn_retries.clone()))?;
        registry.register(Box::new(llm_tokens.clone()))?;
        registry.register(Box::new(recoveries.clone()))?;
        registry.register(Box::new(scaffold_stripped.clone()))?;
        registry.register(Box::new(tool_calls.clone()))?;
        registry.register(Box::new(first_delta.clone()))?;
        registry.register(Box::new(turn_duration.clone()))?;
        registry.register(Box::new(turn_phases.clone()))?;
        registry.register(Box::new(turns_in_flight.clone()))?;
        registry.register(Box::new(llm_requests.clone()))?;
        registry.register(Box::new(log_queue.clone()))?;
        registry.register(Box::new(log_refused.clone()))?;
        registry.register(Box::new(log_dropped.clone()))?;
        registry.register(Box::new(log_written.clone()))?;
        registry.register(Box::new(turns_refused.clone()))?;
        let turns_kept = IntGauge::new(
            "bor_turns_kept",
            "Chat turns whose frames the frame hub keeps for their readers, running or within the replay window.",
        )?;
        let frames_kept_bytes = IntGauge::new(
            "bor_turn_frames_kept_bytes",
            "Roughly the bytes of the frames the frame hub keeps.",
        )?;
        let history_reads = IntCounterVec::new(
            Opts::new(
                "bor_history_reads_total",
                "Conversation histories read for the turns that continue them, by where from: `cache` (this instance's history cache) or `database`.",
            ),
            &["from"],
        )?;
        let history_cache = IntGaugeVec::new(
            Opts::new(
                "bor_history_cache",
                "What this instance's history cache holds: `histories`, and the `bytes` of their questions and answers.",
            ),
            &["measure"],
        )?;
        registry.register(Box::new(history_reads.clone()))?;
        registry.register(Box::new(history_cache.clone()))?;
        registry.register(Box::new(db_pool.clone()))?;
        registry.register(Box::new(feedback.clone()))?;
        registry.register(Box::new(mcp_calls.clone()))?;
        registry.register(Box::new(mcp_call_duration.clone()))?;
        registry.register(Box::new(turns_kept.clone()))?;
        registry.register(Box::new(frames_kept_bytes.clone()))?;
        Ok(Metrics {
            registry,
            turns,
            turn_errors,
            turn_retries,
            llm_tokens,
            recoveries,
            scaffold_stripped,
            tool_calls,
            first_delta,
            turn_duration,
            turn_phases,
            turns_in_flight,
            llm_requests,
            log_queue,
            log_refused,
            log_dropped,
            log_written,
            turns_refused,
            db_pool,
            feedback,
            mcp_calls,
            mcp_call_duration,
            turns_kept,
            frames_kept_bytes,
            history_reads,
            history_cache,
        })
    }

    /// Counts a finished turn.
    pub fn observe_turn(&self, record: &TurnRecord) {
        let outcome = match record.outcome {
            TurnOutcome::Done => "done",
            TurnOutcome::Stopped => "stopped",
            TurnOutcome::Error(code) => {
                self.turn_errors.with_label_values(&[code.as_str()]).inc();
                "error"
            }
        };
        self.turns
            .with_label_values(&[outcome, record.path.as_str()])
            .inc();
        self.turn_retries.inc_by(u64::from(record.retries));
        let usage = record.usage;
        let model = record.chat_model.as_str();
        self.llm_tokens
            .with_label_values(&[model, "prompt"])
            .inc_by(usage.prompt_tokens);
        self.llm_tokens
            .with_label_values(&[model, "completion"])
            .inc_by(usage.completion_tokens);
        if usage.estimated {
            self.llm_tokens
                .with_label_values(&[model, "estimated"])
                .inc_by(usage.total());
        }
        self.scaffold_stripped.inc_by(record.scaffold_stripped);
        if record.recovered {
            self.recoveries.with_label_values(&["recovered"]).inc();
        }
        if record.outcome == TurnOutcome::Error(ErrorCode::MalformedReply) {
            self.recoveries.with_label_values(&["malformed"]).inc();
        }
        if let Some(ms) = record.first_token_ms {
            self.first_delta.observe(ms as f64 / 1000.0);
        }
        self.turn_duration
            .with_label_values(&[outcome])
            .observe(record.elapsed_ms as f64 / 1000.0);
    }

    /// Records the time a turn spent in one phase.
    pub fn observe_turn_phase(&self, phase: &'static str, elapsed: Duration) {
        self.turn_phases
            .with_label_values(&[phase])
            .observe(elapsed.as_secs_f64());
    }

    /// Counts a tool call the model made, by the tool's label (its name when it is one
    /// of bor's tools, else `unknown`, so that invented names add no series).
    pub fn observe_tool_call(&self, tool: &'static str) {
        self.tool_calls.with_label_values(&[tool]).inc();
    }

    /// Counts an MCP tool call and records how long it took: `tool` is the tool's name
    /// when bor offers it, else `unknown`.
    pub fn observe_mcp_call(&self, tool: &'static str, outcome: &'static str, elapsed: Duration) {
        self.mcp_calls.with_label_values(&[tool, outcome]).inc();
        self.mcp_call_duration
            .with_label_values(&[tool])
            .observe(elapsed.as_secs_f64());
    }

    /// Records one attempt of an LLM request.
    pub fn observe_llm_attempt(&self, endpoint: LlmEndpoint, status: &str, elapsed: Duration) {
        self.llm_requests
            .with_label_values(&[endpoint.as_str(), status])
            .observe(elapsed.as_secs_f64());
    }

    pub fn set_turns_in_flight(&self, turns: usize) {
        self.turns_in_flight.set(gauge_value(turns));
    }

    /// Counts a `query_log` row given up because the database refused it.
    pub fn count_refused_row(&self) {
        self.log_refused.inc();
    }

    /// Counts a `query_log` row given up because the queue was full.
    pub fn count_dropped_row(&self) {
        self.log_dropped.inc();
    }

    /// Counts `query_log` rows written.
    pub fn count_written_rows(&self, rows: usize) {
        self.log_written.inc_by(rows as u64);
    }

    /// Counts a turn refused before it started (`slots` or `log_backlog`).
    pub fn count_refused_turn(&self, reason: &'static str) {
        self.turns_refused.with_label_values(&[reason]).inc();
    }

    /// Counts a rating given or changed (`reason` is `none` without one).
    pub fn count_feedback(&self, rating: &str, reason: &str) {
        self.feedback.with_label_values(&[rating, reason]).inc();
    }

    pub fn set_log_queue_depth(&self, rows: usize) {
        self.log_queue.set(gauge_value(rows));
    }

    /// What the frame hub keeps, at scrape time.
    pub fn set_frames_kept(&self, turns: usize, bytes: usize) {
        self.turns_kept.set(gauge_value(turns));
        self.frames_kept_bytes.set(gauge_value(bytes));
    }

    /// Counts a history read for a turn: from the cache, or from the database.
    pub fn count_history_read(&self, from_cache: bool) {
        let from = if from_cache { "cache" } else { "database" };
        self.history_reads.with_label_values(&[from]).inc();
    }

    /// What the history cache holds, at scrape time.
    pub fn set_history_cache(&self, histories: usize, bytes: usize) {
        for (measure, value) in [("histories", histories), ("bytes", bytes)] {
            self.history_cache
                .with_label_values(&[measure])
                .set(gauge_value(value));
        }
    }

    /// The pool's state at scrape time.
    pub fn set_db_pool(&self, max: usize, open: usize, idle: usize, waiting: usize) {
        for (state, value) in [
            ("max", max),
            ("open", open),
            ("idle", idle),
            ("waiting", waiting),
        ] {
            self.db_pool
                .with_label_values(&[state])
                .set(gauge_value(value));
        }
    }

    /// Every metric in the Prometheus text format.
    pub fn encode(&self) -> Result<String, prometheus::Error> {
        let mut buffer = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut buffer)?;
        String::from_utf8(buffer).map_err(|err| prometheus::Error::Msg(err.to_string()))
    }
}

/// The content type of [`Metrics::encode`]'s output.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

fn gauge_value(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use uuid::Uuid;

    use super::*;
    use crate::record::TurnPath;

    fn record(outcome: TurnOutcome, path: TurnPath) -> TurnRecord {
        TurnRecord {
            turn_id: Uuid::new_v4(),
            conversation_id: None,
            user_id: None,
            created_at: Utc::now(),
            question: "q".into(),
            query: "q".into(),
            answer: "a".into(),
            path,
            outcome,
            chat_model: "m".into(),
            rounds: 1,
            tool_calls: 0,
            retries: 2,
            scaffold_stripped: 5,
            recovered: false,
            sources: Vec::new(),
            first_token_ms: Some(120),
            elapsed_ms: 800,
            key_id: None,
            usage: Default::default(),
            version_of: None,
        }
    }

    /// The value of the sample line that starts with `series` (name and labels).
    fn sample(text: &str, series: &str) -> f64 {
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
            .map_or(0.0, |value| value.parse().unwrap())
    }

    #[test]
    fn turns_are_counted_by_outcome_path_and_code() {
        // A registry of its own: the process-wide one is shared by parallel tests.
        let metrics = Metrics::new().unwrap();
        metrics.observe_turn(&record(TurnOutcome::Done, TurnPath::Grounded));
        metrics.observe_turn(&record(
            TurnOutcome::Error(ErrorCode::MalformedReply),
            TurnPath::Deflected,
        ));
        let recovered = TurnRecord {
            recovered: true,
            usage: crate::record::TokenUsage {
                prompt_tokens: 100,
                completion_tokens: 20,
                estimated: true,
            },
            ..record(TurnOutcome::Done, TurnPath::Grounded)
        };
        metrics.observe_turn(&recovered);
        let text = metrics.encode().unwrap();
        assert_eq!(
            sample(&text, r#"bor_turns_total{outcome="done",path="grounded"}"#),
            2.0
        );
        assert_eq!(
            sample(
                &text,
                r#"bor_turns_total{outcome="error",path="deflected"}"#
            ),
            1.0
        );
        assert_eq!(
            sample(&text, r#"bor_turn_errors_total{code="malformed_reply"}"#),
            1.0
        );
        assert_eq!(
            sample(&text, r#"bor_turn_recoveries_total{result="recovered"}"#),
            1.0
        );
        assert_eq!(
            sample(&text, r#"bor_turn_recoveries_total{result="malformed"}"#),
            1.0
        );
        assert_eq!(sample(&text, "bor_turn_retries_total"), 6.0);
        assert_eq!(
            sample(&text, r#"bor_llm_tokens_total{kind="prompt",model="m"}"#),
            100.0
        );
        assert_eq!(
            sample(&text, r#"bor_llm_tokens_total{kind="estimated",model="m"}"#),
            120.0
        );
        assert_eq!(sample(&text, "bor_scaffold_stripped_chars_total"), 15.0);
        assert_eq!(sample(&text, "bor_turn_first_delta_seconds_count"), 3.0);
        assert_eq!(
            sample(&text, r#"bor_turn_first_delta_seconds_bucket{le="0.25"}"#),
            3.0
        );
        assert_eq!(
            sample(&text, r#"bor_turn_duration_seconds_count{outcome="done"}"#),
            2.0
        );
    }

    #[test]
    fn tool_calls_are_counted_by_label() {
        let metrics = Metrics::new().unwrap();
        metrics.observe_tool_call("search_documents");
        metrics.observe_tool_call("unknown");
        metrics.observe_tool_call("unknown");
        let text = metrics.encode().unwrap();
        assert_eq!(
            sample(&text, r#"bor_tool_calls_total{tool="search_documents"}"#),
            1.0
        );
        assert_eq!(
            sample(&text, r#"bor_tool_calls_total{tool="unknown"}"#),
            2.0
        );
    }

    #[test]
    fn llm_attempts_are_labelled_by_endpoint_and_status() {
        let metrics = Metrics::new().unwrap();
        for (endpoint, status) in [
            (LlmEndpoint::Chat, "200"),
            (LlmEndpoint::Embeddings, "connect_error"),
            (LlmEndpoint::Models, "503"),
            (LlmEndpoint::Chat, CANCELLED),
        ] {
            metrics.observe_llm_attempt(endpoint, status, Duration::from_millis(30));
        }
        let text = metrics.encode().unwrap();
        for series in [
            r#"bor_llm_request_duration_seconds_count{endpoint="chat",status="200"}"#,
            r#"bor_llm_request_duration_seconds_count{endpoint="embeddings",status="connect_error"}"#,
            r#"bor_llm_request_duration_seconds_count{endpoint="models",status="503"}"#,
            r#"bor_llm_request_duration_seconds_count{endpoint="chat",status="cancelled"}"#,
        ] {
            assert_eq!(sample(&text, series), 1.0, "{series}\n{text}");
        }
    }

    #[test]
    fn gauges_are_set_at_scrape_time() {
        let metrics = Metrics::new().unwrap();
        metrics.set_turns_in_flight(3);
        metrics.set_log_queue_depth(7);
        metrics.set_db_pool(8, 2, 1, 0);
        metrics.set_frames_kept(2, 4096);
        let text = metrics.encode().unwrap();
        assert_eq!(sample(&text, "bor_turns_in_flight"), 3.0);
        assert_eq!(sample(&text, "bor_turns_kept"), 2.0);
        assert_eq!(sample(&text, "bor_turn_frames_kept_bytes"), 4096.0);
        assert_eq!(sample(&text, "bor_log_queue_depth"), 7.0);
        assert_eq!(
            sample(&text, r#"bor_db_pool_connections{state="max"}"#),
            8.0
        );
        assert_eq!(
            sample(&text, r#"bor_db_pool_connections{state="idle"}"#),
            1.0
        );
    }

    #[test]
    fn the_process_registry_builds() {
        assert!(metrics().encode().unwrap().contains("bor_turns_in_flight"));
    }
}
