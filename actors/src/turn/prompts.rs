//! The system prompts of a turn and the one correction line of the recovery request.

use crate::knowledge::ChunkHit;

/// Appended (after a newline) to the system message of the recovery request
/// (docs/PROTOCOL.md, "Recovery").
pub const CORRECTION_INSTRUCTION: &str = "Your previous reply contained raw tool-call markup, which is not interpreted here. Answer the user's question directly in plain text — no tool syntax.";

/// No example citation is given: a 0.5B model answers with the example itself.
const GROUNDED_INTRO: &str = "You are bor, an assistant that answers questions from the user's own knowledge base. \
Answer in a full sentence from the numbered passages below; if they do not hold the answer, say so plainly. \
Mention the numbers of the passages you used in square brackets.";

const TOOLS_NOTE: &str = "If the context is not enough, you may call the tools search_documents, read_document and list_documents to look further.";

/// Makes the model say first that the answer does not come from the documents (small
/// models follow a given opening far more reliably than "make clear that…").
const DEFLECTED: &str = "You are bor, an assistant for the user's own knowledge base. \
Nothing in the user's documents matches this question. Start your reply with \
\"This is not from your documents:\" and then answer briefly from general knowledge, \
or say that you do not know.";

/// The system message of a grounded turn: instructions and the retrieved chunks, each
/// under its number `[n]` (`numbers[i]` is the number of `hits[i]`).
pub fn grounded_system(hits: &[ChunkHit], numbers: &[u32], tools_offered: bool) -> String {
    let mut prompt = String::from(GROUNDED_INTRO);
    if tools_offered {
        prompt.push(' ');
        prompt.push_str(TOOLS_NOTE);
    }
    prompt.push_str("\n\nPassages:");
    for (hit, n) in hits.iter().zip(numbers) {
        prompt.push_str(&format!("\n\n[{n}] {}", passage_label(hit)));
        prompt.push('\n');
        prompt.push_str(hit.text.trim());
    }
    prompt
}

/// What a passage is shown under: its document, heading and page, and its ids (the
/// tools take them).
fn passage_label(hit: &ChunkHit) -> String {
    let mut label = hit.title.clone();
    if !hit.heading.is_empty() {
        label.push_str(" — ");
        label.push_str(&hit.heading);
    }
    if let Some(page) = hit.page {
        label.push_str(&format!(", page {page}"));
    }
    format!(
        "{label} (document {}, chunk {})",
        hit.document_id, hit.chunk_id
    )
}

/// The system message of a deflected turn.
pub fn deflected_system() -> String {
    DEFLECTED.to_owned()
}

/// The recovery request's system message: the original one plus the correction line.
pub fn with_correction(system: &str) -> String {
    format!("{system}\n{CORRECTION_INSTRUCTION}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grounded_prompt_lists_every_chunk_under_its_number() {
        let hits = vec![
            ChunkHit {
                document_id: 3,
                title: "Refunds".into(),
                chunk_id: 31,
                score: 0.8,
                text: "Refunds take 14 days.\n".into(),
                heading: "Policy › Refunds".into(),
                page: Some(4),
                signals: Default::default(),
            },
            ChunkHit {
                document_id: 4,
                title: "Shipping".into(),
                chunk_id: 40,
                score: 0.5,
                text: "Shipping is free.".into(),
                heading: String::new(),
                page: None,
                signals: Default::default(),
            },
        ];
        let prompt = grounded_system(&hits, &[1, 2], true);
        assert!(
            prompt.contains(
                "[1] Refunds — Policy › Refunds, page 4 (document 3, chunk 31)\nRefunds take 14 days."
            ),
            "{prompt}"
        );
        assert!(prompt.contains("[2] Shipping (document 4, chunk 40)\nShipping is free."));
        assert!(
            prompt.contains("numbers of the passages you used in square brackets"),
            "the model is asked to cite"
        );
        assert!(prompt.contains("search_documents"));
        assert!(!grounded_system(&hits, &[1, 2], false).contains("search_documents"));
    }

    #[test]
    fn correction_is_one_line_after_a_newline() {
        assert_eq!(
            with_correction("sys"),
            format!("sys\n{CORRECTION_INSTRUCTION}")
        );
        assert!(!CORRECTION_INSTRUCTION.contains('\n'));
        assert!(!deflected_system().contains(CORRECTION_INSTRUCTION));
    }

    #[test]
    fn the_deflected_prompt_asks_for_the_not_from_your_documents_opening() {
        let prompt = deflected_system();
        assert!(
            prompt.contains("Start your reply with \"This is not from your documents:\""),
            "{prompt}"
        );
        assert!(!prompt.contains('\n'), "one paragraph: {prompt}");
    }
}
