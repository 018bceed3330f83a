//! The question a turn searches for, from the question asked and its conversation.

use crate::llm::{ChatMessage, Role};

/// What a turn searches for (docs/RETRIEVAL.md, "Follow-up questions"): the question,
/// then the conversation's previous question when there is one and it is another (a
/// question asked again is searched alone), so that a follow-up
/// ("and what is its default?") finds the passage its conversation is about. It costs
/// no request, and on bench/followups it found more than a condensing request did.
pub fn searched_query(question: &str, history: &[ChatMessage]) -> String {
    let previous = history
        .iter()
        .rev()
        .find(|message| message.role == Role::User)
        .and_then(|message| message.content.as_deref())
        .map(str::trim)
        .filter(|previous| !previous.is_empty() && *previous != question.trim());
    match previous {
        Some(previous) => format!("{question}\n{previous}"),
        None => question.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_follow_up_is_searched_with_the_previous_question() {
        assert_eq!(searched_query("What is X?", &[]), "What is X?");
        let history = [
            ChatMessage::user("What does BOR_RETRIEVAL_TOP_K do?"),
            ChatMessage::assistant("It sets how many chunks the model gets."),
        ];
        assert_eq!(
            searched_query("and its default?", &history),
            "and its default?\nWhat does BOR_RETRIEVAL_TOP_K do?"
        );
        let longer = [
            ChatMessage::user("first"),
            ChatMessage::assistant("one"),
            ChatMessage::user("  second  "),
            ChatMessage::assistant("two"),
        ];
        assert_eq!(searched_query("third", &longer), "third\nsecond");
        let blank = [ChatMessage::user("first"), ChatMessage::user(" ")];
        assert_eq!(searched_query("third", &blank), "third");
        let again = [ChatMessage::user("third "), ChatMessage::assistant("three")];
        assert_eq!(searched_query("third", &again), "third", "asked again");
        let answers_only = [ChatMessage::assistant("hello")];
        assert_eq!(searched_query("third", &answers_only), "third");
    }
}
