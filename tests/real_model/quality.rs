//! Answers a person can trust, with the default local models (Qwen2.5-Coder-0.5B for
//! chat, all-MiniLM-L6-v2 for embeddings, the settings of `scripts/models/qwen.env`) on
//! the sample knowledge base: facts stated, off-topic questions deflected and said to be
//! so, on-topic ones grounded. Greedy decoding (`BOR_LLM_TEMPERATURE=0` there, and the
//! servers' fixed seed) makes each answer the same from run to run.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::json;

use crate::support::*;

/// The questions, shared with `make bench-local-models`.
const QUESTIONS: &str = include_str!("questions.json");
pub const SETTINGS: &str = include_str!("../../scripts/models/qwen.env");
const SAMPLE_KB: [(&str, &str); 3] = [
    (
        "configuration.md",
        include_str!("../../docs/sample-kb/configuration.md"),
    ),
    (
        "guardrails.md",
        include_str!("../../docs/sample-kb/guardrails.md"),
    ),
    (
        "what-is-bor.md",
        include_str!("../../docs/sample-kb/what-is-bor.md"),
    ),
];
pub const ADMIN_TOKEN: &str = "real-model-quality-token";
/// What the deflected prompt makes the model open with.
const NOT_FROM_DOCUMENTS: &str = "not from your documents";

#[derive(Deserialize)]
struct Questions {
    answerable: Vec<Answerable>,
    related: Vec<String>,
    off_topic: Vec<String>,
}

#[derive(Deserialize)]
struct Answerable {
    question: String,
    /// Words, any of which states the fact.
    fact: Vec<String>,
}

fn questions() -> &'static Questions {
    static PARSED: OnceLock<Questions> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(QUESTIONS).expect("questions.json parses"))
}

/// Whether one of `fact`'s words is a word of `answer` (letters, digits and `_`),
/// case-insensitively.
pub fn states_fact(answer: &str, fact: &[String]) -> bool {
    let answer = answer.to_lowercase();
    let words: Vec<&str> = answer
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    fact.iter()
        .any(|alternative| words.contains(&alternative.to_lowercase().as_str()))
}

/// `NAME=value` lines of an env file.
pub fn env_lines(text: &str) -> Vec<(&str, &str)> {
    text.lines()
        .filter(|line| line.starts_with("BOR_"))
        .filter_map(|line| line.split_once('='))
        .collect()
}

/// bor with the default local setup and [`ADMIN_TOKEN`], its answers capped in length.
pub async fn app_with_default_models() -> RealModelApp {
    let mut vars = env_lines(SETTINGS);
    let embeddings = default_embed_server_url();
    vars.extend([
        ("BOR_LLM_EMBED_BASE_URL", embeddings.as_str()),
        ("BOR_ADMIN_TOKEN", ADMIN_TOKEN),
    ]);
    let proxy = RewritingProxy::start(&default_chat_server_url(), cap_answer_length);
    RealModelApp::spawn(&proxy.base_url(), &vars).await
}

/// bor with the default local setup, the sample knowledge base imported through the
/// admin API (so the app's index has it at once).
async fn app_with_sample_kb() -> RealModelApp {
    let app = app_with_default_models().await;
    for (name, content) in SAMPLE_KB {
        let title = content
            .lines()
            .next()
            .unwrap_or(name)
            .trim_start_matches("# ");
        let status = app
            .post_admin_json(
                "/api/admin/documents",
                ADMIN_TOKEN,
                json!({"title": title, "content": content}),
            )
            .await;
        assert_eq!(status, 201, "{name} is imported");
    }
    app
}

#[actix_web::test]
async fn answers_about_the_sample_knowledge_base_state_the_fact_and_are_grounded() {
    let app = app_with_sample_kb().await;
    let mut right = 0;
    let mut report = Vec::new();
    for answerable in &questions().answerable {
        let turn = app.chat(&answerable.question).await;
        turn.assert_one_terminal_frame();
        assert_eq!(turn.last().event, "done", "{:?}", turn.frames);
        assert_eq!(
            turn.last().data["path"],
            "grounded",
            "{}",
            answerable.question
        );
        let answer = turn.deltas();
        let stated = states_fact(&answer, &answerable.fact);
        right += usize::from(stated);
        report.push(format!(
            "{} {:?} -> {answer:?}",
            if stated { "right" } else { "WRONG" },
            answerable.question
        ));
    }
    eprintln!("{}", report.join("\n"));
    assert!(
        right >= 5,
        "{right} of {} answers state their fact:\n{}",
        questions().answerable.len(),
        report.join("\n")
    );
}

#[actix_web::test]
async fn questions_about_the_knowledge_base_in_other_words_are_grounded_with_sources() {
    let app = app_with_sample_kb().await;
    for question in &questions().related {
        let turn = app.chat(question).await;
        turn.assert_one_terminal_frame();
        let done = &turn.last().data;
        assert_eq!(done["path"], "grounded", "{question}: {:?}", turn.frames);
        assert!(
            done["sources"].as_array().is_some_and(|s| !s.is_empty()),
            "{question}: {done}"
        );
        assert!(!turn.deltas().trim().is_empty(), "{question}");
    }
}

#[actix_web::test]
async fn off_topic_questions_are_deflected_and_the_answer_says_it_is_not_from_the_documents() {
    let app = app_with_sample_kb().await;
    let mut said_so = 0;
    let mut report = Vec::new();
    for question in &questions().off_topic {
        let turn = app.chat(question).await;
        turn.assert_one_terminal_frame();
        let done = &turn.last().data;
        assert_eq!(done["path"], "deflected", "{question}: {:?}", turn.frames);
        assert_eq!(done["sources"], json!([]));
        let answer = turn.deltas();
        let says = answer.to_lowercase().contains(NOT_FROM_DOCUMENTS);
        said_so += usize::from(says);
        report.push(format!("{question:?} -> {answer:?}"));
    }
    eprintln!("{}", report.join("\n"));
    assert!(
        said_so >= questions().off_topic.len() - 1,
        "{said_so} of {} deflected answers say they are not from the documents:\n{}",
        questions().off_topic.len(),
        report.join("\n")
    );
}

#[actix_web::test]
async fn the_embedding_server_serves_minilm_vectors() {
    let client = llm_client(&default_embed_server_url());
    let models = client.list_models().await.unwrap();
    assert_eq!(models, vec!["all-minilm-l6-v2".to_owned()]);
    let vectors = client
        .embed(
            EmbedPurpose::Document,
            vec![
                "Refunds are paid to the original card within fourteen days.".to_owned(),
                "How are refunds paid?".to_owned(),
                "The dragon slept on a pile of gold.".to_owned(),
            ],
            |_, _| {},
        )
        .await
        .unwrap();
    assert!(vectors.iter().all(|v| v.len() == 384), "MiniLM's dimension");
    let related = cosine(&vectors[0], &vectors[1]);
    let unrelated = cosine(&vectors[1], &vectors[2]);
    assert!(
        related > 0.5 && unrelated < 0.2,
        "MiniLM separates related from unrelated: {related} vs {unrelated}"
    );
}

#[test]
fn a_fact_is_a_whole_word_of_the_answer() {
    let fact = vec!["5".to_owned(), "five".to_owned()];
    assert!(states_fact("They are 5 seconds apart.", &fact));
    assert!(states_fact("Five.", &fact));
    assert!(!states_fact("Retried 3 times, 15 s apart.", &fact));
    assert!(states_fact(
        "It listens on 127.0.0.1:8000.",
        &["8000".to_owned()]
    ));
}
