//! Behaviour of the filter on the cases docs/PROTOCOL.md ("Scaffolding guardrail") and
//! docs/SCAFFOLDING.md name, and the decisions around them.

use super::{FilterEvent, ScaffoldingFilter};

const TOOLS: &[&str] = &["search_documents", "read_document", "list_documents"];

#[derive(Debug, PartialEq, Eq)]
struct Filtered {
    visible: String,
    thinking: String,
    spans: Vec<String>,
}

fn run(chunks: &[&str], forced_open: bool) -> Filtered {
    let mut filter = ScaffoldingFilter::new(TOOLS, forced_open);
    let mut events = Vec::new();
    for chunk in chunks {
        filter.push(chunk, &mut events);
    }
    filter.finish(&mut events);
    let mut filtered = Filtered {
        visible: String::new(),
        thinking: String::new(),
        spans: Vec::new(),
    };
    for event in events {
        match event {
            FilterEvent::Visible(text) => filtered.visible.push_str(&text),
            FilterEvent::Thinking(text) => filtered.thinking.push_str(&text),
            FilterEvent::Stripped(span) => filtered.spans.push(span),
        }
    }
    assert_eq!(filtered.spans, filter.stripped_spans());
    assert_eq!(
        filter.stripped_chars(),
        filtered
            .spans
            .iter()
            .map(|span| span.chars().count())
            .sum::<usize>()
    );
    filtered
}

/// Filters `input` whole, and checks that char by char gives the same.
fn filter_with(input: &str, forced_open: bool) -> Filtered {
    let whole = run(&[input], forced_open);
    let chars: Vec<&str> = input
        .char_indices()
        .map(|(at, c)| &input[at..at + c.len_utf8()])
        .collect();
    assert_eq!(
        run(&chars, forced_open),
        whole,
        "char by char differs for {input:?}"
    );
    whole
}

fn filter(input: &str) -> Filtered {
    filter_with(input, false)
}

fn kept(input: &str) {
    let filtered = filter(input);
    assert_eq!(filtered.visible, input);
    assert_eq!(filtered.thinking, "");
    assert!(filtered.spans.is_empty(), "stripped {:?}", filtered.spans);
}

fn stripped(input: &str, visible: &str, spans: &[&str]) {
    let filtered = filter(input);
    assert_eq!(filtered.visible, visible, "visible text of {input:?}");
    assert_eq!(filtered.spans, spans, "spans of {input:?}");
}

#[test]
fn clean_text_passes_unchanged_as_one_event_per_push() {
    let text = "Refunds take 30 days: see `policy.md` and [the handbook](https://example.com/h).\n";
    let mut filter = ScaffoldingFilter::new(TOOLS, false);
    let mut events = Vec::new();
    filter.push(text, &mut events);
    assert_eq!(events, [FilterEvent::Visible(text.to_owned())]);
    kept("a < b, c > d, x<y and 1 <= 2; {braces} [brackets] ~tilde~ — 日本 é 🙂");
}

#[test]
fn text_that_may_start_a_marker_is_held_only_until_decided() {
    let mut filter = ScaffoldingFilter::new(TOOLS, false);
    let mut events = Vec::new();
    let mut push = |chunk: &str| {
        filter.push(chunk, &mut events);
        std::mem::take(&mut events)
    };
    assert_eq!(
        push("Let me ca"),
        [FilterEvent::Visible("Let me ".to_owned())]
    );
    assert_eq!(
        push("ll you <"),
        [FilterEvent::Visible("call you ".to_owned())]
    );
    assert_eq!(push(" 3"), [FilterEvent::Visible("< 3".to_owned())]);
    assert_eq!(push(" <tool"), [FilterEvent::Visible(" ".to_owned())]);
    filter.finish(&mut events);
    assert_eq!(events, [FilterEvent::Visible("<tool".to_owned())]);
}

#[test]
fn markup_in_code_is_kept() {
    kept("Use `<tool_call>` and ``a `<think>` b`` here.");
    kept(
        "```xml\n<tool_call>\n{\"name\": \"search_documents\", \"arguments\": {}}\n</tool_call>\n```\nDone.",
    );
    kept("~~~\n<think>x</think>\n~~~\n");
    kept("````\n```\n<|python_tag|>x\n````\nafter");
    kept("  ```python\nprint('<|im_end|>')\n  ```\n");
}

#[test]
fn code_ends_where_markdown_ends_it() {
    stripped(
        "a `b\n<tool_call>x</tool_call>",
        "a `b\n",
        &["<tool_call>x</tool_call>"],
    );
    let filtered = filter("```\n<think>x</think>\n```\nthen <think>y</think>");
    assert_eq!(filtered.visible, "```\n<think>x</think>\n```\nthen ");
    assert_eq!(filtered.thinking, "y");
}

#[test]
fn call_syntax_counts_only_with_a_bor_tool_name() {
    kept(r#"{"name": "Alice", "arguments": 3} and {"host": "db"}"#);
    kept("```json\n{\"name\": \"get_weather\", \"arguments\": {}}\n```");
    kept("```json\n{\"name\": \"search_documents\", \"arguments\": {}}\nmore\n```");
    kept("[get_weather(city=\"Paris\")] call:get_weather{city:Paris} recall:search_documents{x}");
    kept(
        "[search_documents(query=\"x\")](https://example.com) [search_documents(query) usage](https://e.com)",
    );
    stripped(
        r#"Sure. {"name": "read_document", "arguments": {"document_id": 3}} Done."#,
        "Sure.  Done.",
        &[r#"{"name": "read_document", "arguments": {"document_id": 3}}"#],
    );
    stripped(
        r#"[{"name": "list_documents", "arguments": {}}, search_documents(query="a, b)")]"#,
        "",
        &[r#"[{"name": "list_documents", "arguments": {}}, search_documents(query="a, b)")]"#],
    );
    stripped(
        "```\n[search_documents(q='x')]\n```\nok",
        "ok",
        &["```\n[search_documents(q='x')]\n```\n"],
    );
}

/// A message that opens with a tool's name on its own line is a call only when a JSON
/// object follows: a sentence that goes on with braces is prose.
#[test]
fn a_tool_name_on_its_own_line_needs_json_arguments() {
    kept(" search_documents \n {braces} The");
    kept("read_document\n{ see below }");
    stripped(
        "search_documents\n{\"query\": \"refunds\"}",
        "",
        &["search_documents\n{\"query\": \"refunds\"}"],
    );
    stripped("list_documents\n{}", "", &["list_documents\n{}"]);
    // After `>>>` a recipient line is markup whatever follows its brace.
    stripped(
        "Sure.>>>search_documents\n{query: x}",
        "Sure.",
        &[">>>search_documents\n{query: x}"],
    );
}

#[test]
fn an_unterminated_span_is_removed_at_the_end() {
    stripped(
        "Answer. <tool_call>{\"name\"",
        "Answer. ",
        &["<tool_call>{\"name\""],
    );
    stripped(
        r#"{"name": "search_documents", "arguments": {"query": "ref"#,
        "",
        &[r#"{"name": "search_documents", "arguments": {"query": "ref"#],
    );
    kept(r#"{"name": "search_"#);
}

#[test]
fn end_of_turn_residue_is_dropped_without_counting() {
    stripped("Hello.<|im_end|>", "Hello.", &[]);
    stripped(
        "Use <s>old</s> prices.</s>\n",
        "Use <s>old</s> prices.\n",
        &[],
    );
    let filtered = filter("<think>only reasoning</think><|im_end|>");
    assert_eq!(
        (filtered.visible.as_str(), filtered.thinking.as_str()),
        ("", "only reasoning")
    );
    assert!(filtered.spans.is_empty());
}

#[test]
fn reasoning_and_wrappers() {
    let filtered = filter("日本<think>é</think>🙂<response>ok</response>");
    assert_eq!(
        (filtered.visible.as_str(), filtered.thinking.as_str()),
        ("日本🙂ok", "é")
    );
    stripped("a </think> b", "a  b", &[]);
    let forced = filter_with("<think>\nplan\n</think>\n\nAnswer", true);
    assert_eq!(
        (forced.visible.as_str(), forced.thinking.as_str()),
        ("Answer", "\nplan\n")
    );
    let never_closed = filter_with("just an answer", true);
    assert_eq!(
        (
            never_closed.visible.as_str(),
            never_closed.thinking.as_str()
        ),
        ("", "just an answer")
    );
}

#[test]
fn gpt_oss_channels() {
    let filtered = filter(
        "<|channel|>analysis<|message|>think<|start|>assistant<|channel|>final<|message|>Answer<|return|>",
    );
    assert_eq!(
        (filtered.visible.as_str(), filtered.thinking.as_str()),
        ("Answer", "think")
    );
    let glued = filter(
        "analysisWe search.assistantcommentary to=functions.search_documents json{\"query\":\"x\"}",
    );
    assert_eq!(
        (glued.visible.as_str(), glued.thinking.as_str()),
        ("", "We search.")
    );
    assert_eq!(
        glued.spans,
        ["assistantcommentary to=functions.search_documents json{\"query\":\"x\"}"]
    );
    kept("analysis of the data shows a trend.");
    kept("analysis");
}

#[test]
fn position_rules() {
    stripped(
        "Action: ```json\n[]\n```\nok",
        "ok",
        &["Action: ```json\n[]\n```"],
    );
    kept("Next Action: ```json [] ``` stays.");
    kept("myfunctools[x] stays");
    stripped(
        "Done. functools[{}]\nrest",
        "Done. ",
        &["functools[{}]\nrest"],
    );
    kept("The ```tool_call``` word mid-line.");
    // Position rules follow the visible text: removed markup does not end a line.
    let fence = "```json\n{\"name\": \"list_documents\", \"arguments\": {}}\n```";
    stripped(&format!("<think>x</think>{fence}"), "", &[fence]);
    stripped(
        &format!("Intro\n<tool_call>x</tool_call>{fence}"),
        "Intro\n",
        &["<tool_call>x</tool_call>", fence],
    );
}

#[test]
fn leading_whitespace_after_removed_markup_is_tidied_until_the_answer_starts() {
    stripped(
        "<tool_call>x</tool_call>\n\nHello",
        "Hello",
        &["<tool_call>x</tool_call>"],
    );
    stripped(
        "Hi\n<tool_call>x</tool_call>\nthere",
        "Hi\n\nthere",
        &["<tool_call>x</tool_call>"],
    );
    kept("\n\n  indented start");
}

#[test]
fn look_alikes_are_text_and_counts_are_in_scalar_values() {
    kept("<|tool▁calls▁begin|> uses ASCII bars");
    let span = "<｜tool▁calls▁begin｜>x<｜tool▁calls▁end｜>";
    let mut filter = ScaffoldingFilter::new(TOOLS, false);
    let mut events = Vec::new();
    filter.push(span, &mut events);
    filter.finish(&mut events);
    assert_eq!(filter.stripped_chars(), span.chars().count());
    assert!(filter.stripped_chars() < span.len());
}
